#!/usr/bin/env bash
# Fuzzes a real mossd through its own OpenAPI document with schemathesis.
#
#   tests/fuzz/run-schemathesis.sh [PATH/TO/mossd]
#
# Starts mossd on 127.0.0.1:0 in a temp MOSS_HOME (tests/interop/lib.sh), fetches
# GET /openapi.json, and runs `st run` against every operation but POST /shutdown, with the
# token, for at most MOSS_FUZZ_SECONDS (default 150) seconds. It fails on any 5xx
# (`not_a_server_error`) and on any refusal that is not the error envelope
# (`refusal_is_the_envelope`, tests/fuzz/hooks.py). Schemathesis comes from
# tests/fuzz/requirements.txt, installed into a venv at
# ${CARGO_TARGET_DIR:-<repo>/target}/fuzz-venv (override: MOSS_FUZZ_VENV).
# Needs no stdin; safe under CI=true.
set -euo pipefail

INTEROP_NAME=run-schemathesis.sh
# shellcheck source=../interop/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/../interop/lib.sh"
HERE="$ROOT/tests/fuzz"
SECONDS_BUDGET="${MOSS_FUZZ_SECONDS:-150}"

interop_resolve_mossd "${1:-}"

PY="${PYTHON:-python3}"
command -v "$PY" >/dev/null 2>&1 || die "no Python interpreter '$PY' (set PYTHON)"
VENV="${MOSS_FUZZ_VENV:-$TARGET_DIR/fuzz-venv}"
REQS="$HERE/requirements.txt"
export PIP_NO_INPUT=1 PIP_DISABLE_PIP_VERSION_CHECK=1 PYTHONDONTWRITEBYTECODE=1
if [[ -x "$VENV/bin/python" ]] && ! "$VENV/bin/python" -c 'import sys' >/dev/null 2>&1; then
    rm -rf "$VENV"
fi
if [[ ! -x "$VENV/bin/python" ]]; then
    mkdir -p "$(dirname "$VENV")"
    "$PY" -m venv "$VENV" || die "cannot create a venv at $VENV with $PY"
fi
STAMP="$VENV/.moss-requirements"
if ! cmp -s "$REQS" "$STAMP"; then
    "$VENV/bin/python" -m pip install -q -r "$REQS" </dev/null || die "pip install -r $REQS failed"
    cp "$REQS" "$STAMP"
fi

interop_start_mossd
SCHEMA="$LOG_DIR/openapi.json"
curl -fsS -H "Authorization: Bearer $MOSS_TOKEN" "$MOSS_ADDR/openapi.json" -o "$SCHEMA" ||
    die "cannot fetch $MOSS_ADDR/openapi.json"
echo "run-schemathesis.sh: mossd $MOSSD (pid $MOSSD_PID) at $MOSS_ADDR; up to ${SECONDS_BUDGET}s"

export SCHEMATHESIS_HOOKS=hooks PYTHONPATH="$HERE${PYTHONPATH:+:$PYTHONPATH}"
# Deterministic data (--seed), no stateful phase (links between operations are not documented),
# failures reported with the request that reproduces them. The request timeout stays above
# capsule_watch's default long poll (30 s), which a request without timeout_ms waits out whole.
interop_run_tests "$VENV/bin/st" run "$SCHEMA" \
    --url "$MOSS_ADDR" \
    --header "Authorization: Bearer $MOSS_TOKEN" \
    --exclude-operation-id shutdown \
    --checks not_a_server_error,refusal_is_the_envelope \
    --phases examples,coverage,fuzzing \
    --max-time "$SECONDS_BUDGET" \
    --workers 2 \
    --seed 1 \
    --request-timeout 45 \
    --suppress-health-check all \
    --no-color
