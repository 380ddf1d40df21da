#!/usr/bin/env bash
# Interop test: the official MCP Python SDK against a real mossd.
#
#   tests/interop/run-python.sh [PATH/TO/mossd [PATH/TO/moss]]
#
# Default binaries: ${CARGO_TARGET_DIR:-<repo>/target}/debug/mossd (build it with
# `cargo build -p moss-daemon`) and the moss next to it (`cargo build -p moss-cli`), whose
# `moss mcp` stdio bridge test_stdio_bridge.py drives. Creates (or reuses) a venv at
# ${CARGO_TARGET_DIR:-<repo>/target}/interop-venv (override: MOSS_INTEROP_VENV), installs
# tests/interop/python/requirements.txt into it, starts mossd on 127.0.0.1:0 in a temp
# MOSS_HOME, and runs pytest on tests/interop/python/ with MOSS_ADDR, MOSS_TOKEN, MOSS_HOME
# and MOSS_BIN exported. mossd is stopped and the temp home removed on every exit (lib.sh).
# Python: $PYTHON if set, else python3.11, else python3 (3.10+; the mcp SDK needs it).
# Needs no stdin; safe under CI=true.
set -euo pipefail

INTEROP_NAME=run-python.sh
# shellcheck source=lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
HERE="$ROOT/tests/interop/python"

interop_resolve_mossd "${1:-}"
MOSS_BIN="${2:-$(dirname "$MOSSD")/moss}"
if [[ ! -x "$MOSS_BIN" && "$MOSS_BIN" != /* && -x "$ROOT/$MOSS_BIN" ]]; then
    MOSS_BIN="$ROOT/$MOSS_BIN"
fi
[[ -x "$MOSS_BIN" ]] || die "no moss binary at '$MOSS_BIN' (build it: cargo build -p moss-cli)"
MOSS_BIN="$(cd "$(dirname "$MOSS_BIN")" && pwd)/$(basename "$MOSS_BIN")"
export MOSS_BIN

# --- the Python environment ------------------------------------------------------------------
if [[ -n "${PYTHON:-}" ]]; then
    PY="$PYTHON"
elif command -v python3.11 >/dev/null 2>&1; then
    PY=python3.11
else
    PY=python3
fi
command -v "$PY" >/dev/null 2>&1 || die "no Python interpreter '$PY' (set PYTHON)"
"$PY" -c 'import sys; sys.exit(0 if sys.version_info >= (3, 10) else 1)' ||
    die "$PY is $("$PY" -V 2>&1); the mcp SDK needs Python 3.10+ (set PYTHON)"

VENV="${MOSS_INTEROP_VENV:-$TARGET_DIR/interop-venv}"
REQS="$HERE/requirements.txt"
export PIP_NO_INPUT=1 PIP_DISABLE_PIP_VERSION_CHECK=1 PYTHONDONTWRITEBYTECODE=1

if [[ -x "$VENV/bin/python" ]] && ! "$VENV/bin/python" -c 'import sys' >/dev/null 2>&1; then
    echo "run-python.sh: venv at $VENV is broken; recreating it" >&2
    rm -rf "$VENV"
fi
if [[ ! -x "$VENV/bin/python" ]]; then
    mkdir -p "$(dirname "$VENV")"
    "$PY" -m venv "$VENV" || die "cannot create a venv at $VENV with $PY (is the venv module installed?)"
fi
# Reinstall only when requirements.txt changed since the last successful install.
STAMP="$VENV/.moss-requirements"
if ! cmp -s "$REQS" "$STAMP"; then
    "$VENV/bin/python" -m pip install -q -r "$REQS" </dev/null || die "pip install -r $REQS failed"
    cp "$REQS" "$STAMP"
fi

# --- the daemon and the tests ----------------------------------------------------------------
interop_start_mossd
export MOSS_HOME="$MOSS_HOME_DIR"
echo "run-python.sh: mossd $MOSSD (pid $MOSSD_PID) at $MOSS_ADDR; mcp $("$VENV/bin/python" -c 'import importlib.metadata as m; print(m.version("mcp"))')"
interop_run_tests "$VENV/bin/python" -m pytest -q -p no:cacheprovider "$HERE"
