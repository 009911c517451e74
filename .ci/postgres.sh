#!/usr/bin/env bash
# Start a throwaway PostgreSQL cluster for the ledger tests and print the line that points the
# tests at it:   eval "$(bash .ci/postgres.sh)"
#
# Installs PostgreSQL from the Debian packages if it is missing, initialises a cluster in a
# scratch directory (trust authentication, loopback TCP and a private unix socket), starts it on
# a free port and creates the database telic_test. Running it again reuses the running cluster.
# Everything but the final `export` line goes to stderr.
set -euo pipefail

base="${TELIC_CI_POSTGRES_DIR:-${TMPDIR:-/tmp}/telic-ci-postgres}"
data="$base/data"
socket_dir="$base/socket"
log="$base/server.log"
port_file="$base/port"
database="telic_test"

say() { echo "postgres.sh: $*" >&2; }

find_bindir() {
    local dir
    dir="$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1 || true)"
    if [[ -n "$dir" && -x "$dir/initdb" ]]; then
        echo "$dir"
    fi
}

bindir="$(find_bindir)"
if [[ -z "$bindir" ]]; then
    say "installing PostgreSQL from the Debian packages"
    sudo_cmd=()
    if [[ "$(id -u)" != 0 ]]; then sudo_cmd=(sudo); fi
    "${sudo_cmd[@]}" apt-get update -qq >&2
    DEBIAN_FRONTEND=noninteractive "${sudo_cmd[@]}" apt-get install -y -qq postgresql >&2
    bindir="$(find_bindir)"
    [[ -n "$bindir" ]] || { say "PostgreSQL installed but initdb was not found"; exit 1; }
fi

# The server refuses to run as root: run it as the postgres user when we are root.
as_owner() {
    if [[ "$(id -u)" == 0 ]]; then
        runuser -u postgres -- "$@"
    else
        "$@"
    fi
}

free_port() {
    python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

mkdir -p "$base"
if [[ "$(id -u)" == 0 ]]; then chown postgres: "$base"; fi
chmod 0700 "$base"

if [[ ! -f "$data/PG_VERSION" ]]; then
    say "initialising a cluster in $data"
    as_owner mkdir -p "$socket_dir"
    as_owner "$bindir/initdb" -D "$data" -U postgres --auth=trust --encoding=UTF8 --no-locale \
        >"$base/initdb.log" 2>&1 || { cat "$base/initdb.log" >&2; exit 1; }
fi

if ! as_owner "$bindir/pg_ctl" -D "$data" status >/dev/null 2>&1; then
    port="$(free_port)"
    as_owner sh -c "echo $port > '$port_file'"
    say "starting the server on 127.0.0.1:$port"
    as_owner "$bindir/pg_ctl" -D "$data" -l "$log" -w -t 60 start \
        -o "-p $port -k $socket_dir -c listen_addresses=127.0.0.1 -c max_connections=200" >&2 \
        || { cat "$log" >&2; exit 1; }
fi
port="$(cat "$port_file")"

psql_cmd=("$bindir/psql" -h 127.0.0.1 -p "$port" -U postgres -d postgres -v ON_ERROR_STOP=1 -qtA)
if [[ "$("${psql_cmd[@]}" -c "SELECT 1 FROM pg_database WHERE datname = '$database'")" != 1 ]]; then
    say "creating database $database"
    "${psql_cmd[@]}" -c "CREATE DATABASE $database" >&2
fi

echo "export TELIC_TEST_POSTGRES_URL=postgresql://postgres@127.0.0.1:$port/$database"
