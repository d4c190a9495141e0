# The few targets a newcomer needs. `make run` and `make test` do all the set-up themselves.
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
LINTED := app loomsync tests migrations $(wildcard bench)
STAMP := $(VENV)/.installed-stamp

.PHONY: install run test lint format migrate revision bench clean

$(STAMP): pyproject.toml
	@$(PYTHON) -c 'import sys; assert sys.version_info >= (3, 11), "loomsync needs Python >= 3.11"'
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[dev]'
	@touch $(STAMP)

install: $(STAMP)  ## create .venv and install loomsync with its dev tools

run: install  ## serve on 127.0.0.1:8080 (embedded PostgreSQL unless LOOMSYNC_DATABASE_URL is set)
	$(BIN)/loomsync-server serve

lint: install  ## ruff (lint + format check) and mypy --strict
	$(BIN)/ruff check $(LINTED)
	$(BIN)/ruff format --check $(LINTED)
	$(BIN)/mypy app loomsync

format: install
	$(BIN)/ruff format $(LINTED)
	$(BIN)/ruff check --fix $(LINTED)

test: lint  ## lint, then pytest (database: LOOMSYNC_TEST_DATABASE_URL, else Docker, else embedded)
	scripts/test-setup.sh  # the suite's tools: installed as root with apt-get, else named, exit 1
	$(BIN)/pytest

migrate: install  ## alembic upgrade head on LOOMSYNC_DATABASE_URL (or the embedded server)
	$(BIN)/loomsync-server migrate

revision: install  ## new migration: make revision m="what it does"
	$(BIN)/alembic revision -m "$(m)"

bench: install  ## benchmarks (bench/README.md); results are appended to bench/RESULTS.md
	-$(BIN)/python -m bench.sync  # exits 1 when a target is missed; the others still run
	$(BIN)/python -m bench.search
	$(BIN)/python -m bench.load

clean:
	rm -rf $(VENV) .pytest_cache .mypy_cache .ruff_cache
