# The two set-up commands of the README: `make pool` and `make test`.
VENV   ?= .venv
PY     := $(VENV)/bin/python
PIP    := $(VENV)/bin/pip
PYTHON ?= python3

.PHONY: pool stop test test-fast lint bench clean

$(VENV)/.runtime: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(PIP) install -q --upgrade pip
	$(PIP) install -q -e .
	touch $@

$(VENV)/.dev: $(VENV)/.runtime
	$(PIP) install -q -e '.[dev]'
	$(PIP) install -q --target $(VENV)/htcondor24 htcondor==24.12.24
	touch $@

## pool: start a personal pool from the embedded default and run a demo job through it
pool: $(VENV)/.runtime
	PATH="$(abspath $(VENV))/bin:$$PATH" bash scripts/pool.sh

## stop: stop the personal pool started by `make pool`
stop:
	@if [ -x $(VENV)/bin/htcd ]; then env -u HTCD_CONFIG -u CONDOR_CONFIG $(VENV)/bin/htcd off -master || true; fi

## test: the whole suite
test: $(VENV)/.dev
	$(PY) -m ruff check htcd plugins tests bench
	$(PY) -m pytest -q

## bench: every benchmark; JSON lines collected in bench/results.jsonl
bench: $(VENV)/.dev
	@rm -f bench/results.jsonl
	@set -e; for b in $$(ls bench/*.py | grep -v '/_'); do \
		echo "== $$b"; $(PY) $$b $(BENCHFLAGS) | tee /dev/stderr | tail -n 1 >> bench/results.jsonl; done

lint: $(VENV)/.dev
	$(PY) -m ruff check htcd plugins tests bench

clean:
	rm -rf $(VENV) build *.egg-info .pytest_cache .ruff_cache
