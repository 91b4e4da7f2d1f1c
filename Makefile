# The two commands that set up a fresh machine: `make repro` and `make test`.
# TORCH overrides the torch requirement, e.g. for CUDA:
#   make repro TORCH="torch==2.13.0 --index-url https://download.pytorch.org/whl/cu128"
PYTHON ?= python3
TORCH  ?= torch==2.13.0
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed

export PATH := $(abspath $(BIN)):$(PATH)

.PHONY: env repro test bench profile clean-data

# torch first and pinned, so pip never resolves an unpinned (CUDA) build; then the package.
$(STAMP): pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet $(TORCH)
	$(BIN)/python -m pip install --quiet -e '.[test]'
	touch $@

env: $(STAMP)

repro: $(STAMP)
	$(BIN)/dvc repro

test: $(STAMP)
	$(BIN)/python -m pytest -q

bench: $(STAMP)
	$(BIN)/python bench/run.py

# Switch params.yaml to a profile from profiles/ (e.g. `make profile PROFILE=paper`);
# `git checkout params.yaml` returns to the default CPU profile.
profile:
	test -f profiles/$(PROFILE).yaml
	cp profiles/$(PROFILE).yaml params.yaml
