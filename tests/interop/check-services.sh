#!/usr/bin/env bash
# Checks the service definitions (launchd/dev.moss.mossd.plist, systemd/moss.service): the plist
# with Python's plistlib, the unit by its keys and with `systemd-analyze verify --user` when
# systemd-analyze is installed (skipped, and said so, when not). Files carrying install-time
# placeholders are checked as a rendered copy. With a moss binary, the files its
# `service install --dry-run` prints are checked too. See check_services.py.
#
#   tests/interop/check-services.sh [target/debug/moss]
#
# Python: $PYTHON if set, else python3 (3.10+). Needs no stdin; writes only to a temp dir.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
PY="${PYTHON:-python3}"
command -v "$PY" >/dev/null 2>&1 || {
    echo "check-services.sh: no Python interpreter '$PY' (set PYTHON)" >&2
    exit 1
}
PYTHONDONTWRITEBYTECODE=1 exec "$PY" "$ROOT/tests/interop/check_services.py" "$ROOT" "$@" </dev/null
