# errdex tasks. `make run` and `make test` work on a fresh machine: each creates .venv.
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
PIP := $(BIN)/python -m pip
HOST ?= 127.0.0.1
PORT ?= 8000

.PHONY: run test lint fix bench native venv clean

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(PIP) install --quiet --upgrade pip

# The runtime install (what `make run` needs: the CLI and the web UI). Installing compiles the
# modules errdex/_native.py lists with mypyc (about a minute; ERRDEX_PURE=1 skips it).
$(VENV)/.installed: pyproject.toml setup.py | $(BIN)/python
	$(PIP) install --quiet -e '.[web]'
	@touch $@

# The development install (tests, linters).
$(VENV)/.installed-dev: pyproject.toml setup.py | $(BIN)/python
	$(PIP) install --quiet -e '.[dev]'
	@touch $@ $(VENV)/.installed

venv: $(VENV)/.installed

## run: install, index every package installed in .venv, show stats and an explain example,
## then serve the web UI on http://$(HOST):$(PORT).
run: $(VENV)/.installed
	$(BIN)/errdex mine --installed --jobs 2
	$(BIN)/errdex enrich
	$(BIN)/errdex stats
	$(BIN)/errdex search "not found" --limit 5
	$(BIN)/errdex explain "rich.errors.MarkupError: closing tag '[/bold]' at position 12 doesn't match any open tag" --top 1
	@echo
	@echo "Try: $(BIN)/errdex explain < traceback.txt   or   $(BIN)/errdex search 'invalid' --class ValueError"
	@echo "The web UI: http://$(HOST):$(PORT)  (Ctrl-C stops it)"
	$(BIN)/errdex serve --host $(HOST) --port $(PORT)

## test: install the dev extras and run the whole test suite.
test: $(VENV)/.installed-dev
	$(BIN)/python -m pytest -n auto $(PYTEST_ARGS)

## lint: ruff check, ruff format --check and mypy --strict on the package.
lint: $(VENV)/.installed-dev
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/mypy

## fix: apply ruff's fixes and formatting.
fix: $(VENV)/.installed-dev
	$(BIN)/ruff check --fix .
	$(BIN)/ruff format .

## native: compile the modules errdex/_native.py lists again (after an edit anywhere in errdex,
## it runs its sources until then).
native: $(VENV)/.installed-dev
	$(PIP) install --quiet --no-deps -e .
	@$(BIN)/python -c "from errdex import _native; print('errdex modules:', _native.MODE)"

## bench: run every benchmark in benchmarks/ (each prints its baseline ratio), compiled.
bench: $(VENV)/.installed-dev
	@$(BIN)/python -c "import errdex._native as n, sys; sys.exit(n.MODE != 'compiled')" || $(MAKE) native
	@for script in benchmarks/*.py; do echo "== $$script"; $(BIN)/python $$script || exit 1; done

clean:
	rm -rf $(VENV) build *.egg-info .pytest_cache .mypy_cache .ruff_cache errdex/_native.json
	find errdex -name '*.so' -delete
