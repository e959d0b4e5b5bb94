# Quick start: `make demo` (set up, inspect the bundled samples), `make check` (lint, type-check,
# the test tiers that need no JVM, no emulator and no download) and `make test` (set up, lint,
# type-check, run every test tier). Each target creates .venv when it is missing.

PYTHON ?= python3
VENV ?= .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed-stamp
# Bytecode for the package, as `pip install` of a wheel compiles it: an editable install has
# none, and where PYTHONDONTWRITEBYTECODE is set every command would compile its modules anew
# (~15 ms of each start-up). Re-run before benchmarks, after the sources changed.
BYTECODE := $(PY) -m compileall -q puffin_cli
# Azurite (the Azure Storage emulator, npm) for the Azure tests, project-local
AZURITE := .npm-tools/node_modules/.bin/azurite-blob
# uPlot (npm), the charting library `table --html` inlines: the package ships a vendored copy
# (puffin_cli/render/assets/), which tests/test_table_html.py checks against npm's
UPLOT := .npm-tools/node_modules/uplot/dist/uPlot.iife.min.js
# Chromium (Debian's package): the tests load `table --html` pages in it, headless
CHROMIUM := /usr/bin/chromium

# The tiers `make check` leaves out (tests/tiers.py; tests/test_tiers.py checks this list)
HEAVY := java or spark or objectstore or paimon or browser or install

.PHONY: setup test check demo samples bench lint clean

$(STAMP): pyproject.toml
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e '.[dev,spark,catalog]'
	$(BYTECODE)
	touch $(STAMP)

$(AZURITE):
	npm install --prefix .npm-tools --no-audit --no-fund --loglevel=error azurite@3.35.0

$(UPLOT):
	npm install --prefix .npm-tools --no-audit --no-fund --loglevel=error uplot@1.6.32

$(CHROMIUM):
	apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium

setup: $(STAMP) $(AZURITE) $(UPLOT) $(CHROMIUM)

lint: $(STAMP)
	$(VENV)/bin/ruff check puffin_cli tests benchmarks samples
	$(VENV)/bin/mypy

test: lint $(AZURITE) $(UPLOT) $(CHROMIUM)
	$(BYTECODE)
	$(PY) -m pytest -q

check: lint
	$(BYTECODE)
	$(PY) -m pytest -q -m "not ($(HEAVY))" --durations=15

demo: $(STAMP)
	$(VENV)/bin/puffin inspect samples/stats.puffin
	$(VENV)/bin/puffin inspect --limit 5 samples/deletion-vectors.puffin

samples: $(STAMP)
	$(PY) samples/generate.py

bench: $(STAMP)
	$(BYTECODE)
	$(PY) benchmarks/run.py

clean:
	rm -rf $(VENV) .npm-tools .pytest_cache .mypy_cache .ruff_cache .bench
