#!/usr/bin/env bash
# Interop test: the MCP Inspector CLI (@modelcontextprotocol/inspector --cli, pinned in
# tests/interop/inspector/package-lock.json) against a real mossd over streamable HTTP, with
# the token passed as `--header "Authorization: Bearer ..."`.
#
#   tests/interop/run-inspector.sh [PATH/TO/mossd]
#
# Default binary: ${CARGO_TARGET_DIR:-<repo>/target}/debug/mossd. Runs `npm ci` in
# tests/interop/inspector, starts mossd on 127.0.0.1:0 in a temp MOSS_HOME, and runs
# `node --test` on inspector-cli.test.mjs, which runs the inspector once per MCP request and
# checks its JSON output and exit codes. mossd is stopped and the temp home removed on every
# exit (lib.sh). Needs Node 20+ and npm; no stdin; safe under CI=true.
set -euo pipefail

INTEROP_NAME=run-inspector.sh
# shellcheck source=lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
HERE="$ROOT/tests/interop/inspector"

interop_resolve_mossd "${1:-}"
interop_npm_ci "$HERE"
interop_start_mossd
echo "run-inspector.sh: mossd $MOSSD (pid $MOSSD_PID) at $MOSS_ADDR; node $(node --version);" \
    "@modelcontextprotocol/inspector $(node -p "require('$HERE/node_modules/@modelcontextprotocol/inspector/package.json').version")"
interop_run_tests node --test "$HERE/inspector-cli.test.mjs"
