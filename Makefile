# Each target sets itself up on a fresh machine: a venv in .venv with pinned dependencies.
PYTHON ?= $(shell command -v python3.11 || command -v python3)
VENV := .venv
BIN := $(VENV)/bin

.PHONY: demo test lint lit pytest bench venv fuzz docs

$(BIN)/.installed: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install -q --upgrade pip
# The root is the package, so setuptools serves the editable install through an import
# finder and says so on every install (an informational note, not a problem): hush it.
	PYTHONWARNINGS='ignore:Editable installation' $(BIN)/pip install -q -e '.[test,docs]'
	touch $@

venv: $(BIN)/.installed

demo: $(BIN)/.installed
	$(BIN)/relay-demo

lint: $(BIN)/.installed
	$(BIN)/ruff check .

lit: $(BIN)/.installed
	PATH=$(CURDIR)/$(BIN):$$PATH $(BIN)/lit -sv --order=smart tests/filecheck

pytest: $(BIN)/.installed
	PATH=$(CURDIR)/$(BIN):$$PATH $(BIN)/pytest -q -n 2 tests

test: lint lit pytest docs

# The user guide (mkdocs.yml; strict: a broken link or a page left out of the nav fails).
docs: $(BIN)/.installed
	NO_MKDOCS_2_WARNING=1 $(BIN)/mkdocs build -q --strict

# 10,000 cases (generated well-typed programs mutated as IR, and mutated FileCheck inputs)
# through parser, verifier, interpreter and passes; prints the counts per kind and stage
# (ran, rejected with a diagnostic, crashed) and the slowest case in CPU time.
fuzz: $(BIN)/.installed
	$(BIN)/python -W ignore tests/fuzz/xrelay_fuzz.py -n 10000
