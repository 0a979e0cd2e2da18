#!/usr/bin/env bash
# Make the services the integration tests need available on loopback, idempotently:
#   PostgreSQL  127.0.0.1:5432, role postgres (trust, CREATEDB), database "test"
#   Redis       127.0.0.1:6379
#   Chromium    /usr/bin/chromium (Debian's package; browsers are never downloaded otherwise)
#   Varnish     varnishd and the xkey vmod (Debian's varnish, varnish-modules); not started:
#               tests and benchmarks start their own (bench/varnish.py)
# Each is checked first; only what is missing is installed (apt-get) and only what is down
# is started. Fails with one clear line per problem.
set -euo pipefail

WAIT_SECONDS="${SERVICES_WAIT_SECONDS:-60}"
export DEBIAN_FRONTEND=noninteractive

SUDO=""
if [ "$(id -u)" -ne 0 ]; then
    if command -v sudo >/dev/null 2>&1; then SUDO="sudo"; fi
fi

say() { printf 'services: %s\n' "$*"; }
die() { printf 'services: ERROR: %s\n' "$*" >&2; exit 1; }

# Install the Debian packages for whatever is missing, with one apt-get update.
install_missing() {
    local packages=() wanted=" $* "
    if [[ "$wanted" == *" postgres "* ]] \
        && { ! command -v pg_isready >/dev/null 2>&1 || ! command -v pg_ctlcluster >/dev/null 2>&1; }; then
        packages+=(postgresql)
    fi
    if [[ "$wanted" == *" redis "* ]] \
        && { ! command -v redis-server >/dev/null 2>&1 || ! command -v redis-cli >/dev/null 2>&1; }; then
        packages+=(redis-server)
    fi
    if [[ "$wanted" == *" chromium "* ]] && [ ! -x /usr/bin/chromium ]; then
        packages+=(chromium)
    fi
    if [[ "$wanted" == *" varnish "* ]] && ! varnish_installed; then
        packages+=(varnish varnish-modules)
    fi
    # `ip` (network namespaces) for the multi-machine test, which runs as root only.
    if [[ "$wanted" == *" postgres "* ]] && [ "$(id -u)" -eq 0 ] && ! command -v ip >/dev/null 2>&1; then
        packages+=(iproute2)
    fi
    [ "${#packages[@]}" -gt 0 ] || return 0
    command -v apt-get >/dev/null 2>&1 || die "apt-get not found; install ${packages[*]} yourself."
    say "apt-get update"
    $SUDO apt-get update -qq || die "apt-get update failed (needed to install ${packages[*]})."
    say "apt-get install -y ${packages[*]}"
    $SUDO apt-get install -y -qq "${packages[@]}" >/dev/null \
        || die "apt-get install ${packages[*]} failed."
}

