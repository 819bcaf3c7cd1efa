# Two commands on a fresh machine: `make demo` and `make test`. Each does all of its set-up.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed

.PHONY: demo test docs types unit engine image venv osworld-venv bench soak pictures clean

# Set-up steps that need nothing of each other run at once: the venv beside the engine, then the
# images beside OSWorld's venv (pip downloads while apt does), so a fresh machine's set-up takes
# about its longest chain (engine, then images), not the sum of every step.
MAKEFLAGS += --jobs=4

# Run outputs go to ignored folders (demo-output/, site/, pytest's temporary ones): `make demo` and
# `make test` leave `git status` clean.
demo: venv engine image
	$(BIN)/vdesk demo --out demo-output

# The suite mostly waits on desktops (programs starting, windows showing), so its files run in
# parallel, a file to a worker (its module fixtures stay shared); the longest start first
# (tests/conftest.py). On two cores: 43 min in one process, about 19 min with three workers and
# 21.5 with four; but three drive the load to 24, where LibreOffice, CRIU and Chromium lose
# races the tests then lose too (one to four a run), so two are the default. The 25 slowest tests
# are listed at the end: where the 30 minutes go.
TEST_WORKERS ?= 2
test: venv osworld-venv engine image docs types
	$(BIN)/pytest -q -n $(TEST_WORKERS) --dist loadfile --durations=25 tests

# Types ([tool.mypy] in pyproject.toml: strict on the pure core, the X connection and the MCP
# server). Its cache (.mypy_cache) makes a run after a small change take seconds.
types: venv
	$(BIN)/mypy

# The documentation site (docs/, mkdocs.yml) into site/: a warning (a broken link, a docstring
# the API reference cannot read) is an error. A few seconds.
docs: venv
	NO_MKDOCS_2_WARNING=1 $(BIN)/mkdocs build --strict

# The pictures of the README and the docs (docs/images is a link to images/), refreshed on
# purpose: images/demo.png from the demo, images/report.png from the report test's headless browser.
pictures: venv engine image
	$(BIN)/vdesk demo --out demo-output --picture images/demo.png
	VDESK_README_PICTURES=images $(BIN)/pytest -q tests/harness/test_report.py -k headless_browser

unit: venv
	$(BIN)/pytest -q tests/unit

bench: venv engine image
	$(BIN)/vdesk bench --baseline --apps

# 10 desktops, mixed actions and screenshots, for 30 minutes; prints figures every minute.
soak: venv engine image
	$(BIN)/python scripts/soak.py --minutes 30

venv: $(STAMP)
$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet -e '.[test,docs]'
	$(BIN)/python -m compileall -q vdesk  # the first command need not compile what it imports
	touch $(STAMP)

# OSWorld's own harness (desktop-env 1.0.2 and its agents) in a virtualenv of its own: its pins
# (gymnasium 0.28, numpy<2, Pillow 11) clash with vdesk's, so it never touches .venv. Its packages
# are installed once and kept in ~/.cache/vdesk/ under the hash of their list; the stubs and the
# provider come from this clone (see the script).
OSWORLD_VENV  := .venv-osworld
OSWORLD_STAMP := $(OSWORLD_VENV)/.installed
osworld-venv: $(OSWORLD_STAMP)
$(OSWORLD_STAMP): scripts/osworld-venv.sh integrations/osworld_provider/requirements-osworld.txt integrations/osworld_provider/pyproject.toml integrations/osworld_stubs/pyproject.toml
	PYTHON=$(PYTHON) bash scripts/osworld-venv.sh $(OSWORLD_VENV)

# The host's set-up: a Docker engine that answers (Debian's docker.io, dockerd started when
# needed) and the few host programs the tests use (see the script).
engine:
	bash scripts/setup-host.sh

# The desktop images (lean, apps FROM it, osworld FROM apps), built (with a locally made base when no registry
# answers) if missing or stale.
image: venv engine
	$(BIN)/vdesk build --apps --osworld

clean:
	-$(BIN)/vdesk down --all
	rm -rf $(VENV) $(OSWORLD_VENV) demo-output site
