# The two commands that set up a fresh machine: `make repro` and `make test`.
# TORCH overrides the torch requirement, e.g. for CUDA:
#   make repro TORCH="torch==2.13.0 --index-url https://download.pytorch.org/whl/cu128"
PYTHON ?= python3
TORCH  ?= torch==2.13.0
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed

export PATH := $(abspath $(BIN)):$(PATH)

.PHONY: env repro test bench profile clean-data browser site-check verify publish

# torch first and pinned, so pip never resolves an unpinned (CUDA) build; then the package.
$(STAMP): pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet $(TORCH)
	$(BIN)/python -m pip install --quiet -e '.[test]'
	touch $@

env: $(STAMP)

# Once every stage is up to date no checkpoint can be resumed: those of an interrupted run whose
# outputs DVC then restored from its run cache would otherwise stay in .checkpoints/.
repro: $(STAMP)
	$(BIN)/dvc repro
	rm -rf .checkpoints

test: $(STAMP) browser
	$(BIN)/python -m pytest -q

# Headless Chromium and its driver (Debian packages) for the browser test: installed quietly,
# without questions, where apt-get is available and they are missing (about a minute).
SUDO := $(if $(filter 0,$(shell id -u)),,sudo -n)
browser:
	@command -v chromium >/dev/null && command -v chromedriver >/dev/null || \
	  { command -v apt-get >/dev/null && $(SUDO) apt-get update -qq && \
	    DEBIAN_FRONTEND=noninteractive $(SUDO) apt-get install -y -qq --no-install-recommends \
	      chromium chromium-driver >/dev/null; } || \
	  echo "chromium or chromedriver missing and not installable: the browser test is skipped"

# After `make repro`: the site and every paper report in headless Chromium (fails on a broken
# image, link or script error) and a screenshot of the index page, reports/index.png.
site-check: $(STAMP) browser
	$(BIN)/python -m tms.reporting.browser reports/index.html \
	  $(filter-out reports/index.html,$(wildcard reports/*.html)) --screenshot reports/index.png

# After `make repro`: the site (index, reports, figures, data downloads: every file a page links)
# as one self-contained folder, public/, and public.tar.gz of it (byte-stable), to serve or
# attach as is.
publish: $(STAMP)
	$(BIN)/python -m tms.reporting.publish reports/index.html public

# Re-hash every output against dvc.lock (dvc status trusts sizes and times) and name any that
# differs; exit status 1 if one does.
verify: $(STAMP)
	$(BIN)/python -m tms.pipeline.verify

bench: $(STAMP)
	$(BIN)/python bench/run.py

# Switch params.yaml to a profile of profiles/ (e.g. `make profile PROFILE=paper`): the committed
# default with the profile's keys over it, validated; `git checkout params.yaml` returns to the default.
profile: $(STAMP)
	$(BIN)/python -m tms.pipeline.profiles $(PROFILE)
