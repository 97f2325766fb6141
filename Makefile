# platform-sync: `make demo` runs the whole job on the local sandbox, `make test` runs every check.
# The first of python3, python3.13, python3.12, python3.11 that is a Python the package supports (3.11 to
# 3.13, pyproject.toml); `make PYTHON=/path/to/python ...` chooses another.
PYTHON ?= $(shell for p in python3 python3.13 python3.12 python3.11; do \
	$$p -c 'import sys; sys.exit(not (3, 11) <= sys.version_info[:2] < (3, 14))' 2>/dev/null \
	&& command -v $$p && break; done)
VENV := .venv
BIN := $(VENV)/bin
# `make test`'s environment: the package with every extra and the test tools (`dev`).
STAMP := $(VENV)/.installed-stamp
# `make demo`'s: the package and the dashboard the demo points to, nothing else (docs/install.md).
DEMO_STAMP := $(VENV)/.demo-stamp

.PHONY: install demo-install system-packages postgres-server browser demo sync models test lint typecheck sqllint unit checked-unit matrix \
	bench cassettes clean

# uv installs what pip would (the same resolution from pyproject.toml, the same registries), in a tenth of
# the time and CPU: measured 2026-12-02, the `dev` environment 16 s against about 2 minutes with pip.
# It is itself a wheel from PyPI, installed into the venv by the venv's pip.
UV := $(BIN)/uv pip install --quiet --python $(BIN)/python

$(VENV)/bin/python:
	@test -n "$(PYTHON)" || { echo "no Python 3.11, 3.12 or 3.13 found: make PYTHON=/path/to/python3.x"; exit 2; }
	$(PYTHON) -m venv $(VENV)

$(BIN)/uv: $(VENV)/bin/python
	$(BIN)/pip install --quiet --disable-pip-version-check 'uv>=0.9'

$(STAMP): pyproject.toml $(BIN)/uv
	$(UV) -e '.[dev]'
	touch $(STAMP)

# Satisfied by the full environment when it is there and current; else the lean one.
$(DEMO_STAMP): pyproject.toml $(BIN)/uv
	@if [ -f $(STAMP) ] && [ $(STAMP) -nt pyproject.toml ]; then touch $@; else \
		$(UV) -e '.[dashboard]' && touch $@; fi

install: $(STAMP)

demo-install: $(DEMO_STAMP)

demo: demo-install  ## sandbox API -> DuckDB (platform_sync.duckdb) -> dbt models, with a summary
	$(BIN)/platform-sync demo

sync: demo-install  ## the real API, with .dlt/config.toml and .dlt/secrets.toml
	$(BIN)/platform-sync sync

models: demo-install
	$(BIN)/platform-sync models

lint: install
	$(BIN)/ruff check .

typecheck: install
	$(BIN)/mypy

sqllint: install
	cd dbt_models && ../$(BIN)/sqlfluff lint models tests analyses macros --processes 2

# What the tests need from Debian, in one apt-get (two at once would fight over apt's lock, and `make test`
# runs its targets at once): the PostgreSQL server, for the tests that run the pipeline and the models on it
# (tests/support/postgres_server.py starts a throwaway cluster with its initdb and pg_ctl), and chromium with
# its driver (tests/dashboard open every page of the dashboard in it). Installed with apt when missing (as
# root, or through sudo); silent when already there. `postgres-server` and `browser` are its old names.
SUDO := $(if $(filter 0,$(shell id -u)),,sudo)
APT_INSTALL := DEBIAN_FRONTEND=noninteractive $(SUDO) apt-get install -y -qq
system-packages:
	@postgres=; browser=; \
	ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1 || postgres=postgresql; \
	{ [ -x /usr/bin/chromium ] && [ -x /usr/bin/chromedriver ]; } || browser="chromium chromium-driver"; \
	[ -z "$$postgres$$browser" ] || $(SUDO) apt-get update -qq || exit 1; \
	[ -z "$$postgres" ] || $(APT_INSTALL) --no-install-recommends $$postgres >/dev/null || exit 1; \
	[ -z "$$browser" ] || $(APT_INSTALL) $$browser >/dev/null

postgres-server browser: system-packages

# Three workers on two cores: the tests wait on their subprocesses, sandboxes and paced requests (one
# core idle 14% of the time with two workers, measured 2026-11-26), which the third fills.
# The 30 slowest tests, then the suite's wall and CPU time (its workers' included): tests/README.md.
unit: install system-packages
	@bash -c 'TIMEFORMAT="suite: wall %R s, CPU %U s user + %S s system"; \
		time $(BIN)/pytest -n 3 --dist loadgroup -q --durations=30'

# The other Pythons and the lowest dlt of the declared range, each from a clean copy of the checkout:
# install, the demo end to end and a fast part of the suite (.ci/matrix; CI_MATRIX=skip skips it).
matrix:
	@if [ "$(CI_MATRIX)" = "skip" ]; then echo "matrix skipped (CI_MATRIX=skip)"; else .ci/matrix; fi

# The checks, the suite and the matrix all at once: the suite's workers and the matrix's demos wait on
# paced requests and subprocesses (the suite alone keeps 2 cores about 92% busy), and the checks (about
# 110 CPU-seconds: mypy, sqlfluff) fill that rather than delaying the suite's start by 90 s. A failed
# check still fails `make test`, at its end. The matrix prints its cells at its end.
test:  ## lint, type checks, SQL lint, the whole suite, the version matrix
	@$(MAKE) --no-print-directory -j5 lint typecheck sqllint unit matrix

checked-unit: lint typecheck sqllint
	@$(MAKE) --no-print-directory unit

bench: install
	$(BIN)/python -m bench

cassettes: install  ## re-record the vcrpy cassettes: against a fresh sandbox, or BASE_URL=... AUTH_URL=...
	PLATFORM_SYNC_RECORD=1 PLATFORM_SYNC_RECORD_BASE_URL=$(BASE_URL) PLATFORM_SYNC_RECORD_AUTH_URL=$(AUTH_URL) \
		$(BIN)/pytest -q tests/sources/platform_client/test_client_cassettes.py

clean:
	rm -rf $(VENV) platform_sync.duckdb dbt_models/target dbt_models/logs
