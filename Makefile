# Two commands do everything on a fresh machine with Python >= 3.10 and git:
#   make demo   create .venv, install rankwise, evaluate the built-in example runs, write a report
#   make test   create .venv, install rankwise with its test extras, run the whole suite
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin

.PHONY: demo test bench clean

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
	$(BIN)/python -m pytest -q

bench: $(BIN)/python
	$(BIN)/python -m pip install --quiet -e ".[bench]"
	$(BIN)/python benchmarks/run.py

clean:
	rm -rf $(VENV) rankwise-demo .pytest_cache
