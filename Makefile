# Two commands for a newcomer: `make run` and `make test`. Both create .venv when missing and
# install the project with everything it needs first, at the versions of `uv.lock`.
#
# uv.lock pins the whole dependency tree (every extra, with hashes) and `uv sync --locked` installs
# exactly that, refusing a lock that no longer matches pyproject.toml: the same install on every
# machine, whatever was released last night. pyproject.toml keeps ranges for people who install
# the library; the lock is what this repository installs. `make upgrade` moves the lock.
PYTHON ?= python3
UV_VERSION := 0.13.9
UV := $(PYTHON) -m uv
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed-stamp
SERVE_STAMP := $(VENV)/.installed-serve-stamp
POSTGRES_URL ?= postgresql://postgres@127.0.0.1:5432/test
HOST ?= 127.0.0.1
PORT ?= 8000
export UV_PYTHON := $(PYTHON)

.PHONY: install uv catalogs system-deps browser-deps editors-deps node-client vision-data run test lint typecheck test-unit test-postgres bench upgrade clean

# uv itself, from the package registry, at one version, when this Python lacks it.
uv:
	@$(UV) --version >/dev/null 2>&1 || $(PYTHON) -m pip install --quiet "uv==$(UV_VERSION)" || \
		$(PYTHON) -m pip install --quiet --user "uv==$(UV_VERSION)"

# Serving needs the server, reports and vision extras; the tests add the language server and the
# development tools (pytest, mypy, moto, ...), which `make run` does not install (`--inexact`
# leaves them in place when `make test` installed them first).
$(SERVE_STAMP): pyproject.toml uv.lock
	@$(MAKE) --no-print-directory uv
	$(UV) sync --locked --inexact --quiet --extra server --extra reports --extra vision
	touch $(SERVE_STAMP)

$(STAMP): pyproject.toml uv.lock
	@$(MAKE) --no-print-directory uv
	$(UV) sync --locked --quiet --all-extras
	touch $(STAMP) $(SERVE_STAMP)

install: $(STAMP) catalogs

# The UI catalogs' compiled `.mo` files are not in git: made here from each `.po` that is newer
# than its `.mo` (a few tens of ms; nothing when current), so no request pays it. The server
# would compile a missing or stale one itself when it first loads it.
catalogs: $(SERVE_STAMP)
	@$(PY) -m server.web.catalogs

# Tools from Debian's packages that the tests use: pdftoppm (poppler-utils) renders a report page
# to PNG; chromium runs the browser tests (Playwright drives it: its own browser download cannot
# run here); nginx is the load balancer of the multi-process test (tests/cluster.py). Installed
# when missing and we are root; otherwise say what to install.
SYSTEM_PACKAGES := poppler-utils:pdftoppm chromium:chromium npm:npm nginx-light:nginx

system-deps:
	@missing=""; for pair in $(SYSTEM_PACKAGES); do \
		command -v "$${pair#*:}" >/dev/null 2>&1 || missing="$$missing $${pair%%:*}"; done; \
	if [ -n "$$missing" ]; then \
		if [ "$$(id -u)" = "0" ] && command -v apt-get >/dev/null 2>&1; then \
			echo "installing$$missing"; \
			apt-get install -y -qq $$missing >/dev/null 2>&1 || \
			 { apt-get update -qq >/dev/null 2>&1 && apt-get install -y -qq $$missing >/dev/null; }; \
		else echo "missing Debian packages:$$missing (the report and browser tests need them)"; exit 1; fi; fi

# The browser tests' JavaScript (axe-core, pinned with its integrity in package-lock.json),
# installed from the npm registry into tests/browser/node_modules (git-ignored); the tests load it
# from there, nothing is fetched while they run.
browser-deps: system-deps
	cd tests/browser && npm ci --ignore-scripts --no-audit --no-fund --loglevel=error

## The public Node client library, unmodified, built for tests/clients (pinned commit). It is not
## on the npm registry (`npm view autoinspector` is 404), so it comes from GitHub: not part of
## `make test` (CI cannot reach GitHub); tests/server/test_client_contract.py sends its bodies.
NODE_CLIENT_COMMIT ?= a0ff01610481882942f18c7590bac9ae88e80ca3
NODE_CLIENT_DIR := build/clients/autoinspector-node
node-client:
	rm -rf $(NODE_CLIENT_DIR) && mkdir -p $(NODE_CLIENT_DIR)
	git -C $(NODE_CLIENT_DIR) init --quiet
	git -C $(NODE_CLIENT_DIR) fetch --quiet --depth 1 \
		https://github.com/autoinspector-global/autoinspector-node $(NODE_CLIENT_COMMIT)
	git -C $(NODE_CLIENT_DIR) checkout --quiet FETCH_HEAD
	cd $(NODE_CLIENT_DIR) && npm install --omit=dev --ignore-scripts --no-audit --no-fund \
		--loglevel=error
	# The library's own tsc; it lacks @types/node (a dev dependency), which stops no output.
	cd $(NODE_CLIENT_DIR) && (./node_modules/.bin/tsc > /dev/null || test -f dist/index.js)

