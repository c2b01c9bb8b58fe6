# The README's two commands:
#   make run   - set up, load the demo data, serve the app on http://127.0.0.1:8501
#   make test  - set up (including system packages the tests need), check the code, run the
#                whole suite
# Every step is idempotent: a second run only re-does what changed.

# Which lock `setup` installs (scripts/setup_python.sh): cpu (requirements.lock) or cuda
# (requirements-cuda.lock: CUDA torch and vLLM); cuda when `nvidia-smi -L` lists a GPU.
# PODIUM_TORCH=system builds the venv on the interpreter's own torch (a CUDA image).
export PODIUM_ACCEL ?= $(shell nvidia-smi -L 2>/dev/null | grep -q '^GPU ' && echo cuda || echo cpu)
export PODIUM_TORCH ?= lock
PYTHON ?= $(if $(filter system,$(PODIUM_TORCH)),python3,python3.11)
export PYTHON
VENV := .venv
VLLM_VENV := .venv-vllm
DUCKDB_VENV := .venv-duckdb-iceberg
PODIUM := $(VENV)/bin/podium
PYTEST_ARGS ?=
# Two workers: the heavy tests (vLLM, Ray, browsers, deployments) in one group on one of them,
# the rest beside it (tests/conftest.py); PYTEST_WORKERS= runs the suite in one process.
# A worker that dies ends the run with its test named: a replaced worker once waited for
# tests the scheduler never sent it, and the run hung until it was killed.
PYTEST_WORKERS ?= -n 2 --dist loadgroup --max-worker-restart=0
export PODIUM_HOME ?= $(HOME)/.podium
export HF_HUB_OFFLINE := 1
export TRANSFORMERS_OFFLINE := 1

.PHONY: run test test-prerequisites test-gpu check setup bytecode test-bytecode home system-packages vllm duckdb-iceberg sandbox-image oidc-provider lint bench bench-async-rl bench-scale clean \
	soak-kill load fault-matrix

run: setup home bytecode
	$(PODIUM) up --host 127.0.0.1 --port 8501

# The set-up steps are independent downloads and installs, so they run side by side
# (a fresh clone's set-up: about 4 minutes instead of 11); `check` runs once the app's
# venv is there, beside the rest.
test:
	$(MAKE) -j4 --output-sync=target test-prerequisites
	PATH="$(CURDIR)/$(VENV)/bin:$$PATH" $(VENV)/bin/python -P -m pytest $(PYTEST_WORKERS) $(PYTEST_ARGS)

test-prerequisites: setup check system-packages vllm duckdb-iceberg sandbox-image oidc-provider bytecode \
	test-bytecode

# The project's own modules compiled once (the venvs' are at set-up: scripts/venv_install.sh
# says why): where PYTHONDONTWRITEBYTECODE is set, as on CI, every process of a test run (each
# CLI call, job, app and Ray worker) otherwise compiled them from source again. Up-to-date
# files are skipped.
bytecode: setup
	$(VENV)/bin/python -m compileall -qq -j0 $(CODE)

# pytest's assertion-rewritten test modules, cached the same way by one collection that may
# write them: each pytest process of `make test` (the two workers, and the tests that run
# pytest) otherwise rewrote all ~370 again. Collecting the suite took 22-25 s of CPU without
# them, 15-17 s with them (load 4-5). Its last line says how many tests it collected.
test-bytecode: setup
	env -u PYTHONDONTWRITEBYTECODE $(VENV)/bin/python -P -m pytest -p no:xdist -p no:cacheprovider \
		--collect-only -q | tail -1

# Only the GPU tests (tests marked `gpu`; docs/gpus.md): on a CUDA host after `make setup`.
# No vLLM server set-up: the colocated test needs vLLM in .venv, the generation test skips
# with its reason when .venv-vllm is missing (a CUDA image without a registry).
test-gpu: setup
	PATH="$(CURDIR)/$(VENV)/bin:$$PATH" $(VENV)/bin/python -P -m pytest -m gpu tests/gpu $(PYTEST_ARGS)

# One stamp per accelerator and torch source, so switching either re-runs the set-up.
setup: $(VENV)/.installed-$(PODIUM_ACCEL)-$(PODIUM_TORCH)

# The locks pin every transitive version resolved together (requirements.lock on this
# machine kind); pyproject.toml keeps only the direct, human-chosen pins.
$(VENV)/.installed-$(PODIUM_ACCEL)-$(PODIUM_TORCH): pyproject.toml requirements.lock \
		requirements-cuda.lock scripts/setup_python.sh scripts/setup_plan.py
	rm -f $(VENV)/.installed $(VENV)/.installed-*
	bash scripts/setup_python.sh $(VENV)
	touch $@

home: setup vllm
	$(PODIUM) demo
	$(PODIUM) models bootstrap

system-packages:
	bash scripts/system_packages.sh

# vLLM lives in its own environment (as in its own container in docker-compose) so its
# pins never fight the app's.
vllm: $(VLLM_VENV)/.installed
$(VLLM_VENV)/.installed: scripts/setup_vllm.sh
	bash scripts/setup_vllm.sh $(VLLM_VENV)
	touch $@

