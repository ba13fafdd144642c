# Two commands do everything on a fresh machine with Python >= 3.10 and git:
#   make demo   create .venv, install rankwise, evaluate the built-in example runs, write a report
#   make test   create .venv, install rankwise with its test extras, run the whole suite
#               (in TEST_WORKERS processes side by side)
#   make test-minimum   the suite but Spark, torch and the browser, on the oldest versions
#               of the dependencies pyproject.toml allows (.ci/minimum-versions.txt)
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin

MINIMUM := .venv-minimum
# test processes side by side (pytest-xdist): `make test TEST_WORKERS=4` on a larger machine
TEST_WORKERS ?= 2

.PHONY: demo test test-minimum bench clean

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip

$(VENV)/.installed: pyproject.toml | $(BIN)/python
	$(BIN)/python -m pip install --quiet -e ".[stats,recsys]"
	touch $@

$(VENV)/.installed-test: pyproject.toml | $(BIN)/python
	$(BIN)/python -m pip install --quiet -e ".[test]"
	touch $@ $(VENV)/.installed

demo: $(VENV)/.installed
	$(BIN)/rankwise demo --output rankwise-demo

test: $(VENV)/.installed-test
	$(BIN)/python -m pytest -q -n $(TEST_WORKERS)

test-minimum:
	rm -rf $(MINIMUM)
	$(PYTHON) -m venv $(MINIMUM)
	$(MINIMUM)/bin/python -m pip install --quiet --upgrade pip
	$(MINIMUM)/bin/python -m pip install --quiet -c .ci/minimum-versions.txt -e ".[test-core]"
	RANKWISE_TEST_CORE_ONLY=1 $(MINIMUM)/bin/python -m pytest -q -n $(TEST_WORKERS) -m "not slow"

bench: $(BIN)/python
	$(BIN)/python -m pip install --quiet -e ".[bench]"
	$(BIN)/python benchmarks/run.py

clean:
	rm -rf $(VENV) $(MINIMUM) rankwise-demo .pytest_cache