# Real face photos for the vision tests: the face_recognition 1.3.0 source distribution (from the
# package registry) holds several photos of one person and one of another; its tests/test_images/
# are extracted into build/vision-data/faces/. Nothing is fetched while the tests run.
VISION_DATA := build/vision-data
vision-data: $(VISION_DATA)/faces/biden.jpg $(VISION_DATA)/registry/.done

# The second real set, held out: sdists on the registry ship test photos (plates of Argentina,
# the Czech Republic and Vietnam with their cars' colors, two specimen passports, two people's
# portraits), and a tuning set of 16 other real cars (role `tuning`: a threshold may be chosen
# on them, no held-out figure reads them); benchmarks/vision/registry_photos.json lists them
# with their labels, licenses and sha256, and the script extracts them into
# build/vision-data/registry/ (only the missing ones;
# the face_recognition sdist above is read where it lies). The shared real set
# (../shared/vision-real) is read in place by tests/vision/test_real_photos.py and bench_vision.
$(VISION_DATA)/registry/.done: benchmarks/vision/registry_photos.json \
		benchmarks/vision/registry_photos.py $(VISION_DATA)/faces/biden.jpg $(STAMP)
	$(PY) -m benchmarks.vision.registry_photos $(VISION_DATA)/registry
	touch $@

$(VISION_DATA)/faces/biden.jpg: $(STAMP)
	mkdir -p $(VISION_DATA)/faces
	$(PY) -m pip download --quiet --no-binary :all: --no-deps face_recognition==1.3.0 \
		-d $(VISION_DATA)
	tar -xzf $(VISION_DATA)/face_recognition-1.3.0.tar.gz -C $(VISION_DATA)/faces \
		--strip-components=3 face_recognition-1.3.0/tests/test_images
	touch $@

# The VS Code extension's grammar test runs the real TextMate engine from npm (pinned in
# editors/vscode/package-lock.json).
editors-deps:
	cd editors/vscode && npm ci --ignore-scripts --no-audit --no-fund --loglevel=error

## Start the service on SQLite (./data) with a demo company and print its keys.
run: $(SERVE_STAMP) catalogs
	$(VENV)/bin/inspectlang serve --demo --host $(HOST) --port $(PORT) --data-dir data

## Lint, type-check, then the whole suite on SQLite and, when reachable, on PostgreSQL.
test: $(STAMP) system-deps browser-deps editors-deps vision-data lint typecheck test-unit test-postgres

# lint-imports: the layering inspectlang <- runtime <- server and no import cycles (the
# contracts are in pyproject.toml).
lint: $(STAMP)
	$(VENV)/bin/ruff check inspectlang runtime server tests benchmarks
	$(VENV)/bin/ruff format --check inspectlang runtime server
	$(VENV)/bin/lint-imports

typecheck: $(STAMP)
	$(VENV)/bin/mypy

# The suites run on every core (pytest-xdist), each test file whole on one worker, so its
# module fixtures (a served app, a database) are made once; each worker has its own temporary
# folders and, on PostgreSQL, its own database (`test_gw0`, ...). On 2 cores: SQLite 637 s ->
# 340-360 s, PostgreSQL 377 s -> 306-315 s. TEST_WORKERS=0 runs all in one process.
TEST_WORKERS ?= auto
PYTEST_PARALLEL := -n $(TEST_WORKERS) --dist loadfile

test-unit: $(STAMP) catalogs
	$(PY) -m pytest -q $(PYTEST_PARALLEL)

# The database tests again on PostgreSQL. Skipped with a plain message when PostgreSQL is not
# reachable, unless REQUIRE_POSTGRES=1 (as .ci/run sets), where that is a failure.
test-postgres: $(STAMP)
	@if $(PY) -c "import psycopg,sys; psycopg.connect('$(POSTGRES_URL)', connect_timeout=3).close()" 2>/dev/null; then \
		echo "== database tests on PostgreSQL ($(POSTGRES_URL))"; \
		TEST_DATABASE_URL='$(POSTGRES_URL)' $(PY) -m pytest -q -m db $(PYTEST_PARALLEL); \
	elif [ "$(REQUIRE_POSTGRES)" = "1" ]; then \
		echo "PostgreSQL at $(POSTGRES_URL) is unreachable and REQUIRE_POSTGRES=1: failing."; exit 1; \
	else \
		echo "== PostgreSQL run SKIPPED: $(POSTGRES_URL) is unreachable (everything ran on SQLite)."; \
	fi

# wrk (Debian's package) drives the API benchmark: a Python client is slower than the server.
bench: $(STAMP) system-deps
	@command -v wrk >/dev/null 2>&1 || { [ "$$(id -u)" = "0" ] && apt-get install -y -qq wrk >/dev/null 2>&1; } || \
		echo "wrk is missing: bench_api.py falls back to a Python client (ratios pulled towards 1)"
	for b in benchmarks/bench_*.py; do $(PY) $$b || exit 1; done

## Move the lock to the newest releases that pyproject.toml's ranges allow, install them and
## run every test: when to run it is in docs/operations.md.
upgrade:
	@$(MAKE) --no-print-directory uv
	$(UV) lock --upgrade
	$(UV) sync --locked --all-extras
	touch $(STAMP) $(SERVE_STAMP)
	$(MAKE) test

clean:
	rm -rf $(VENV) .pytest_cache .mypy_cache .ruff_cache .hypothesis .grimp_cache .import_linter_cache data
