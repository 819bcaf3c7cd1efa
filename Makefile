# Two commands on a fresh machine: `make demo` and `make test`. Each does all of its set-up.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed

.PHONY: demo test unit engine image venv bench soak clean

demo: venv engine image
	$(BIN)/vdesk demo --out demo-output --picture images/demo.png

test: venv engine image
	$(BIN)/pytest -q tests

unit: venv
	$(BIN)/pytest -q tests/unit

bench: venv engine image
	$(BIN)/vdesk bench --baseline

venv: $(STAMP)
$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet -e '.[test]'
	touch $(STAMP)

# A Docker engine that answers (installs Debian's docker.io and starts dockerd when needed).
engine:
	bash scripts/ensure-engine.sh

# The desktop image, built (with a locally made base when no registry answers) if missing or stale.
image: venv engine
	$(BIN)/vdesk build

clean:
	-$(BIN)/vdesk down --all
	rm -rf $(VENV) demo-output
