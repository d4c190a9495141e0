#!/usr/bin/env bash
# What the tests need from the machine beyond Python, installed when missing (called by
# `make test` and .ci/run; safe to run again, quick when everything is there):
#
#   - a Docker engine (Debian's docker.io: dockerd + the docker CLI) and debootstrap, for
#     tests/compose (the published docker-compose.yml run for real on stand-in images);
#   - the Docker Compose v2 CLI plugin (`docker compose`). Debian bookworm's docker-compose is
#     1.29, which cannot read the file's top-level `name:`; Debian trixie's docker-compose
#     package is Compose v2 (a static Go binary needing only libc6 >= 2.34), so it is fetched
#     with apt from trixie through a private apt state folder: the machine's own apt sources
#     are left as they are.
#
# As root it installs with apt-get; otherwise it exits 1 naming what to install.
set -euo pipefail

missing=()
command -v dockerd >/dev/null 2>&1 || missing+=(docker.io)
command -v debootstrap >/dev/null 2>&1 || [ -x /usr/sbin/debootstrap ] || missing+=(debootstrap)
compose_ok() { docker compose version >/dev/null 2>&1; }
compose_missing=0
command -v docker >/dev/null 2>&1 && compose_ok || compose_missing=1

if [ "${#missing[@]}" -eq 0 ] && [ "$compose_missing" = 0 ]; then
    exit 0
fi

if [ "$(id -u)" != 0 ]; then
    echo "tests/compose need, and only root can install here:" >&2
    [ "${#missing[@]}" -gt 0 ] && echo "  apt-get install ${missing[*]}" >&2
    [ "$compose_missing" = 0 ] || echo "  the Docker Compose v2 plugin (\`docker compose\`): Debian trixie's docker-compose," \
        "or docker-compose-plugin from Docker's own repository" >&2
    exit 1
fi

export DEBIAN_FRONTEND=noninteractive
apt_install() {
    apt-get install -y -q "$@" >/dev/null \
        || { apt-get update -q >/dev/null && apt-get install -y -q "$@" >/dev/null; }
}

if [ "${#missing[@]}" -gt 0 ]; then
    echo "installing Debian's ${missing[*]} for tests/compose"
    apt_install "${missing[@]}" || { echo "could not install ${missing[*]}" >&2; exit 1; }
fi

if ! compose_ok; then
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
    compose_ok || { echo "\`docker compose\` still does not answer after installing it" >&2; exit 1; }
fi
