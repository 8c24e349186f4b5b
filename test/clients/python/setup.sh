#!/usr/bin/env bash
# Creates test/clients/python/.venv, the Python MCP client's environment for test/clients (pins in
# requirements.txt). Safe to run again: an existing venv is brought to the pins. PYTHON picks the
# interpreter (default python3; mcp 2.x needs 3.10 or later).
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
python="${PYTHON:-python3}"
if [ ! -x "$here/.venv/bin/python" ]; then
  "$python" -m venv "$here/.venv"
fi
# Where pip's default index is out of reach (the pins come from a configured local one), fail over to
# the next index at once instead of retrying it five times per package.
"$here/.venv/bin/python" -m pip install -qq --disable-pip-version-check --retries "${PIP_RETRIES:-0}" --no-deps -r "$here/requirements.txt"
# The pins are the whole closure: fail here, not in the test, if one is missing.
"$here/.venv/bin/python" -m pip check --disable-pip-version-check >/dev/null
"$here/.venv/bin/python" -c 'import mcp.client.streamable_http, mcp.client.session'
