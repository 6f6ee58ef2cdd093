# The two set-up commands of the README: `make pool` and `make test`.
VENV   ?= .venv
PY     := $(VENV)/bin/python
PIP    := $(VENV)/bin/pip
PYTHON ?= python3

.PHONY: pool stop test test-fast test-pytest test-ansible test-molecule test-all test-molecule-upgrade lint bench clean

$(VENV)/.runtime: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(PIP) install -q --upgrade pip
	$(PIP) install -q -e .
	touch $@

$(VENV)/.dev: $(VENV)/.runtime
	$(PIP) install -q -e '.[dev,deploy]'
	$(PIP) install -q --target $(VENV)/htcondor24 htcondor==24.12.24
	touch $@

$(VENV)/.deploy: $(VENV)/.runtime
	$(PIP) install -q -e '.[deploy]'
	touch $@

## pool: deploy this machine as a personal pool with Ansible (inventories/local) and run a demo job
pool: $(VENV)/.deploy
	PATH="$(abspath $(VENV))/bin:$$PATH" bash scripts/pool.sh

## stop: stop the personal pool started by `make pool` (by its master's PID)
stop:
	@d=$${HTCD_POOL_DIR:-.pool}; if [ -x $$d/bin/htcd-service ]; then $$d/bin/htcd-service stop; fi

## test: lint (ruff, mypy, ansible-lint), then two lanes side by side: every test but the Ansible ones,
## and the Ansible tests followed by the molecule `default` scenario (which mostly wait on
## ansible-playbook and ssh); the second lane's output is printed when both have ended
test: lint $(VENV)/.dev
	@bash scripts/test_lanes.sh

# extra pytest flags, e.g. PYTEST_FLAGS="-n 2 --dist loadgroup" (pytest-xdist; see docs/testing.md)
PYTEST_FLAGS ?=
# which tests test-pytest runs (a pytest -m expression; empty: all)
PYTEST_MARKS ?=

test-pytest: $(VENV)/.dev
	HYPOTHESIS_PROFILE=$${HYPOTHESIS_PROFILE:-ci} $(PY) -m pytest -q --durations=25 \
		$(if $(PYTEST_MARKS),-m "$(PYTEST_MARKS)") $(PYTEST_FLAGS)

## test-ansible: the Ansible tests (roles, `make pool`, fleet), then the molecule `default` scenario
test-ansible: $(VENV)/.dev
	$(MAKE) --no-print-directory test-pytest PYTEST_MARKS=ansible
	$(MAKE) --no-print-directory test-molecule

## test-fast: languages and units, no daemons, docker, ansible, fuzzing or slow tests (well under a minute)
FAST_MARKS := not pool and not docker and not ansible and not fuzz and not slow
test-fast: $(VENV)/.dev
	HYPOTHESIS_PROFILE=$${HYPOTHESIS_PROFILE:-dev} $(PY) -m pytest -q -m "$(FAST_MARKS)" $(PYTEST_FLAGS)

## test-molecule: site.yml on test hosts (molecule/testhosts.sh), idempotence, verify (needs root)
test-molecule: $(VENV)/.dev
	PATH="$(abspath $(VENV))/bin:$$PATH" $(VENV)/bin/molecule test -s default

## test-all: `make test`, then the rolling upgrade scenario
test-all: test test-molecule-upgrade

test-molecule-upgrade: $(VENV)/.dev
	PATH="$(abspath $(VENV))/bin:$$PATH" $(VENV)/bin/molecule test -s upgrade

## bench: every benchmark; JSON lines collected in bench/results.jsonl
bench: $(VENV)/.dev
	@rm -f bench/results.jsonl
	@set -e; for b in $$(ls bench/*.py | grep -v '/_'); do \
		echo "== $$b"; $(PY) $$b $(BENCHFLAGS) | tee /dev/stderr | tail -n 1 >> bench/results.jsonl; done

## lint: ruff (pinned rule set), mypy over htcd/ and plugins/ (zero errors), ansible-lint (production profile)
lint: $(VENV)/.dev
	$(PY) -m ruff check htcd plugins tests bench scripts
	$(VENV)/bin/mypy
	PATH="$(abspath $(VENV))/bin:$$PATH" $(VENV)/bin/ansible-lint -q

clean:
	rm -rf $(VENV) build *.egg-info .pytest_cache .ruff_cache
