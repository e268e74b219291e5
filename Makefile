# Two commands do all set-up on a fresh machine: `make run` and `make test`.
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed-stamp

.PHONY: run test install bench clean

$(STAMP): pyproject.toml requirements.lock
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	$(PY) -m pip install -q -r requirements.lock
	$(PY) -m pip install -q --no-deps -e .
	touch $(STAMP)

install: $(STAMP)

run: $(STAMP)
	$(VENV)/bin/bugsleuth serve

test: $(STAMP)
	$(PY) -m pytest -q $(PYTEST_ARGS)

clean:
	rm -rf $(VENV) .pytest_cache build *.egg-info
