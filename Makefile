# The two commands of the README: `make serve` and `make test`. Each installs what it needs first.
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed-stamp
NPM ?= npm
WEB := frontend
WEB_DEPS := $(WEB)/node_modules/.package-lock.json
WEB_BUILD := src/dragdl/server/static/index.html
WEB_SOURCES := $(shell find $(WEB)/src $(WEB)/public -type f 2>/dev/null) \
	$(WEB)/index.html $(WEB)/vite.config.ts $(WEB)/tsconfig.json

.PHONY: install serve test lint typecheck unit bench clean frontend frontend-test chromium

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e ".[dev]"
	touch $(STAMP)

install: $(STAMP)

# The web UI: npm ci when the lock file changes, a build (type check included) when a source does.
$(WEB_DEPS): $(WEB)/package-lock.json
	cd $(WEB) && $(NPM) ci --no-audit --no-fund

$(WEB_BUILD): $(WEB_DEPS) $(WEB_SOURCES)
	cd $(WEB) && $(NPM) run build

frontend: $(WEB_BUILD)

frontend-test: $(WEB_DEPS)
	cd $(WEB) && $(NPM) test

# The browser tests drive Debian's Chromium (a CJK font for the Chinese screenshots).
chromium:
	@test -x /usr/bin/chromium || { \
		SUDO=$$([ "$$(id -u)" = 0 ] || echo sudo); \
		$$SUDO apt-get update -qq && \
		DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -qq --no-install-recommends chromium fonts-wqy-microhei; }

serve: install frontend
	$(BIN)/dragdl serve

lint: install $(WEB_DEPS)
	$(BIN)/ruff check src tests benchmarks
	$(BIN)/ruff format --check src tests benchmarks
	cd $(WEB) && $(NPM) run format:check
	cd $(WEB) && $(NPM) run lint

typecheck: install
	$(BIN)/mypy

unit: install frontend chromium
	$(BIN)/pytest

test: lint typecheck frontend-test unit

bench: install
	$(BIN)/python benchmarks/bench_train.py

clean:
	rm -rf $(VENV) .mypy_cache .ruff_cache .pytest_cache $(WEB)/node_modules src/dragdl/server/static
