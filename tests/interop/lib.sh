# shellcheck shell=bash
# Shared by the interop runners (run-*.sh); source it, do not run it.
#
#   INTEROP_NAME=run-foo.sh; source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
#   interop_resolve_mossd "${1:-}"     # sets MOSSD (absolute path)
#   interop_npm_ci DIR                 # npm ci there (or reuse node_modules, see below)
#   interop_start_mossd                # exports MOSS_ADDR, MOSS_TOKEN; stopped on exit
#   interop_run_tests CMD...           # runs CMD with no stdin; shows mossd's stderr on failure
#
# One daemon per runner: mossd on 127.0.0.1:0 in a temp MOSS_HOME, its address read from its
# first stdout line and its token from $MOSS_HOME/token. On every exit (success, failure,
# INT, TERM) mossd gets SIGTERM (SIGKILL after 5 s) and the temp dirs are removed.
# Needs no stdin; safe under CI=true.
#
# With MOSS_INTEROP_POSTGRES set (a PostgreSQL server's URL; psql on PATH), the daemon keeps its
# store on that server, in a schema of its own made for the run (dropped on exit).

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
TARGET_DIR="${CARGO_TARGET_DIR:-$ROOT/target}"
case "$TARGET_DIR" in /*) ;; *) TARGET_DIR="$ROOT/$TARGET_DIR" ;; esac
STARTUP_TIMEOUT_S="${MOSS_INTEROP_STARTUP_TIMEOUT:-30}"
INTEROP_NAME="${INTEROP_NAME:-interop}"

MOSSD=""
MOSSD_PID=""
MOSS_HOME_DIR=""
LOG_DIR=""
MOSSD_ERR=""
PG_SCHEMA=""

die() {
    echo "$INTEROP_NAME: $*" >&2
    exit 1
}

interop_cleanup() {
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
    [[ -z "$PG_SCHEMA" ]] ||
        psql -q -X "$MOSS_INTEROP_POSTGRES" -c "DROP SCHEMA $PG_SCHEMA CASCADE" </dev/null >/dev/null 2>&1 || true
    [[ -z "$MOSS_HOME_DIR" ]] || rm -rf "$MOSS_HOME_DIR"
    [[ -z "$LOG_DIR" ]] || rm -rf "$LOG_DIR"
    exit "$rc"
}
trap interop_cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

# The daemon binary: the argument, else ${CARGO_TARGET_DIR:-<repo>/target}/debug/mossd. A
# relative path is tried from the current directory, then from the repo root.
interop_resolve_mossd() {
    MOSSD="${1:-$TARGET_DIR/debug/mossd}"
    if [[ ! -x "$MOSSD" && "$MOSSD" != /* && -x "$ROOT/$MOSSD" ]]; then
        MOSSD="$ROOT/$MOSSD"
    fi
    [[ -x "$MOSSD" ]] || die "no mossd binary at '$MOSSD' (build it: cargo build -p moss-daemon)"
    MOSSD="$(cd "$(dirname "$MOSSD")" && pwd)/$(basename "$MOSSD")"
}

# Installs DIR's package-lock.json exactly (`npm ci`: no audit, no fund, no install scripts,
# cached tarballs first). Outside CI, an existing node_modules installed from the same lockfile
# is reused; CI installs afresh, unless MOSS_INTEROP_REUSE=1 (a second pass of the same run,
# against another store engine, over what the first pass installed).
interop_npm_ci() {
    local dir="$1"
    command -v node >/dev/null 2>&1 || die "node is not installed (the interop tests need Node 20+ and npm)"
    command -v npm >/dev/null 2>&1 || die "npm is not installed (the interop tests need Node 20+ and npm)"
    node -e 'process.exit(Number(process.versions.node.split(".")[0]) >= 20 ? 0 : 1)' ||
        die "node is $(node --version); the interop tests need Node 20+"
    [[ -f "$dir/package-lock.json" ]] || die "no package-lock.json in $dir"
    local stamp="$dir/node_modules/.moss-package-lock.json"
    if [[ "${CI:-}" != "true" || "${MOSS_INTEROP_REUSE:-}" == 1 ]] && cmp -s "$dir/package-lock.json" "$stamp"; then
        echo "$INTEROP_NAME: reusing $dir/node_modules (same package-lock.json)"
        return 0
    fi
    # Quiet but not silent: errors still show. The engine warnings of packages that declare a
    # newer Node than they need are not errors.
    (cd "$dir" && npm ci --no-audit --no-fund --ignore-scripts --prefer-offline \
        --loglevel=error --update-notifier=false </dev/null) || die "npm ci in $dir failed"
    cp "$dir/package-lock.json" "$stamp"
}

interop_show_mossd_stderr() {
    [[ -n "$MOSSD_ERR" ]] || return 0
    echo "--- mossd stderr ($MOSSD_ERR) ---" >&2
    tail -n 50 "$MOSSD_ERR" >&2 || true
    echo "--- end of mossd stderr ---" >&2
}

interop_start_mossd() {
    [[ -n "$MOSSD" ]] || die "interop_resolve_mossd must run before interop_start_mossd"
    MOSS_HOME_DIR="$(mktemp -d "${TMPDIR:-/tmp}/moss-interop-home.XXXXXX")"
    LOG_DIR="$(mktemp -d "${TMPDIR:-/tmp}/moss-interop-log.XXXXXX")"
    local out="$LOG_DIR/mossd.stdout"
    MOSSD_ERR="$LOG_DIR/mossd.stderr"
    : >"$out"
    : >"$MOSSD_ERR"

    if [[ -n "${MOSS_INTEROP_POSTGRES:-}" ]]; then
        command -v psql >/dev/null 2>&1 || die "MOSS_INTEROP_POSTGRES is set but psql is not installed"
        PG_SCHEMA="interop_$$_${RANDOM}"
        psql -q -X -v ON_ERROR_STOP=1 "$MOSS_INTEROP_POSTGRES" -c "CREATE SCHEMA $PG_SCHEMA" </dev/null ||
            die "cannot create schema $PG_SCHEMA on $MOSS_INTEROP_POSTGRES"
        local sep="?"
        [[ "$MOSS_INTEROP_POSTGRES" != *\?* ]] || sep="&"
        printf '{"database": "%s%soptions=-c%%20search_path%%3D%s"}\n' \
            "$MOSS_INTEROP_POSTGRES" "$sep" "$PG_SCHEMA" >"$MOSS_HOME_DIR/config.json"
        echo "$INTEROP_NAME: mossd on PostgreSQL, schema $PG_SCHEMA"
    fi
    MOSS_HOME="$MOSS_HOME_DIR" "$MOSSD" --addr 127.0.0.1:0 </dev/null >"$out" 2>"$MOSSD_ERR" &
    MOSSD_PID=$!

    # The first stdout line is `listening on http://127.0.0.1:PORT`; wait for it (bounded).
    local addr="" first_line status deadline=$((SECONDS + STARTUP_TIMEOUT_S))
    while ((SECONDS < deadline)); do
        # Only a complete (newline-terminated) first line counts.
        if [[ "$(wc -l <"$out")" -ge 1 ]]; then
            IFS= read -r first_line <"$out"
            addr="${first_line#listening on }"
            [[ "$addr" != "$first_line" && "$addr" == http://* ]] || {
                interop_show_mossd_stderr
                die "unexpected first stdout line from mossd: '$first_line'"
            }
            break
        fi
        if ! kill -0 "$MOSSD_PID" 2>/dev/null; then
            wait "$MOSSD_PID" && status=0 || status=$?
            MOSSD_PID=""
            interop_show_mossd_stderr
            die "mossd exited (status $status) before printing its address"
        fi
        sleep 0.1
    done
    if [[ -z "$addr" ]]; then
        interop_show_mossd_stderr
        die "mossd printed no 'listening on' line within ${STARTUP_TIMEOUT_S}s"
    fi

    local token_file="$MOSS_HOME_DIR/token"
    while [[ ! -s "$token_file" ]] && ((SECONDS < deadline)); do sleep 0.1; done
    [[ -s "$token_file" ]] || {
        interop_show_mossd_stderr
        die "mossd is listening at $addr but wrote no token to $token_file"
    }

    export MOSS_ADDR="$addr"
    MOSS_TOKEN="$(tr -d '\r\n' <"$token_file")"
    export MOSS_TOKEN
}

# Runs the test command from the repo root with no stdin; exits with its status, showing the end
# of mossd's stderr first when it failed.
interop_run_tests() {
    cd "$ROOT" || die "cannot cd to $ROOT"
    local rc=0
    "$@" </dev/null || rc=$?
    ((rc == 0)) || interop_show_mossd_stderr
    exit "$rc"
}
