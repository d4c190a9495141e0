# The loomsync server. Build: `docker build -t loomsync-server .`; run it with `docker compose up`
# (README.md), which also starts PostgreSQL and runs the migrations.
#
# The install steps are `make run`'s (Makefile): a venv, `pip install --upgrade pip`, then pip
# install of this project. Two differences, on purpose: no `[dev]` extra (pytest, ruff, mypy … are
# not needed to serve), and a regular `pip install .` rather than `-e`, so the image holds a built
# wheel. The wheel carries migrations/ as app/_migrations (pyproject.toml, force-include), which
# app.database.migrations_dir() finds, so `loomsync-server migrate` works without the source tree.

FROM python:3.11-slim AS build

ENV PIP_NO_CACHE_DIR=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1 \
    PYTHONDONTWRITEBYTECODE=1

WORKDIR /src
# What hatchling needs to build the wheel: the metadata, the README it declares, both packages,
# and the migrations it force-includes. (.dockerignore keeps everything else out of the context.)
COPY pyproject.toml README.md ./
COPY app ./app
COPY loomsync ./loomsync
COPY migrations ./migrations

# The same commands as `make install`, with the venv at /opt/venv. This stage is thrown away: the
# final image gets only /opt/venv, so no build tool, pip cache or source tree reaches it.
RUN python -m venv /opt/venv \
    && /opt/venv/bin/python -m pip install --upgrade pip \
    && /opt/venv/bin/python -m pip install .


FROM python:3.11-slim

ENV PATH=/opt/venv/bin:$PATH \
    PYTHONUNBUFFERED=1 \
    PYTHONDONTWRITEBYTECODE=1

# Never run as root (PostgreSQL, for the embedded mode, refuses to run as root anyway).
RUN groupadd --gid 10001 loomsync \
    && useradd --uid 10001 --gid 10001 --create-home --shell /usr/sbin/nologin loomsync
COPY --from=build /opt/venv /opt/venv

# Numeric, so that runtimes can check it is not root (Kubernetes runAsNonRoot).
USER 10001:10001
# An empty working directory: Settings also reads a `.env` from here, and none is shipped.
WORKDIR /home/loomsync

EXPOSE 8080
# Healthy once /health/ready answers 200 (the database answers and the schema is current);
# `docker compose ps` and `docker ps` show it. Python's urllib: the image has no curl.
HEALTHCHECK --interval=10s --timeout=5s --start-period=20s --retries=6 \
    CMD ["python", "-c", "import os, urllib.request; urllib.request.urlopen('http://127.0.0.1:' + os.environ.get('LOOMSYNC_PORT', '8080') + '/health/ready', timeout=4)"]
# LOOMSYNC_DATABASE_URL and LOOMSYNC_JWT_SECRET (or LOOMSYNC_JWT_SECRET_FILE) come from the
# environment (docker-compose.yml). Without LOOMSYNC_DATABASE_URL the server starts its embedded
# PostgreSQL under ~/.local/share.
CMD ["loomsync-server", "serve", "--host", "0.0.0.0"]
