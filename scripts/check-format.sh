#!/usr/bin/env bash
# The agent's C++ as .clang-format says (clang-format 14, Debian 12's). No
# argument: checks every tracked C/C++ file and names those that differ (exit 1);
# --fix: rewrites them (make format).
set -euo pipefail
cd "$(dirname "$0")/.."
mapfile -t files < <(git ls-files 'agent/*.cpp' 'agent/*.h' 'agent/*.hpp' 'agent/*.cc')
if ! command -v clang-format >/dev/null; then
  echo "check-format: clang-format is not installed (scripts/install-deps.sh installs it)" >&2; exit 1
fi
if [ "${1:-}" = --fix ]; then clang-format -i "${files[@]}"; exit 0; fi
bad=()
for f in "${files[@]}"; do
  clang-format --dry-run --Werror "$f" >/dev/null 2>&1 || bad+=("$f")
done
[ ${#bad[@]} -eq 0 ] && exit 0
echo "check-format: not as .clang-format says (make format fixes them): ${bad[*]}" >&2
exit 1
