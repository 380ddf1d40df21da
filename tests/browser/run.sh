#!/usr/bin/env bash
# Browser test: the web UI in headless Chromium (Debian's /usr/bin/chromium), driven by
# playwright-core (pinned in tests/browser/package-lock.json), against a real mossd.
#
#   tests/browser/run.sh [PATH/TO/mossd] [PATH/TO/moss]
#
# Default binaries: ${CARGO_TARGET_DIR:-<repo>/target}/debug/{mossd,moss}. Runs `npm ci` in
# tests/browser, starts mossd on 127.0.0.1:0 in a temp MOSS_HOME (../interop/lib.sh), and runs
# `node --test` on ui.test.mjs, which seeds data over REST with the token, signs in through the
# address `moss ui` prints and walks the pages. Each step leaves a screenshot in
# $MOSS_BROWSER_ARTIFACTS (default ${CARGO_TARGET_DIR:-<repo>/target}/browser-artifacts).
# MOSS_CHROMIUM overrides the browser binary. Needs Node 20+, npm and Chromium; no stdin; safe
# under CI=true. Exits non-zero when any check fails.
set -euo pipefail

INTEROP_NAME=browser/run.sh
# shellcheck source=../interop/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/../interop/lib.sh"
HERE="$ROOT/tests/browser"

interop_resolve_mossd "${1:-}"
MOSS_BIN="${2:-$TARGET_DIR/debug/moss}"
if [[ ! -x "$MOSS_BIN" && "$MOSS_BIN" != /* && -x "$ROOT/$MOSS_BIN" ]]; then
    MOSS_BIN="$ROOT/$MOSS_BIN"
fi
[[ -x "$MOSS_BIN" ]] || die "no moss binary at '$MOSS_BIN' (build it: cargo build -p moss-cli)"
MOSS_BIN="$(cd "$(dirname "$MOSS_BIN")" && pwd)/$(basename "$MOSS_BIN")"

CHROMIUM="${MOSS_CHROMIUM:-/usr/bin/chromium}"
[[ -x "$CHROMIUM" ]] ||
    die "no Chromium at $CHROMIUM (Debian: apt-get install chromium; or set MOSS_CHROMIUM)"

ARTIFACTS="${MOSS_BROWSER_ARTIFACTS:-$TARGET_DIR/browser-artifacts}"
case "$ARTIFACTS" in /*) ;; *) ARTIFACTS="$ROOT/$ARTIFACTS" ;; esac
mkdir -p "$ARTIFACTS"
# Only this run's screenshots are left to look at.
rm -f "$ARTIFACTS"/*.png

interop_npm_ci "$HERE"
interop_start_mossd
export MOSS_BIN CHROMIUM
export MOSS_BROWSER_ARTIFACTS="$ARTIFACTS"
# `moss ui` reads the token from this home and talks to this daemon only.
export MOSS_HOME="$MOSS_HOME_DIR" MOSS_NO_AUTOSTART=1
echo "browser/run.sh: mossd $MOSSD (pid $MOSSD_PID) at $MOSS_ADDR; $("$CHROMIUM" --version 2>/dev/null);" \
    "playwright-core $(node -p "require('$HERE/node_modules/playwright-core/package.json').version");" \
    "screenshots in $ARTIFACTS"
interop_run_tests node --test --test-reporter=spec "$HERE/ui.test.mjs"
