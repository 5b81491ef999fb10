#!/bin/sh
# mwperf's playbook (prepare.yml): the recommended sysctls applied (tune) or put back (restore) on one host,
# as root or through sudo where the user may (sudo -n: never a prompt), else refused saying why. What tune
# changed is kept on the host, in ~/.cache/mwperf/tuned.sysctl (name=value as it was, the first time only):
# restore writes those values back and removes the file. Only sh, coreutils and /proc: no Python there.
# $1: tune | restore; $2: the sysctls, space-separated, each NAME=VALUE:min (at least) or NAME=VALUE:max (at most)
d=$HOME/.cache/mwperf
f=$d/tuned.sysctl
if [ "$1" = restore ] && [ ! -f "$f" ]; then echo "nothing=1"; exit 0; fi
if [ "$(id -u)" = 0 ]; then as=""
elif ! command -v sudo >/dev/null 2>&1; then echo "refused=$(id -un) is not root and sudo is not installed"; exit 3
elif ! sudo -n true >/dev/null 2>&1; then
  echo "refused=$(id -un) is not root and sudo asks for a password (allow it sysctl without one, or log in as root)"; exit 3
else as="sudo -n"; fi
put() {  # put NAME VALUE: the value written, or the reason it was not
  err=$(printf '%s\n' "$2" | $as tee "/proc/sys/$(printf '%s' "$1" | tr . /)" 2>&1 >/dev/null) && return 0
  printf '%s\n' "$err" | tail -n 1 | sed 's/^tee: //'; return 1
}
if [ "$1" = restore ]; then
  left=""
  while IFS= read -r line; do
    name=${line%%=*}; old=${line#*=}
    if why=$(put "$name" "$old"); then echo "restored=$name $old"
    else echo "failed=$name $why"; left="$left$line
"; fi
  done < "$f"
  if [ -z "$left" ]; then rm -f "$f"; rmdir "$d" 2>/dev/null; else printf '%s' "$left" > "$f"; exit 4; fi
  exit 0
fi
if ! mkdir -p "$d" 2>/dev/null || ! touch "$f" 2>/dev/null; then
  echo "refused=cannot keep the values it changes in $f (a read-only home?)"; exit 3
fi
for s in $2; do
  name=${s%%=*}; rest=${s#*=}; want=${rest%%:*}; how=${rest#*:}
  p=/proc/sys/$(printf '%s' "$name" | tr . /)
  if [ ! -r "$p" ]; then echo "absent=$name"; continue; fi
  have=$(cat "$p")
  case $how in
    min) if [ "$have" -ge "$want" ]; then echo "kept=$name $have"; continue; fi;;
    max) if [ "$have" -le "$want" ]; then echo "kept=$name $have"; continue; fi;;
  esac
  if why=$(put "$name" "$want"); then
    grep -q "^$name=" "$f" || echo "$name=$have" >> "$f"
    echo "changed=$name $have $want"
  else echo "failed=$name $why"; fi
done
if [ ! -s "$f" ]; then rm -f "$f"; rmdir "$d" 2>/dev/null; fi
exit 0
