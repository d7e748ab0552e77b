# The two commands of a fresh machine: `make demo` and `make test`.
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
PIP := $(PY) -m pip --disable-pip-version-check -q
PYTEST_ARGS ?=

.PHONY: demo test install install-test pytest docs clean

$(PY):
	$(PYTHON) -m venv $(VENV)
	$(PIP) install --upgrade pip "setuptools>=64" wheel

install: $(PY)
	$(PIP) install -e .

demo: install
	$(PY) examples/demo.py

install-test: $(PY)
	$(PIP) install -e ".[test,docs]"

pytest: install-test
	$(PY) -m pytest $(PYTEST_ARGS)

docs: install-test
	$(PY) -m sphinx -W --keep-going -q -b html docs docs/_build/html

test: pytest docs

clean:
	rm -rf $(VENV) build dist *.egg-info docs/_build .pytest_cache
