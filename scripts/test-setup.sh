#!/usr/bin/env bash
# Everything the test suite needs from the machine beyond Python, installed when missing. Called
# by `make test` (before pytest) and by .ci/run; safe to run again, quick and quiet when
# everything is there (only bash builtins and, when docker is there, `docker compose version`).
#
#   tool                              Debian package       used by
#   chromium                          chromium + fonts-dejavu-core  tests/web (headless, playwright)
#   pgbouncer                         pgbouncer            tests/infra (issue 18: the pooler test)
#   redis-server                      redis-server         tests/infra (the shared rate limit)
#   PostgreSQL server binaries        postgresql           tests/infra/cluster.py (initdb, pg_ctl,
#     (initdb, pg_ctl, pg_basebackup)                      pg_basebackup), .ci/run's own server
#   systemd-analyze                   systemd              tests/client/test_cli_service.py
#   docker, dockerd                   docker.io            tests/compose
#   docker compose (Compose v2)       trixie's docker-compose  tests/compose (see below)
#   debootstrap                       debootstrap          tests/compose (stand-in images)
#
# Debian bookworm's docker-compose is 1.29, which cannot read the file's top-level `name:`;
# Debian trixie's docker-compose package is Compose v2 (a static Go binary needing only
# libc6 >= 2.34), so it is fetched with apt from trixie through a private apt state folder: the
# machine's own apt sources are left as they are.
#
# As root with apt-get it installs what is missing (`apt-get update` only when an install fails
# first); otherwise it exits 1 before the suite, one line per missing tool naming its package.
# `--check` installs nothing: it prints one line per missing tool (what it would install) and
# exits 1 when anything is missing, else says nothing is missing and exits 0.
#
# Where it looks: PATH, then $LOOMSYNC_SETUP_SBIN (default /usr/local/sbin:/usr/sbin:/sbin,
# Debian's daemons, often off a non-root PATH); the server binaries in $LOOMSYNC_PG_BIN, then
# $LOOMSYNC_SETUP_PG_ROOT/*/bin (default /usr/lib/postgresql, as tests/infra/cluster.py looks),
# then `pg_config --bindir`; Chromium at $LOOMSYNC_CHROMIUM, then on PATH (as tests/web do).
# tests/test_setup_script.py empties these to hide the machine's tools.
set -euo pipefail

check_only=0
case "${1:-}" in
    --check | --dry-run) check_only=1 ;;
    "") ;;
    *) echo "usage: $0 [--check]" >&2; exit 2 ;;
esac

sbin="${LOOMSYNC_SETUP_SBIN-/usr/local/sbin:/usr/sbin:/sbin}"
pg_root="${LOOMSYNC_SETUP_PG_ROOT-/usr/lib/postgresql}"

has() {  # has NAME: NAME is on PATH or in one of $sbin's folders
    local folder folders
    command -v "$1" >/dev/null 2>&1 && return 0
    IFS=: read -r -a folders <<<"$sbin"
    for folder in "${folders[@]}"; do
        [ -n "$folder" ] && [ -x "$folder/$1" ] && return 0
    done
    return 1
}

server_bin_in() {  # server_bin_in FOLDER: FOLDER holds initdb, pg_ctl and pg_basebackup
    [ -x "$1/initdb" ] && [ -x "$1/pg_ctl" ] && [ -x "$1/pg_basebackup" ]
}

