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
	$(BIN)/pytest -q -n 2

demo: install
	@echo "== The GPU lab: kubewhy triage gpu-triage POD --snapshot bot/demo/gpu-lab.json --format word"
	@for pod in case-ok case-nogpunode case-alloc0 case-taint case-label case-exhaust case-norequest; do \
	  printf '  %-16s ' $$pod; $(BIN)/kubewhy triage gpu-triage $$pod --snapshot bot/demo/gpu-lab.json --format word; \
	done
	@echo
	@echo "== The first screen of each, with its fix (checked: the funnel, run again on the changed objects)"
	@for pod in case-ok case-nogpunode case-alloc0 case-taint case-label case-exhaust; do \
	  $(BIN)/kubewhy triage gpu-triage $$pod --snapshot bot/demo/gpu-lab.json | sed -e '/^$$/,$$d' -e 's/^/  /'; echo; \
	done
	@echo
	@echo "== The DRA lab (GPUs as ResourceClaims and ResourceSlices): kubewhy triage dra-lab POD --snapshot bot/demo/gpu-dra.json --format word"
	@for pod in case-dra-ok case-dra-norequest case-dra-claim case-dra-nogpunode case-dra-tainted case-dra-exhaust case-dra-mig; do \
	  printf '  %-20s ' $$pod; $(BIN)/kubewhy triage dra-lab $$pod --snapshot bot/demo/gpu-dra.json --format word; \
	done
	@echo
	@echo "== The first screen of each DRA outcome, with its fix (claims, templates and slices changed, then checked)"
	@for pod in case-dra-ok case-dra-claim case-dra-nogpunode case-dra-tainted case-dra-exhaust; do \
	  $(BIN)/kubewhy triage dra-lab $$pod --snapshot bot/demo/gpu-dra.json | sed -e '/^$$/,$$d' -e 's/^/  /'; echo; \
	done
	@echo
	@echo "== Will a node come? coming, not coming, failed: kubewhy triage ml train-0 --snapshot tests/corpus/triage/autoscaling-CASE.json"
	@for case in ca-triggered-yaml ca-max-size gke-stockout; do \
	  $(BIN)/kubewhy triage ml train-0 --snapshot tests/corpus/triage/autoscaling-$$case.json | sed -e '/^$$/,$$d' -e 's/^/  /'; echo; \
	done
	@echo
	@echo "== JobSet incidents: kubewhy jobset why NS NAME --snapshot bot/demo/jobset-*.json --format word"
	@printf '  %-44s ' duplicate-leader; $(BIN)/kubewhy jobset why llm llm-pretrain --snapshot bot/demo/jobset-leader-duplicate.json --format word
	@printf '  %-44s ' preemption-restarts; $(BIN)/kubewhy jobset why llm llama3-70b-ft --snapshot bot/demo/jobset-preemption-restarts.json --format word
	@echo
	@echo "== The masked leader-pending on TPUs: kubewhy jobset why llm maxtext-v5e --snapshot bot/demo/jobset-leader-pending-tpu.json"
	@$(BIN)/kubewhy jobset why llm maxtext-v5e --snapshot bot/demo/jobset-leader-pending-tpu.json
	@echo
	@echo "== A LeaderWorkerSet whose second group waits on its leader: kubewhy lws why serving jetstream-llama --snapshot bot/demo/lws-leader-pending-tpu.json"
	@$(BIN)/kubewhy lws why serving jetstream-llama --snapshot bot/demo/lws-leader-pending-tpu.json | sed -e '/^$$/,$$d' -e 's/^/  /'
	@echo
	@echo "== A TrainJob whose JobSet was never created: kubewhy jobset why ml-train llama-sft --snapshot bot/demo/trainjob-jobset-not-created.json"
	@$(BIN)/kubewhy jobset why ml-train llama-sft --snapshot bot/demo/trainjob-jobset-not-created.json | sed -e '/^$$/,$$d' -e 's/^/  /'
	@echo
	@echo '== In Slack (the whole bot pipeline in-process): kubewhy ask "/triage gpu-triage case-exhaust"'
	@$(BIN)/kubewhy ask "/triage gpu-triage case-exhaust"
	@echo
	@echo '== kubewhy ask "/jobset why llm llama3-70b-ft"'
	@$(BIN)/kubewhy ask "/jobset why llm llama3-70b-ft"
	@echo
	@echo '== A DRA pod in Slack: kubewhy ask "/triage dra-lab case-dra-exhaust"'
	@$(BIN)/kubewhy ask "/triage dra-lab case-dra-exhaust"
	@echo
	@echo '== A name, whatever its kind: kubewhy ask "/why serving jetstream-llama"'
	@$(BIN)/kubewhy ask "/why serving jetstream-llama"
	@echo
	@echo '== The sentinel (in-process, thresholds of seconds): an incident posted, followed and resolved in place'
	@$(BIN)/python -m devtools.sentinel_demo

bench: install
	$(BIN)/python -m bench

clean:
	rm -rf $(VENV) .mypy_cache .pytest_cache .ruff_cache