# varnishd and the xkey vmod (from varnish-modules) of the test's VCL.
varnish_installed() {
    command -v varnishd >/dev/null 2>&1 || return 1
    local vmod
    for vmod in /usr/lib/*/varnish/vmods/libvmod_xkey.so /usr/lib/varnish/vmods/libvmod_xkey.so; do
        [ -e "$vmod" ] && return 0
    done
    return 1
}

# wait_for DESCRIPTION COMMAND...: retry COMMAND until it succeeds or WAIT_SECONDS pass.
wait_for() {
    local what="$1"
    shift
    local deadline=$((SECONDS + WAIT_SECONDS))
    until "$@" >/dev/null 2>&1; do
        if [ "$SECONDS" -ge "$deadline" ]; then
            die "$what did not become ready within ${WAIT_SECONDS}s."
        fi
        sleep 0.5
    done
}

# --- PostgreSQL -------------------------------------------------------------------------
pg_up() { pg_isready -q -h 127.0.0.1 -p 5432; }
pg_sql() { psql -h 127.0.0.1 -p 5432 -U postgres -w -v ON_ERROR_STOP=1 -At "$@"; }
pg_sql_as_owner() {
    # Over the local socket as the postgres OS user (peer auth), for fixing access.
    if [ "$(id -un)" = postgres ]; then psql -v ON_ERROR_STOP=1 -At "$@"; else
        $SUDO runuser -u postgres -- psql -v ON_ERROR_STOP=1 -At "$@"
    fi
}

ensure_postgres() {
    command -v pg_ctlcluster >/dev/null 2>&1 || die "PostgreSQL is not installed (package postgresql)."
    if ! pg_up; then
        local version
        version="$(ls /etc/postgresql 2>/dev/null | sort -V | tail -n 1)"
        if [ -z "$version" ]; then
            version="$(ls /usr/lib/postgresql | sort -V | tail -n 1)"
            [ -n "$version" ] || die "PostgreSQL is installed but no server version was found."
            say "creating PostgreSQL $version cluster main"
            $SUDO pg_createcluster "$version" main >/dev/null \
                || die "pg_createcluster $version main failed."
        fi
        say "starting PostgreSQL $version"
        $SUDO pg_ctlcluster --skip-systemctl-redirect "$version" main start \
            || die "PostgreSQL $version did not start (pg_ctlcluster $version main start)."
        wait_for "PostgreSQL on 127.0.0.1:5432" pg_up
    fi
    if ! pg_sql -d postgres -c "select 1" >/dev/null 2>&1; then
        # A fresh Debian cluster asks for a password over TCP: trust loopback, as in CI.
        say "allowing trust access for user postgres on 127.0.0.1"
        local hba
        hba="$(pg_sql_as_owner -c 'show hba_file')" \
            || die "cannot reach PostgreSQL as the postgres OS user to fix pg_hba.conf."
        $SUDO sed -i '1i host all postgres 127.0.0.1/32 trust\nhost all postgres ::1/128 trust' \
            "$hba"
        pg_sql_as_owner -c 'select pg_reload_conf()' >/dev/null
        sleep 1
        pg_sql -d postgres -c "select 1" >/dev/null \
            || die "cannot connect as postgres@127.0.0.1:5432 without a password."
    fi
    if [ "$(pg_sql -d postgres -c "select rolsuper or rolcreatedb from pg_roles where rolname = 'postgres'")" != t ]; then
        pg_sql -d postgres -c "alter role postgres createdb" >/dev/null \
            || die "role postgres cannot create databases (needed for the test database)."
    fi
    if [ -z "$(pg_sql -d postgres -c "select 1 from pg_database where datname = 'test'")" ]; then
        say "creating database test"
        pg_sql -d postgres -c "create database test" >/dev/null || die "cannot create database test."
    fi
    say "PostgreSQL ready on 127.0.0.1:5432 (database test)"
}

# --- Redis ------------------------------------------------------------------------------
redis_up() { [ "$(redis-cli -h 127.0.0.1 -p 6379 ping 2>/dev/null)" = PONG ]; }

ensure_redis() {
    command -v redis-server >/dev/null 2>&1 || die "Redis is not installed (package redis-server)."
    if ! redis_up; then
        say "starting Redis"
        $SUDO mkdir -p /var/lib/redis /var/log/redis
        # The broker must never lose queued tasks: no eviction (Redis's default, made explicit).
        $SUDO redis-server --daemonize yes --bind 127.0.0.1 --port 6379 --save "" \
            --appendonly no --maxmemory-policy noeviction --dir /var/lib/redis \
            --logfile /var/log/redis/ci.log \
            || die "Redis did not start (see /var/log/redis/ci.log)."
        wait_for "Redis on 127.0.0.1:6379" redis_up
    fi
    say "Redis ready on 127.0.0.1:6379"
}

# --- Chromium ---------------------------------------------------------------------------
ensure_chromium() {
    [ -x /usr/bin/chromium ] || die "/usr/bin/chromium is missing (package chromium)."
    say "Chromium ready at /usr/bin/chromium"
}

# --- Varnish ----------------------------------------------------------------------------
ensure_varnish() {
    varnish_installed || die "varnishd or its xkey vmod is missing (packages varnish, varnish-modules)."
    say "Varnish ready ($(command -v varnishd), with xkey)"
}

# Arguments choose services (postgres, redis, chromium, varnish); none means all four.
wanted=("$@")
[ "${#wanted[@]}" -gt 0 ] || wanted=(postgres redis chromium varnish)
install_missing "${wanted[@]}"
for service in "${wanted[@]}"; do
    case "$service" in
        postgres) ensure_postgres ;;
        redis) ensure_redis ;;
        chromium) ensure_chromium ;;
        varnish) ensure_varnish ;;
        *) die "unknown service '$service' (expected postgres, redis, chromium or varnish)" ;;
    esac
done
