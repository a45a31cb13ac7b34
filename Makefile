# Each target sets itself up on a fresh machine: a venv in .venv with pinned dependencies.
PYTHON ?= $(shell command -v python3.11 || command -v python3)
VENV := .venv
BIN := $(VENV)/bin

.PHONY: demo test lint lit pytest bench venv fuzz docs test-extras venv-extras zoo mutants mutants-fast

$(BIN)/.installed: pyproject.toml
	@echo "== creating $(VENV) and installing xrelay with its pinned dependencies (about a minute with a warm pip cache, a few without)"
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install -q --upgrade pip
# The root is the package, so setuptools serves the editable install through an import
# finder and says so on every install (an informational note, not a problem): hush it.
	PYTHONWARNINGS='ignore:Editable installation' $(BIN)/pip install --progress-bar off -e '.[test,docs]'
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

test: lint lit pytest docs mutants-fast

# Each pass replaced by the identity: its pytest files must fail (tests that expect no change
# are marked no_change with the reason; see docs/guide/testing.md). mutants-fast is the subset
# make test runs.
mutants: $(BIN)/.installed
	$(BIN)/python -m xrelay.testing.mutants

mutants-fast: $(BIN)/.installed
	$(BIN)/python -m xrelay.testing.mutants --fast

# The user guide (mkdocs.yml; strict: a broken link or a page left out of the nav fails).
docs: $(BIN)/.installed
	NO_MKDOCS_2_WARNING=1 $(BIN)/mkdocs build -q --strict

# The tests of the optional frontends (torch.export, TFLite) and of the real-model zoo in a
# venv of their own with the `frontends` and `zoo` extras: torch, tensorflow, transformers and
# the TFLite interpreter are large, so `make test` does not install them (there, tests/extras
# skip and say which extra is missing).
EXTRAS_VENV := .venv-extras
EXTRAS_BIN := $(EXTRAS_VENV)/bin

$(EXTRAS_BIN)/.installed: pyproject.toml
	$(PYTHON) -m venv $(EXTRAS_VENV)
	$(EXTRAS_BIN)/pip install -q --upgrade pip
	PYTHONWARNINGS='ignore:Editable installation' $(EXTRAS_BIN)/pip install -q -e '.[test,bench,frontends,zoo]'
	touch $@

venv-extras: $(EXTRAS_BIN)/.installed

# TensorFlow and torch in one process crash at import (a segmentation fault once both, pandas
# and PIL are loaded, whatever the order of the test files): the TFLite tests run in their own.
test-extras: $(EXTRAS_BIN)/.installed
	PATH=$(CURDIR)/$(EXTRAS_BIN):$$PATH $(EXTRAS_BIN)/pytest -q -n 2 -rs tests/extras \
		--ignore=tests/extras/test_tflite_frontend.py
	PATH=$(CURDIR)/$(EXTRAS_BIN):$$PATH $(EXTRAS_BIN)/pytest -q -n 2 -rs tests/extras/test_tflite_frontend.py

# The real-model zoo against onnxruntime and OpenVINO (benchmarks/zoo.py; the models are
# exported once into $$XRELAY_ZOO_CACHE, default ~/.cache/xrelay-zoo). ZOO_ARGS adds options.
zoo: $(EXTRAS_BIN)/.installed
	uptime
	$(EXTRAS_BIN)/python benchmarks/zoo.py $(ZOO_ARGS)

# 10,000 cases (generated well-typed programs mutated as IR, and mutated FileCheck inputs)
# through parser, verifier, interpreter and passes, then 10,000 mutated ONNX models and export
# archives through import_onnx / load_module and a run; each prints the counts per kind (ran,
# rejected with a diagnostic, crashed) and the slowest case in CPU time.
# The runtime against onnxruntime and OpenVINO on the built-in models (alternating pairs,
# median of per-pair ratios, peak RSS); prints the table with the machine's load.
bench: $(BIN)/.installed
	$(BIN)/pip install -q -e '.[bench]'
	uptime
	$(BIN)/python benchmarks/runtime.py --pairs 15 --no-layouts

fuzz: $(BIN)/.installed
	$(BIN)/python -W ignore tests/fuzz/xrelay_fuzz.py -n 10000
	$(BIN)/python -W ignore tests/fuzz/format_fuzz.py -n 10000
