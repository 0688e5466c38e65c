# Two entry points (see README): `make demo` and `make test`. Each installs what it needs, once: pip
# runs again only when pyproject.toml or constraints.txt changes (or the venv is new), so a second
# `make demo` starts at once. The stamps live inside the venv: deleting it starts over.
PYTHON ?= python3
VENV ?= .venv
PY := $(VENV)/bin/python
PIP := $(VENV)/bin/pip
INSTALLED := $(VENV)/.dpgan-installed
INSTALLED_TEST := $(VENV)/.dpgan-installed-test
# pytest workers (pytest-xdist): each test fit runs on one thread (tests/conftest.py), so two workers
# use both cores of the project's 2-core machine; `make test TEST_WORKERS=8` on a larger one
TEST_WORKERS ?= 2

.PHONY: install install-test demo test lint

$(PY):
	$(PYTHON) -m venv $(VENV)
	$(PIP) install -q --upgrade pip

$(INSTALLED): pyproject.toml constraints.txt | $(PY)
	$(PIP) install -q -c constraints.txt torch==2.13.0
	$(PIP) install -q -c constraints.txt -e .
	@touch $@

$(INSTALLED_TEST): $(INSTALLED) pyproject.toml constraints.txt
	$(PIP) install -q -c constraints.txt -e ".[test]"
	@# Best effort: the report test opens report.html in a real headless browser (Debian's chromium).
	@command -v chromium >/dev/null 2>&1 || command -v chromium-browser >/dev/null 2>&1 || \
	  { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium; } >/dev/null 2>&1 || \
	  echo "note: could not install chromium (needs apt-get as root); the report's browser test will be skipped"
	@touch $@

install: $(INSTALLED)

install-test: $(INSTALLED_TEST)

# A second `make demo` refuses to replace the first one's outputs and says how: DEMO_FLAGS=--overwrite.
demo: install
	$(VENV)/bin/dpgan demo $(DEMO_FLAGS)

test: install-test
	$(VENV)/bin/ruff check src tests bench
	$(VENV)/bin/ruff format --check src tests bench
	@# the documentation site (mkdocs.yml): --strict fails on a broken page, link or anchor; not kept.
	@# No -q: mkdocs 1.6.1 then stops counting warnings, and --strict passes a broken link.
	$(VENV)/bin/mkdocs build --strict -d "$${TMPDIR:-/tmp}/dpgan-site"
	$(PY) -m pytest tests -n $(TEST_WORKERS) --dist worksteal

lint: install-test
	$(VENV)/bin/ruff check src tests bench
	$(VENV)/bin/ruff format --check src tests bench
