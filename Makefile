# rewardloop: `make demo` runs the main job offline, `make test` runs the checks and tests.
# Both bootstrap a local virtualenv (.venv) on first use; nothing else needs installing.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
export MUJOCO_GL ?= egl

.PHONY: demo test bench docs clean browser

$(BIN)/rewardloop: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet -e ".[dev]"
	touch $@

demo: $(BIN)/rewardloop
	$(BIN)/rewardloop demo

# The report test opens pages in headless Chromium (Debian's package); installed here when missing and root.
browser:
	@command -v chromium >/dev/null 2>&1 || { [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null && \
	  (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium) >/dev/null; } || \
	  echo "note: chromium not found; install it (Debian: apt-get install chromium) for the report test"

# The tests run in one process per core (pytest-xdist); `$(BIN)/pytest` alone runs them in one process.
test: $(BIN)/rewardloop browser
	$(BIN)/ruff check rewardloop tests benchmarks
	$(BIN)/mypy rewardloop
	$(BIN)/pytest -n auto

bench: $(BIN)/rewardloop
	$(BIN)/python benchmarks/bench_sim.py

# The documentation site (offline): the generated pages and tables first, then MkDocs in strict mode into site/.
docs: $(BIN)/rewardloop
	$(BIN)/python -m rewardloop.docs
	$(BIN)/mkdocs build --strict

clean:
	rm -rf $(VENV) build site *.egg-info
