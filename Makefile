# The two commands: `make demo` and `make test`. Each creates .venv on first use.
PYTHON ?= $(shell command -v python3.11 || command -v python3)
VENV := .venv
BIN := $(VENV)/bin
# A portable llama.cpp build: some virtual CPUs advertise AMX or AVX-512 features that trap
# when used, so native CPU detection is off and the widely supported AVX2 kernels are on.
LLAMA_CMAKE_ARGS ?= -DGGML_NATIVE=OFF -DGGML_AVX=ON -DGGML_AVX2=ON -DGGML_FMA=ON -DGGML_F16C=ON
LLAMA := llama-cpp-python>=0.3.2
# Every install is pinned by constraints.txt (what `.[dev]` resolved to): pip then has nothing
# to search (the `.[dev]` install took 1.2 min pinned, 8.2 unpinned, on a fresh clone on 2
# busy cores). `make constraints` resolves afresh (the newest versions pyproject.toml allows)
# and rewrites it.
CONSTRAINTS := constraints.txt
PIP_INSTALL = $(BIN)/python -m pip install --quiet -c $(CONSTRAINTS)

.PHONY: demo test lint docs bench clean constraints

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(PIP_INSTALL) --upgrade pip

# Built from source (no wheel cache), pinned to the constraints' version.
$(VENV)/.llama: | $(BIN)/python
	CMAKE_ARGS="$(LLAMA_CMAKE_ARGS)" $(PIP_INSTALL) --no-cache-dir '$(LLAMA)'
	touch $@

$(VENV)/.local: pyproject.toml $(CONSTRAINTS) | $(VENV)/.llama
	$(PIP_INSTALL) -e '.[local,agents]'
	touch $@

$(VENV)/.dev: pyproject.toml $(CONSTRAINTS) | $(VENV)/.llama
	$(PIP_INSTALL) -e '.[dev]'
	touch $@ $(VENV)/.local

constraints: | $(BIN)/python
	$(BIN)/python -m pip install --quiet --dry-run --ignore-installed \
		--report $(VENV)/resolved.json -e '.[dev]'
	$(BIN)/python .ci/constraints.py $(VENV)/resolved.json > $(CONSTRAINTS).new
	mv $(CONSTRAINTS).new $(CONSTRAINTS)

demo: $(VENV)/.local
	$(BIN)/assay demo

lint: $(VENV)/.dev
	$(BIN)/ruff check src tests bench examples
	$(BIN)/ruff format --check src tests bench examples
	$(BIN)/mypy
	$(BIN)/lint-imports

# The documentation site, built strictly (a broken link or a missing page fails) into a
# temporary folder, then removed: `.venv/bin/mkdocs serve` previews it, `mkdocs build` writes site/.
docs: $(VENV)/.dev
	out=$$(mktemp -d) && NO_MKDOCS_2_WARNING=1 $(BIN)/mkdocs build --strict --quiet \
		--site-dir "$$out"; status=$$?; rm -rf "$$out"; exit $$status

test: $(VENV)/.dev lint docs
	$(BIN)/python -m pytest

bench: $(VENV)/.dev
	$(BIN)/python bench/engine.py

clean:
	rm -rf $(VENV) .assay .pytest_cache .mypy_cache .ruff_cache
