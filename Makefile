# One-command workflows. `make test` and `make demo` work on a fresh machine with only Python.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed


.PHONY: install test demo screenshot fuzz fuzz-bench check lint format typecheck schemas conformance bench bench-quick clean

$(STAMP): pyproject.toml packets/pyproject.toml actors/pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e ./packets -e ./actors -e '.[test,postgres]'
	touch $(STAMP)

## Install into .venv and say where `telic` is and how to put it on the PATH.
install: $(STAMP)
	@echo "telic is installed at $(CURDIR)/$(BIN)/telic"
	@echo "  run it as $(BIN)/telic here, or put it on your PATH for this shell:"
	@echo "    export PATH=\"$(CURDIR)/$(BIN):\$$PATH\""
	@echo "  or install it for your user instead: uv tool install .  (or: pipx install .)"

## Run the whole test suite (both async backends; PostgreSQL tests when TELIC_TEST_POSTGRES_URL is set).
test: $(STAMP)
	$(BIN)/python -m pytest

## Run the demo: a complete analyze_and_fix run over MCP on the bundled example repository.
demo: $(STAMP)
	$(BIN)/telic demo

## Regenerate docs/report-screenshot.png from a fresh demo run (needs chromium: .ci/chromium.sh).
screenshot: $(STAMP)
	$(BIN)/python docs/screenshot.py

## Fuzz every MCP tool far harder than the default suite (TELIC_FUZZ_EXAMPLES, default 20000).
fuzz: $(STAMP)
	TELIC_FUZZ_EXAMPLES=$${TELIC_FUZZ_EXAMPLES:-20000} $(BIN)/python -m pytest tests/telic/server/test_fuzz.py -q

## The fuzz target at 100,000 examples in seeded chunks; its figure goes to benchmarks/README.md.
fuzz-bench: $(STAMP)
	$(BIN)/python benchmarks/fuzz.py --examples $${FUZZ_EXAMPLES:-100000}

## Lint, format check and strict type check of all three packages.
check: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/mypy

format: $(STAMP)
	$(BIN)/ruff check --fix .
	$(BIN)/ruff format .

## Regenerate the committed JSON Schema files from the models.
schemas: $(STAMP)
	$(BIN)/python -m telic.protocol.schemas --write
	$(BIN)/python -m telic_packets.schema --write

## Evaluate the evidence-packet conformance table against this implementation.
conformance: $(STAMP)
	$(BIN)/python -m telic_packets.conformance

## Run every benchmark script but the fuzz target and the before/after comparison, which needs a
## second tree (a few minutes; PostgreSQL figures when TELIC_TEST_POSTGRES_URL is set).
bench: $(STAMP)
	@for script in benchmarks/[a-z]*.py; do case "$$script" in benchmarks/fuzz.py) continue;; esac; echo "== $$script" >&2; $(BIN)/python $$script || exit 1; done

## The over-MCP benchmarks with fewer iterations, for a quick before/after check.
bench-quick: $(STAMP)
	$(BIN)/python benchmarks/mcp_stdio.py --runs 5 --starts 3
	$(BIN)/python benchmarks/mcp_http.py --runs 3 --starts 1 --seconds 3
	$(BIN)/python benchmarks/footprint.py
	$(BIN)/python benchmarks/memory.py --finished 100 --active 10

clean:
	rm -rf $(VENV) .pytest_cache .mypy_cache .ruff_cache .hypothesis .coverage
