#!/usr/bin/env bash
# Test-only stand-in for docker-library/postgres's docker-entrypoint.sh, with the same phases:
# as root, own the data folder and re-run as `postgres`; on the first start (no PG_VERSION),
# initdb with POSTGRES_USER / POSTGRES_PASSWORD, then a temporary server listening on the Unix
# socket only (listen_addresses='') that creates POSTGRES_DB and runs
# /docker-entrypoint-initdb.d/*.sh|*.sql, then stop it and exec the real server. During that
# first phase `pg_isready` over the socket answers while TCP is refused
# (docker-library/postgres#880).
set -Eeo pipefail

if [ "${1:0:1}" = '-' ]; then
    set -- postgres "$@"
fi

if [ "$1" = postgres ] && [ "$(id -u)" = 0 ]; then
    mkdir -p "$PGDATA"
    find "$PGDATA" \! -user postgres -exec chown postgres:postgres '{}' +
    chmod 700 "$PGDATA"
    mkdir -p /var/run/postgresql
    chown postgres:postgres /var/run/postgresql
    chmod 3777 /var/run/postgresql
    exec gosu postgres "${BASH_SOURCE[0]}" "$@"
fi

if [ "$1" = postgres ] && [ ! -s "$PGDATA/PG_VERSION" ]; then
    : "${POSTGRES_USER:=postgres}"
    : "${POSTGRES_DB:=$POSTGRES_USER}"
    if [ -z "${POSTGRES_PASSWORD:-}" ] && [ "${POSTGRES_HOST_AUTH_METHOD:-}" != trust ]; then
        echo >&2 'Error: Database is uninitialized and superuser password is not specified.'
        echo >&2 '       You must specify POSTGRES_PASSWORD to a non-empty value for the superuser.'
        exit 1
    fi
    initdb --username="$POSTGRES_USER" --pwfile=<(printf '%s\n' "${POSTGRES_PASSWORD:-}") -D "$PGDATA"
    printf '\nhost all all all %s\n' "${POSTGRES_HOST_AUTH_METHOD:-scram-sha-256}" >> "$PGDATA/pg_hba.conf"

    # the first phase: Unix socket only
    PGUSER="$POSTGRES_USER" pg_ctl -D "$PGDATA" -o "-c listen_addresses='' -p 5432" -w start
    psql=(psql -v ON_ERROR_STOP=1 --username "$POSTGRES_USER" --no-password --no-psqlrc)
    if [ "$POSTGRES_DB" != postgres ]; then
        "${psql[@]}" --dbname postgres --set db="$POSTGRES_DB" <<<'CREATE DATABASE :"db";'
    fi
    for f in /docker-entrypoint-initdb.d/*; do
        case "$f" in
            *.sh)
                if [ -x "$f" ]; then echo "running $f"; "$f"; else echo "sourcing $f"; . "$f"; fi ;;
            *.sql) echo "running $f"; "${psql[@]}" --dbname "$POSTGRES_DB" -f "$f" ;;
            *) [ -e "$f" ] && echo "ignoring $f" ;;
        esac
    done
    pg_ctl -D "$PGDATA" -m fast -w stop
    echo 'PostgreSQL init process complete; ready for start up.'
fi

exec "$@"