has_server() {
    local folder
    [ -n "${LOOMSYNC_PG_BIN:-}" ] && server_bin_in "$LOOMSYNC_PG_BIN" && return 0
    if [ -n "$pg_root" ]; then
        for folder in "$pg_root"/*/bin; do
            server_bin_in "$folder" && return 0
        done
    fi
    has pg_config && server_bin_in "$(pg_config --bindir 2>/dev/null)" && return 0
    return 1
}

has_chromium() {
    [ -n "${LOOMSYNC_CHROMIUM:-}" ] && [ -x "$LOOMSYNC_CHROMIUM" ] && return 0
    has chromium
}

has_compose() { has docker && docker compose version >/dev/null 2>&1; }

# One entry per tool: "name|packages|test". The packages are what apt-get installs.
tools=(
    "chromium|chromium fonts-dejavu-core|has_chromium"
    "pgbouncer|pgbouncer|has pgbouncer"
    "redis-server|redis-server|has redis-server"
    "PostgreSQL server binaries (initdb, pg_ctl, pg_basebackup)|postgresql|has_server"
    "systemd-analyze|systemd|has systemd-analyze"
    "docker|docker.io|has docker"
    "dockerd|docker.io|has dockerd"
    "debootstrap|debootstrap|has debootstrap"
)
COMPOSE_NAME="docker compose (Compose v2)"
COMPOSE_HOW="Debian trixie's docker-compose, or docker-compose-plugin from Docker's own repository"

missing_names=() missing_packages=()
collect() {
    local entry name packages probe
    missing_names=() missing_packages=()
    for entry in "${tools[@]}"; do
        IFS='|' read -r name packages probe <<<"$entry"
        if ! $probe; then
            missing_names+=("$name")
            missing_packages+=("$packages")
        fi
    done
    compose_missing=0
    has_compose || compose_missing=1
}

report() {  # one line per missing tool, on stdout
    local i
    for i in "${!missing_names[@]}"; do
        echo "missing: ${missing_names[$i]} (apt-get install ${missing_packages[$i]})"
    done
    [ "$compose_missing" = 0 ] || echo "missing: $COMPOSE_NAME ($COMPOSE_HOW)"
}

collect
if [ "${#missing_names[@]}" -eq 0 ] && [ "$compose_missing" = 0 ]; then
    [ "$check_only" = 0 ] || echo "nothing missing: the test suite has every tool it needs"
    exit 0
fi

if [ "$check_only" = 1 ]; then
    report
    exit 1
fi

if [ "$EUID" != 0 ] || ! has apt-get; then
    report >&2
    echo "the tests need these; run \`make test\` as root on Debian/Ubuntu to have them" \
        "installed, or install them yourself (the suite did not run)" >&2
    exit 1
fi

export DEBIAN_FRONTEND=noninteractive
apt_install() {
    apt-get install -y -q "$@" >/dev/null \
        || { apt-get update -q >/dev/null && apt-get install -y -q "$@" >/dev/null; }
}

# Each tool's packages on their own: one that cannot be installed here does not stop the
# others (what is still missing is named at the end).
done_packages=" "
for i in "${!missing_names[@]}"; do
    read -r -a packages <<<"${missing_packages[$i]}"
    [[ "$done_packages" == *" ${packages[0]} "* ]] && continue  # docker and dockerd: one package
    done_packages+="${packages[*]} "
    echo "installing ${packages[*]} for the tests (missing: ${missing_names[$i]})"
    apt_install "${packages[@]}" || echo "could not install ${packages[*]}" >&2
done

if ! has_compose; then
    echo "installing the Docker Compose v2 plugin (Debian trixie's docker-compose) for tests/compose"
    state="$(mktemp -d)"
    trap 'rm -rf "$state"' EXIT
    mirror="$(sed -n 's/^URIs:[[:space:]]*\(http[^[:space:]]*\/debian\)[[:space:]]*$/\1/p' \
        /etc/apt/sources.list.d/*.sources 2>/dev/null | head -n 1)"
    mirror="${mirror:-http://deb.debian.org/debian}"
    echo "deb [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] $mirror trixie main" \
        > "$state/sources.list"
    mkdir -p "$state/lists/partial" "$state/cache/archives/partial"
    private=(-o "Dir::Etc::SourceList=$state/sources.list" -o Dir::Etc::SourceParts=/dev/null
        -o "Dir::State::Lists=$state/lists" -o "Dir::Cache=$state/cache"
        -o APT::Sandbox::User=root)  # the private folder is root's (mktemp -d: 0700)
    apt-get "${private[@]}" update -q >/dev/null
    (cd "$state" && apt-get "${private[@]}" download docker-compose >/dev/null 2>&1)
    apt-get install -y -q "$state"/docker-compose_*.deb >/dev/null \
        || { echo "could not install trixie's docker-compose (Compose v2)" >&2; exit 1; }
fi

collect
if [ "${#missing_names[@]}" -gt 0 ] || [ "$compose_missing" = 1 ]; then
    echo "still missing after installing:" >&2
    report >&2
    exit 1
fi
