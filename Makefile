# Two commands do all set-up on a fresh machine: `make run` and `make test`.
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed-stamp

# The locks: requirements.lock (production: runtime + the anthropic extra) and requirements-test.lock (only what
# the test extra adds), both hashed, both resolved by uv from pyproject.toml by `make lock`. Existing pins are
# kept; `make lock UV_FLAGS=--upgrade` moves everything to the newest allowed, `UV_FLAGS=--offline` uses uv's cache.
UV_VERSION := 0.13.9
UV := $(VENV)/bin/uv
UV_FLAGS ?=
LOCK_FLAGS := --quiet --universal --python-version 3.11 --generate-hashes --custom-compile-command "make lock" $(UV_FLAGS)

.PHONY: run test install lock pin-base-image bench clean

$(STAMP): pyproject.toml requirements.lock requirements-test.lock
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	$(PY) -m pip install -q --require-hashes -r requirements.lock -r requirements-test.lock
	$(PY) -m pip install -q --no-deps -e .
	touch $(STAMP)

install: $(STAMP)

run: $(STAMP)
	$(VENV)/bin/bugsleuth serve

test: $(STAMP)
	$(PY) -m pytest -q $(PYTEST_ARGS)

$(UV):
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q uv==$(UV_VERSION)

lock: $(UV)
	$(UV) pip compile pyproject.toml --extra anthropic $(LOCK_FLAGS) -o requirements.lock
	$(UV) pip compile pyproject.toml --extra anthropic --extra test $(LOCK_FLAGS) -c requirements.lock \
	    $$(sed -n 's/^\([A-Za-z0-9._-]*\)==.*/--no-emit-package \1/p' requirements.lock) -o requirements-test.lock

# Rewrites the Dockerfile's FROM line to the current digest of its tag (needs access to Docker Hub).
pin-base-image:
	.ci/pin-base-image Dockerfile

clean:
	rm -rf $(VENV) .pytest_cache build *.egg-info
