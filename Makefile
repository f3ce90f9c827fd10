# Every install step lives here: `make test` and `make demo` work on a fresh machine with Python 3.11.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed-stamp

.PHONY: install lint test demo bench clean

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet -e '.[test]'
	touch $(STAMP)

install: $(STAMP)

lint: install
	$(BIN)/ruff check .
	$(BIN)/mypy
	$(BIN)/lint-imports
	$(BIN)/hadolint Dockerfile

test: lint
	$(BIN)/pytest -q

demo: install
	@for pod in case-ok case-nogpunode case-alloc0 case-taint case-label case-exhaust case-norequest; do \
	  printf '%-16s ' $$pod; $(BIN)/kubewhy triage gpu-triage $$pod --snapshot examples/gpu-lab.json --format word; \
	done

bench: install
	$(BIN)/python -m bench

clean:
	rm -rf $(VENV) .mypy_cache .pytest_cache .ruff_cache
