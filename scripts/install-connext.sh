#!/usr/bin/env bash
# Installs RTI Connector for Python (rticonnextdds-connector, PyPI), whose
# wheel carries librtiddsconnector.so and the Connext 6.1.2 core libraries
# (libnddsc, libnddscore) the connext adapter builds against, into a venv the
# project owns, .deps/connext. Idempotent, the version pinned. When it cannot
# (no network, no wheel), it says why and the agent is built without connext
# (`mwperf-agent list` names the reason).
#
# Terms: with a Connext Professional license, that license; otherwise RTI's
# Software License for Non-Commercial Use #4040 (the package's METADATA).
set -uo pipefail
cd "$(dirname "$0")/.."
prefix=".deps/connext"
package="rticonnextdds-connector==1.2.4"
stamp="$prefix/.installed-$package"
[ -f "$stamp" ] && exit 0
echo "install-connext: $package -> $prefix"
if python3 -m venv "$prefix" && "$prefix/bin/pip" install -q --disable-pip-version-check "$package"; then
  touch "$stamp"
else
  echo "install-connext: warning: could not install $package; the agent is built without connext" >&2
fi
exit 0
