# Two commands on a fresh machine (see README.md): `make run` and `make test`.
# Both create .venv when missing and (re)install the project only when pyproject.toml changed.

PYTHON3 ?= python3
VENV := .venv
PYTHON := $(VENV)/bin/python
INSTALLED := $(VENV)/.installed-pyproject.stamp
ARGS ?=

.PHONY: run test install

run: $(INSTALLED)
	$(PYTHON) -m devserver.run

test: $(INSTALLED)
	$(VENV)/bin/lint-imports --no-cache
	$(PYTHON) -m devserver.test $(ARGS)

install: $(INSTALLED)

$(PYTHON):
	$(PYTHON3) -m venv $(VENV)

$(INSTALLED): pyproject.toml | $(PYTHON)
	$(PYTHON) -m pip install -e '.[dev]'
	touch $@
