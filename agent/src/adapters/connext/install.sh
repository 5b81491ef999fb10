#!/usr/bin/env bash
# Installs RTI Connector for Python (rticonnextdds-connector, PyPI), whose
# wheel carries librtiddsconnector.so and the Connext 6.1.2 core libraries
# (libnddsc, libnddscore) the connext adapter builds against, into a venv the
# project owns, .deps/connext. Idempotent, the version pinned; without it the
# agent is built without connext (scripts/install-venv-wheels.sh).
#
# Terms: with a Connext Professional license, that license; otherwise RTI's
# Software License for Non-Commercial Use #4040 (the package's METADATA).
cd "$(dirname "$0")/../../../.." || exit 0
exec scripts/install-venv-wheels.sh connext .deps/connext rticonnextdds-connector==1.2.4
