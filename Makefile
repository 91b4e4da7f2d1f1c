# The two commands that set up a fresh machine: `make repro` and `make test`.
# TORCH overrides the torch requirement, e.g. for CUDA:
#   make repro TORCH="torch==2.13.0 --index-url https://download.pytorch.org/whl/cu128"
# and takes effect on an existing .venv too (torch is replaced); later makes keep that choice
# (.venv/.torch) until another TORCH is given.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed
TEST_STAMP := $(VENV)/.installed-test
TORCH_SPEC := $(VENV)/.torch
CHECKOUT   := $(VENV)/.checkout
TORCH  ?= $(or $(shell cat $(TORCH_SPEC) 2>/dev/null),torch==2.13.0)
# npm's record of what `npm ci` installed, and the page template of DVC plots (below)
PLOTS_JS   := node_modules/.package-lock.json
PLOTS_PAGE := reports/templates/plots/page.html

export PATH := $(abspath $(BIN)):$(PATH)

.PHONY: FORCE help env ray repro test test-fast bench profile forecast deps browser site-check verify plots-page publish snapshot rejudge exps clean gc

help:  ## this list
	@awk -F ':.*## ' '/^[a-z-]+:.*## / {printf "  make %-12s %s\n", $$1, $$2}' $(MAKEFILE_LIST)

# The torch requirement of .venv, rewritten only when TORCH differs from it (so that .venv is
# rebuilt then, and only then); the installed torch is removed first (pip would keep a CPU build
# that satisfies the same version, e.g. 2.13.0+cpu for torch==2.13.0 from a CUDA index).
$(TORCH_SPEC): FORCE
	@mkdir -p $(VENV); if [ "$$(cat $@ 2>/dev/null)" != '$(TORCH)' ]; then \
	  if [ -x $(BIN)/python ]; then $(BIN)/python -m pip uninstall --quiet -y torch; fi; \
	  echo '$(TORCH)' > $@; fi

# The folder .venv was made in: its scripts and the package's editable install name it, so a
# checkout moved or copied elsewhere (with its .venv) gets a .venv of its own, made again.
$(CHECKOUT): FORCE
	@if [ -f $@ ] && [ "$$(cat $@)" != '$(CURDIR)' ]; then \
	  echo ".venv was made in $$(cat $@), not here: making it again (a few minutes)"; \
	  rm -rf $(VENV); fi; \
	mkdir -p $(VENV); if [ "$$(cat $@ 2>/dev/null)" != '$(CURDIR)' ]; then echo '$(CURDIR)' > $@; fi

FORCE:

# torch first and pinned, so pip never resolves an unpinned (CUDA) build; then the package.
$(STAMP): pyproject.toml $(CHECKOUT) $(TORCH_SPEC)
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet $(TORCH)
	$(BIN)/python -m pip install --quiet -e .
	touch $@

# What the tests need besides: pytest, selenium for the browser tests, and Ray for its executor's.
$(TEST_STAMP): $(STAMP)
	$(BIN)/python -m pip install --quiet -e '.[test]'
	touch $@

env: $(STAMP) $(PLOTS_PAGE)  ## create .venv (torch pinned first, then the package) and the plots page

ray: $(STAMP)  ## Ray, for persian_rug.compute.executor: ray (an optional extra, about 240 MB)
	$(BIN)/python -m pip install --quiet -e '.[ray]'

# The page template of `dvc plots show` / `dvc plots diff` (.dvc/config plots.html_template):
# Vega, Vega-Lite and Vega-Embed as pinned by package-lock.json (`npm ci`, a few seconds),
# inlined with their licences by tms.reporting.plots_page so the page draws offline. Without npm
# the page says so above the plots, and this rule says so on every make.
$(PLOTS_JS): package.json package-lock.json
	@if command -v npm >/dev/null; then npm ci --no-audit --no-fund --loglevel=error; else \
	  echo "npm missing (Debian: apt-get install npm): dvc plots show will not draw the plots"; fi

$(PLOTS_PAGE): $(PLOTS_JS) src/tms/reporting/plots_page.py reports/templates/plots/vega.LICENSE | $(STAMP)
	$(BIN)/python -m tms.reporting.plots_page $@

plots-page: $(PLOTS_PAGE)  ## the offline page template of dvc plots show / diff (npm ci, then inlined)

# Validates the whole params.yaml before DVC starts any stage, runs `dvc repro`, removes the
# checkpoints once every stage is up to date, prints each stage's time (tms.pipeline.repro).
repro: $(STAMP) $(PLOTS_PAGE)  ## validate params.yaml, run the pipeline (TARGETS=… for dvc repro), say where to look
	$(BIN)/python -m tms.pipeline.repro $(TARGETS)

# Two pytest-xdist processes (PYTEST_WORKERS=… for another number): the tests that share a copy
# of the pipeline run in one of them (tests/conftest.py), the rest beside it; the slowest ten
# are listed at the end (where the suite's time goes).
PYTEST_WORKERS ?= 2
test: $(TEST_STAMP) $(PLOTS_PAGE)  ## the test suite (pytest; browser tests skipped without `make browser`)
	$(BIN)/python -m pytest -q -n $(PYTEST_WORKERS) --dist loadgroup --durations=10

