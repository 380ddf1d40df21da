#!/usr/bin/env bash
# Interop test: the official MCP TypeScript SDK (@modelcontextprotocol/sdk, pinned in
# tests/interop/typescript/package-lock.json) against a real mossd.
#
#   tests/interop/run-typescript.sh [PATH/TO/mossd]
#
# Default binary: ${CARGO_TARGET_DIR:-<repo>/target}/debug/mossd. Runs `npm ci` in
# tests/interop/typescript, starts mossd on 127.0.0.1:0 in a temp MOSS_HOME, and runs
# `node --test` on mcp-sdk.test.mjs with MOSS_ADDR and MOSS_TOKEN exported. mossd is stopped and
# the temp home removed on every exit (lib.sh). Needs Node 20+ and npm; no stdin; safe under
# CI=true.
set -euo pipefail

INTEROP_NAME=run-typescript.sh
# shellcheck source=lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
HERE="$ROOT/tests/interop/typescript"

interop_resolve_mossd "${1:-}"
interop_npm_ci "$HERE"
interop_start_mossd
echo "run-typescript.sh: mossd $MOSSD (pid $MOSSD_PID) at $MOSS_ADDR; node $(node --version);" \
    "@modelcontextprotocol/sdk $(node -p "require('$HERE/node_modules/@modelcontextprotocol/sdk/package.json').version")"
interop_run_tests node --test "$HERE/mcp-sdk.test.mjs"
