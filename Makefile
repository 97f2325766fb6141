# platform-sync: `make demo` runs the whole job on the local sandbox, `make test` runs every check.
PYTHON ?= $(shell command -v python3.11 || command -v python3)
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed-stamp

.PHONY: install postgres-server browser demo sync models test lint typecheck sqllint unit bench cassettes clean

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet -e '.[dev]'
	touch $(STAMP)

install: $(STAMP)

demo: install  ## sandbox API -> DuckDB (platform_sync.duckdb) -> dbt models, with a summary
	$(BIN)/platform-sync demo

sync: install  ## the real API, with .dlt/config.toml and .dlt/secrets.toml
	$(BIN)/platform-sync sync

models: install
	$(BIN)/platform-sync models

lint: install
	$(BIN)/ruff check .

typecheck: install
	$(BIN)/mypy

sqllint: install
	cd dbt_models && ../$(BIN)/sqlfluff lint models tests analyses macros --processes 2

# Debian's PostgreSQL server, for the tests that run the pipeline and the models on it (tests/postgres
# starts a throwaway cluster with its initdb and pg_ctl). Installed with apt when missing (as root, or
# through sudo); silent when already there.
SUDO := $(if $(filter 0,$(shell id -u)),,sudo)
postgres-server:
	@ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1 || { \
		$(SUDO) apt-get update -qq && \
		DEBIAN_FRONTEND=noninteractive $(SUDO) apt-get install -y -qq --no-install-recommends postgresql >/dev/null; }

# Debian's chromium and its driver: tests/dashboard open every page of the dashboard in it.
browser:
	@{ [ -x /usr/bin/chromium ] && [ -x /usr/bin/chromedriver ]; } || { \
		$(SUDO) apt-get update -qq && \
		DEBIAN_FRONTEND=noninteractive $(SUDO) apt-get install -y -qq \
			chromium chromium-driver >/dev/null; }

unit: install postgres-server browser
	$(BIN)/pytest -n 2 --dist loadgroup -q

test: lint typecheck sqllint unit  ## lint, type checks, SQL lint and the whole test suite

bench: install
	$(BIN)/python -m bench

cassettes: install  ## re-record the vcrpy cassettes: against a fresh sandbox, or BASE_URL=... AUTH_URL=...
	PLATFORM_SYNC_RECORD=1 PLATFORM_SYNC_RECORD_BASE_URL=$(BASE_URL) PLATFORM_SYNC_RECORD_AUTH_URL=$(AUTH_URL) \
		$(BIN)/pytest -q tests/source/test_client_cassettes.py

clean:
	rm -rf $(VENV) platform_sync.duckdb dbt_models/target dbt_models/logs