# DuckDB's own Iceberg reader (DuckDB 1.5.5, apart from the app's DuckDB 2.0): the tests
# read Podium's edited tables with it, as another engine would.
duckdb-iceberg: $(DUCKDB_VENV)/.installed
$(DUCKDB_VENV)/.installed: scripts/setup_duckdb_iceberg.sh
	bash scripts/setup_duckdb_iceberg.sh $(DUCKDB_VENV)
	touch $@

# mmdebstrap and the Docker engine come from the system packages.
sandbox-image: system-packages
	bash scripts/setup_sandbox.sh

# The login tests' OpenID Connect provider (panva/node-oidc-provider on the system's
# Node.js), installed exactly as tests/oidc/package-lock.json pins it.
oidc-provider: tests/oidc/node_modules/.installed
tests/oidc/node_modules/.installed: tests/oidc/package.json tests/oidc/package-lock.json
	cd tests/oidc && npm ci --no-audit --no-fund
	touch $@

CODE := podium generators trainers tests benchmarks scripts docs/hooks

# Lint, formatting, types (strict on store, jobs, validate), the layer contracts of
# DESIGN.md and no import circles; the mypy and import-linter settings live in pyproject.toml.
# Then the documentation site (mkdocs.yml), strict: a broken link or anchor fails; its
# command-line reference is generated from the commands (docs/hooks/cli_reference.py).
check: setup
	$(VENV)/bin/ruff check $(CODE)
	$(VENV)/bin/ruff format --check $(CODE)
	$(VENV)/bin/mypy
	$(VENV)/bin/lint-imports
	$(VENV)/bin/python scripts/check_import_cycles.py
	NO_MKDOCS_2_WARNING=1 $(VENV)/bin/mkdocs build --strict --site-dir site

lint: check

bench: setup
	for b in benchmarks/*.py; do $(VENV)/bin/python $$b || exit 1; done

# Async RL (issue 24): sync GRPO vs async at max_staleness 0, 1, 2, and weight-sync seconds
# gloo vs disk; figures in test-artifacts/async-rl.json and docs/speed.md "Async RL: measured".
# BENCH_ARGS=--quick for a tiny-model smoke run.
bench-async-rl: setup vllm
	PATH="$(CURDIR)/$(VENV)/bin:$$PATH" $(VENV)/bin/python benchmarks/async_rl.py $(BENCH_ARGS)

# The scale benchmark (issue 37): ROWS generated conversations of MEAN_KIB KiB on average
# (200 B to 32 KiB), every step Podium against DuckDB in one run, each goal met or missed by
# how much; BENCH_ARGS=--s3 adds the reads on PostgreSQL + S3 (moto). Figures in
# test-artifacts/bench-scale-ROWS.json and docs/speed.md "Scale". ~10 GiB of JSONL at 10M.
bench-scale: setup
	mkdir -p test-artifacts
	PATH="$(CURDIR)/$(VENV)/bin:$$PATH" $(VENV)/bin/python benchmarks/real_size.py \
		--rows $(or $(ROWS),10000000) --mean-kib $(or $(MEAN_KIB),1) --repeat $(or $(REPEAT),1) \
		--out test-artifacts/bench-scale-$(or $(ROWS),10000000).json --browser $(BENCH_ARGS)

# The kill harness at full size (tests/faults): over 100 seeded SIGKILLs of a worker and
# its job across every job kind; figures in test-artifacts/soak-kill-*.json.
soak-kill: setup vllm sandbox-image
	PATH="$(CURDIR)/$(VENV)/bin:$$PATH" PODIUM_FAULT_SCALE=8 $(VENV)/bin/python -P -m pytest \
		--timeout 5400 -m faults tests/faults -s $(PYTEST_ARGS)

# The whole fault matrix (tests/faults/fault_matrix.py): every write path x failpoint x
# action on SQLite + local files and PostgreSQL + S3 (moto); test-artifacts/fault-matrix.json
# and the table in docs/faults.md. CI runs a seeded sample (tests/faults/test_fault_matrix.py).
fault-matrix: setup system-packages
	PATH="$(CURDIR)/$(VENV)/bin:$$PATH" $(VENV)/bin/python -P tests/faults/fault_matrix.py

# Load at full size (tests/load/load_run.py): 1 then 10 sessions for 3 minutes on 200k rows
# of ~7 KiB, as protocol sessions and as Chromium tabs, through one `podium up` with 2 app
# processes behind its URL (--app-processes), each reviewer pausing 2 s on average
# after an answer; and 200 jobs to 2 workers; test-artifacts/load.json.
load: setup
	PATH="$(CURDIR)/$(VENV)/bin:$$PATH" $(VENV)/bin/python -P tests/load/load_run.py \
		--app-processes 2 --think 2

clean:
	rm -rf $(VENV) $(VLLM_VENV) $(DUCKDB_VENV) test-artifacts site .cache .mypy_cache .import_linter_cache \
		tests/oidc/node_modules
