# Quick start: `make demo` (set up, inspect the bundled samples) and `make test` (set up, lint,
# type-check, run every test tier). Each target creates .venv when it is missing.

PYTHON ?= python3
VENV ?= .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed-stamp

.PHONY: setup test demo samples bench lint clean

$(STAMP): pyproject.toml
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e '.[dev,spark,catalog]'
	touch $(STAMP)

setup: $(STAMP)

lint: $(STAMP)
	$(VENV)/bin/ruff check puffin_cli tests benchmarks samples
	$(VENV)/bin/mypy

test: lint
	$(PY) -m pytest -q

demo: $(STAMP)
	$(VENV)/bin/puffin inspect samples/stats.puffin
	$(VENV)/bin/puffin inspect --limit 5 samples/deletion-vectors.puffin

samples: $(STAMP)
	$(PY) samples/generate.py

bench: $(STAMP)
	$(PY) benchmarks/run.py

clean:
	rm -rf $(VENV) .pytest_cache .mypy_cache .ruff_cache .bench
