# rewardloop: `make demo` runs the main job offline, `make test` runs the checks and tests.
# Both bootstrap a local virtualenv (.venv) on first use; nothing else needs installing.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
export MUJOCO_GL ?= egl

.PHONY: demo test bench clean

$(BIN)/rewardloop: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet -e ".[dev]"
	touch $@

demo: $(BIN)/rewardloop
	$(BIN)/rewardloop demo

test: $(BIN)/rewardloop
	$(BIN)/ruff check rewardloop tests benchmarks
	$(BIN)/mypy rewardloop
	$(BIN)/pytest

bench: $(BIN)/rewardloop
	$(BIN)/python benchmarks/bench_sim.py

clean:
	rm -rf $(VENV) build *.egg-info