test-fast: $(TEST_STAMP)  ## the unit tests alone: no DVC, no stage process, no whole profile, no calibration
	$(BIN)/python -m pytest -q -n $(PYTEST_WORKERS) -m "not integration and not calibration"

# Headless Chromium and its driver (Debian packages) for the browser tests, opt-in: installed
# quietly, without questions, where apt-get is available and they are missing (about a minute).
SUDO := $(if $(filter 0,$(shell id -u)),,sudo -n)
browser:  ## headless Chromium and its driver for the browser tests and site-check (apt-get, where missing)
	@command -v chromium >/dev/null && command -v chromedriver >/dev/null || \
	  { command -v apt-get >/dev/null && $(SUDO) apt-get update -qq && \
	    DEBIAN_FRONTEND=noninteractive $(SUDO) apt-get install -y -qq --no-install-recommends \
	      chromium chromium-driver >/dev/null; } || \
	  echo "chromium or chromedriver missing and not installable: the browser test is skipped"

# After `make repro`: the site and every paper report in headless Chromium (fails on a broken
# image, link or script error) and a screenshot of the index page, reports/index.png.
site-check: $(TEST_STAMP) browser  ## after repro: load the site and reports in headless Chromium
	$(BIN)/python -m tms.reporting.browser reports/index.html \
	  $(filter-out reports/index.html,$(wildcard reports/*.html)) --screenshot reports/index.png

# After `make repro`: the site (index, reports, figures, data downloads: every file a page links)
# as one self-contained folder, public/, and public.tar.gz of it (byte-stable), to serve or
# attach as is.
publish: $(STAMP)  ## after repro: the site and all it links as public/ and public.tar.gz
	$(BIN)/python -m tms.reporting.publish reports/index.html public

# After `make repro` and a commit: the site, params.yaml, dvc.lock, the claims and the stage times
# as results/SNAPSHOT/ (default: the profile's name), a snapshot to commit and link from the README.
SNAPSHOT ?= $(shell $(BIN)/python -c 'from tms.pipeline.profiles import profile_name; print(profile_name())' 2>/dev/null)
snapshot: $(STAMP)  ## after repro and a commit: results/SNAPSHOT/, the site and what made it, to keep in git
	@test -n "$(SNAPSHOT)" || { echo "error: no snapshot name (SNAPSHOT=…)"; exit 2; }
	$(BIN)/python -m tms.pipeline.snapshot results/$(SNAPSHOT)

# After a change of the claims code, committed: a snapshot's verdicts judged again from its own
# data/ (for a run too costly to repeat), its README and results/README.md saying so.
rejudge: $(STAMP)  ## after a committed change of the claims code: results/SNAPSHOT/'s verdicts judged again from its data
	@test -n "$(SNAPSHOT)" || { echo "error: no snapshot name (SNAPSHOT=…)"; exit 2; }
	$(BIN)/python -m tms.pipeline.rejudge results/$(SNAPSHOT)

# Re-hash every output against dvc.lock (dvc status trusts sizes and times) and name any that
# differs; exit status 1 if one does.
verify: $(STAMP)  ## [REPAIR=1] re-hash every output against dvc.lock, name (and repair) any that differs
	$(BIN)/python -m tms.pipeline.verify $(if $(REPAIR),--repair)

exps: $(STAMP)  ## the DVC experiments: the params that differ and each paper's verdicts (ARGS=… for dvc exp show)
	$(BIN)/python -m tms.pipeline.experiments $(ARGS)

bench: $(STAMP)  ## engine throughput and the default profile's wall time
	$(BIN)/python bench/run.py

# Switch params.yaml to a profile of profiles/ (e.g. `make profile PROFILE=paper`): the committed
# default with the profile's keys over it, validated; `git checkout params.yaml` returns to the default.
profile: $(STAMP)  ## PROFILE=smoke|cpu-paper|ladder-settled|paper|gpu: write params.yaml from a profile of profiles/
	$(BIN)/python -m tms.pipeline.profiles $(PROFILE)

# After an edit that adds or drops an import: every stage's code deps in dvc.yaml rewritten to
# the project files its script and template run (tms.core.dvc_yaml; the test suite checks them).
deps: $(STAMP)  ## rewrite dvc.yaml's code deps from the stages' imports
	$(BIN)/python -m tms.core.dvc_yaml --write

forecast: $(STAMP)  ## [PROFILE=…] [H100=1]: every training stage's time and memory, measured here (or on one H100)
	$(BIN)/python -m tms.pipeline.forecast $(PROFILE) $(if $(H100),--h100)

# The pipeline's outputs out of the working tree (DVC's cache keeps them: `dvc checkout` or
# `make repro` brings them back in seconds), with the logs, checkpoints and published site.
clean:  ## remove the pipeline's outputs, logs and checkpoints from the tree (DVC's cache keeps them)
	rm -rf data reports/*.html reports/*.ipynb reports/figures reports/claims reports/index.png \
	  .checkpoints logs public public.tar.gz dvc_plots

# DVC's cache pruned to what the current dvc.lock names: frees the disk that other params and
# profiles' outputs take (they are then rebuilt, not restored, when their params come back).
gc: $(STAMP)  ## remove from DVC's cache every output the current dvc.lock does not name
	$(BIN)/python -m dvc gc --workspace --force
