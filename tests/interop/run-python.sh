#!/usr/bin/env bash
# Interop test: the official MCP Python SDK against a real mossd.
#
#   tests/interop/run-python.sh [PATH/TO/mossd]
#
# Default binary: ${CARGO_TARGET_DIR:-<repo>/target}/debug/mossd (build it with
# `cargo build -p moss-daemon`). Creates (or reuses) a venv at
# ${CARGO_TARGET_DIR:-<repo>/target}/interop-venv (override: MOSS_INTEROP_VENV), installs
# tests/interop/python/requirements.txt into it, starts mossd on 127.0.0.1:0 in a temp
# MOSS_HOME, and runs pytest on tests/interop/python/ with MOSS_ADDR and
# MOSS_TOKEN exported. mossd is stopped and the temp home removed on every exit.
# Python: $PYTHON if set, else python3.11, else python3 (3.10+; the mcp SDK needs it).
# Needs no stdin; safe under CI=true.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
HERE="$ROOT/tests/interop/python"
TARGET_DIR="${CARGO_TARGET_DIR:-$ROOT/target}"
case "$TARGET_DIR" in /*) ;; *) TARGET_DIR="$ROOT/$TARGET_DIR" ;; esac
STARTUP_TIMEOUT_S="${MOSS_INTEROP_STARTUP_TIMEOUT:-30}"

die() {
    echo "run-python.sh: $*" >&2
    exit 1
}

# --- the daemon binary -----------------------------------------------------------------------
MOSSD="${1:-$TARGET_DIR/debug/mossd}"
if [[ ! -x "$MOSSD" && "$MOSSD" != /* && -x "$ROOT/$MOSSD" ]]; then
    MOSSD="$ROOT/$MOSSD"
fi
[[ -x "$MOSSD" ]] || die "no mossd binary at '$MOSSD' (build it: cargo build -p moss-daemon)"
MOSSD="$(cd "$(dirname "$MOSSD")" && pwd)/$(basename "$MOSSD")"

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

# --- the daemon ------------------------------------------------------------------------------
MOSS_HOME_DIR="$(mktemp -d "${TMPDIR:-/tmp}/moss-interop-home.XXXXXX")"
LOG_DIR="$(mktemp -d "${TMPDIR:-/tmp}/moss-interop-log.XXXXXX")"
MOSSD_OUT="$LOG_DIR/mossd.stdout"
MOSSD_ERR="$LOG_DIR/mossd.stderr"
: >"$MOSSD_OUT"
: >"$MOSSD_ERR"
MOSSD_PID=""

cleanup() {
    local rc=$?
    if [[ -n "$MOSSD_PID" ]] && kill -0 "$MOSSD_PID" 2>/dev/null; then
        kill -TERM "$MOSSD_PID" 2>/dev/null || true
        for _ in $(seq 1 50); do
            kill -0 "$MOSSD_PID" 2>/dev/null || break
            sleep 0.1
        done
        kill -KILL "$MOSSD_PID" 2>/dev/null || true
        wait "$MOSSD_PID" 2>/dev/null || true
    fi
    rm -rf "$MOSS_HOME_DIR" "$LOG_DIR"
    exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

show_mossd_stderr() {
    echo "--- mossd stderr ($MOSSD_ERR) ---" >&2
    tail -n 50 "$MOSSD_ERR" >&2 || true
    echo "--- end of mossd stderr ---" >&2
}

MOSS_HOME="$MOSS_HOME_DIR" "$MOSSD" --addr 127.0.0.1:0 </dev/null >"$MOSSD_OUT" 2>"$MOSSD_ERR" &
MOSSD_PID=$!

# The first stdout line is `listening on http://127.0.0.1:PORT`; wait for it (bounded).
ADDR=""
deadline=$((SECONDS + STARTUP_TIMEOUT_S))
while ((SECONDS < deadline)); do
    # Only a complete (newline-terminated) first line counts.
    if [[ "$(wc -l <"$MOSSD_OUT")" -ge 1 ]]; then
        IFS= read -r first_line <"$MOSSD_OUT"
        ADDR="${first_line#listening on }"
        [[ "$ADDR" != "$first_line" && "$ADDR" == http://* ]] || {
            show_mossd_stderr
            die "unexpected first stdout line from mossd: '$first_line'"
        }
        break
    fi
    if ! kill -0 "$MOSSD_PID" 2>/dev/null; then
        wait "$MOSSD_PID" && status=0 || status=$?
        MOSSD_PID=""
        show_mossd_stderr
        die "mossd exited (status $status) before printing its address"
    fi
    sleep 0.1
done
if [[ -z "$ADDR" ]]; then
    show_mossd_stderr
    die "mossd printed no 'listening on' line within ${STARTUP_TIMEOUT_S}s"
fi

TOKEN_FILE="$MOSS_HOME_DIR/token"
while [[ ! -s "$TOKEN_FILE" ]] && ((SECONDS < deadline)); do sleep 0.1; done
[[ -s "$TOKEN_FILE" ]] || {
    show_mossd_stderr
    die "mossd is listening at $ADDR but wrote no token to $TOKEN_FILE"
}

export MOSS_ADDR="$ADDR"
MOSS_TOKEN="$(tr -d '\r\n' <"$TOKEN_FILE")"
export MOSS_TOKEN
echo "run-python.sh: mossd $MOSSD (pid $MOSSD_PID) at $MOSS_ADDR; mcp $("$VENV/bin/python" -c 'import importlib.metadata as m; print(m.version("mcp"))')"

# --- the tests -------------------------------------------------------------------------------
cd "$ROOT"
if "$VENV/bin/python" -m pytest -q -p no:cacheprovider "$HERE" </dev/null; then
    exit 0
else
    rc=$?
    show_mossd_stderr
    exit "$rc"
fi
