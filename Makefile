# The two commands: `make demo` and `make test`. Each creates .venv on first use.
PYTHON ?= $(shell command -v python3.11 || command -v python3)
VENV := .venv
BIN := $(VENV)/bin
# A portable llama.cpp build: some virtual CPUs advertise AMX or AVX-512 features that trap
# when used, so native CPU detection is off and the widely supported AVX2 kernels are on.
LLAMA_CMAKE_ARGS ?= -DGGML_NATIVE=OFF -DGGML_AVX=ON -DGGML_AVX2=ON -DGGML_FMA=ON -DGGML_F16C=ON
LLAMA := llama-cpp-python>=0.3.2

.PHONY: demo test lint bench clean

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip

$(VENV)/.llama: | $(BIN)/python
	CMAKE_ARGS="$(LLAMA_CMAKE_ARGS)" $(BIN)/pip install --quiet --no-cache-dir '$(LLAMA)'
	touch $@

$(VENV)/.local: pyproject.toml | $(VENV)/.llama
	$(BIN)/pip install --quiet -e '.[local,agents]'
	touch $@

$(VENV)/.dev: pyproject.toml | $(VENV)/.llama
	$(BIN)/pip install --quiet -e '.[dev]'
	touch $@ $(VENV)/.local

demo: $(VENV)/.local
	$(BIN)/assay demo

lint: $(VENV)/.dev
	$(BIN)/ruff check src tests bench examples
	$(BIN)/ruff format --check src tests bench examples
	$(BIN)/mypy
	$(BIN)/lint-imports

test: $(VENV)/.dev lint
	$(BIN)/python -m pytest

bench: $(VENV)/.dev
	$(BIN)/python bench/engine.py

clean:
	rm -rf $(VENV) .assay .pytest_cache .mypy_cache .ruff_cache
