# SearchDesk — the README names `make run` and `make test`; both set everything up themselves.
PYTHON ?= python3
VENV   := .venv
PY     := $(VENV)/bin/python
STAMP  := $(VENV)/.installed
# setuptools tells every editable install, in a box of asterisks, that same-named folders in the working
# directory may shadow the package; ours are the package. Only that one message is silenced.
EDITABLE := PYTHONWARNINGS="ignore:Editable installation"

.PHONY: run test system-packages lint workflow-lint bench bundle bundle-sizes screenshots lock clean

$(STAMP): pyproject.toml constraints.txt
	@$(PYTHON) -c 'import sys; sys.exit(0 if sys.version_info >= (3, 11) else "SearchDesk needs Python 3.11 or later: run make with PYTHON=python3.11 (or newer).")'
	@$(PYTHON) -c 'import ensurepip, venv' 2>/dev/null || bash scripts/system-packages.sh venv
	@test -x $(PY) && $(PY) -c 'import sys; sys.exit(sys.version_info < (3, 11))' || { rm -rf $(VENV); $(PYTHON) -m venv $(VENV); }
	$(PY) -m pip install --quiet --disable-pip-version-check --upgrade "pip>=24"
	$(EDITABLE) $(PY) -m pip install --quiet --disable-pip-version-check -c constraints.txt -e '.[desktop,test]'
	@touch $(STAMP)

# With a display, the desktop app on the demo; with none, the server's self-check on the demo. On Linux
# the system packages come first (scripts/system-packages.sh: installed as root or with sudo, else the one
# command to run), and the app names any library Qt's window system still lacks before it opens a window.
run: $(STAMP)
	@if [ -n "$$DISPLAY$$WAYLAND_DISPLAY" ] || [ "$$(uname -s)" != "Linux" ]; then \
		bash scripts/system-packages.sh run && $(VENV)/bin/searchdesk --demo; \
	else \
		echo "No display found: running the server's self-check on the demo instead."; \
		$(VENV)/bin/searchdesk-server --check --demo; \
	fi

system-packages:
	@bash scripts/system-packages.sh test

lint: $(STAMP) workflow-lint
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .
	$(VENV)/bin/mypy

# The GitHub workflows (.github/workflows): actionlint (syntax, expressions, runner labels) and zizmor
# (pinning, permissions, injection), both pinned in constraints.txt; zizmor offline, with no token.
workflow-lint: $(STAMP)
	$(VENV)/bin/actionlint -no-color
	env -u GH_TOKEN -u GITHUB_TOKEN $(VENV)/bin/zizmor --offline --no-progress --quiet .github/workflows

test: system-packages lint
	$(PY) -m pytest -n 2 --dist loadgroup -q

# Renders the app's windows to docs/images/, light and dark (look at them before committing). The dark
# pictures need a platform that switches colour schemes: Qt's xcb on Xvfb (GNOME theme) when there is one.
screenshots: $(STAMP)
	@if command -v xvfb-run >/dev/null 2>&1; then \
		xvfb-run -a -s "-screen 0 1600x1600x24 -nolisten tcp" env QT_QPA_PLATFORM=xcb XDG_CURRENT_DESKTOP=GNOME \
			$(PY) -m searchdesk_desktop.screenshots docs/images; \
	else \
		QT_QPA_PLATFORM=offscreen $(PY) -m searchdesk_desktop.screenshots docs/images; \
	fi

bench: $(STAMP)
	$(PY) tests/bench/run.py --write docs/performance.md $(if $(BEFORE),--before $(BEFORE))

# The frozen app (dist/SearchDesk), the server-only build, this OS's .mcpb (Linux: also the tarball),
# then the smoke test of the frozen programs. Pinned by constraints.txt; see packaging/README.md.
BUNDLE_STAMP := $(VENV)/.bundle-installed
MEASUREMENTS ?= build/MEASUREMENTS.md

$(BUNDLE_STAMP): $(STAMP) pyproject.toml constraints.txt
	$(EDITABLE) $(PY) -m pip install --quiet --disable-pip-version-check -c constraints.txt -e '.[desktop,bundle]'
	@touch $(BUNDLE_STAMP)

bundle: $(BUNDLE_STAMP)
	@bash scripts/system-packages.sh bundle
	$(PY) packaging/bundle.py
	$(PY) packaging/smoke.py --write $(MEASUREMENTS)

# What each size cut saves: the app built without the cuts, then with them, compared (packaging/sizes.py)
# in the measurements; `make bundle-sizes MEASUREMENTS=packaging/MEASUREMENTS.md` refreshes the committed copy.
bundle-sizes: $(BUNDLE_STAMP)
	SEARCHDESK_BUILD_NO_CUTS=1 $(PY) packaging/bundle.py
	$(PY) packaging/sizes.py snapshot dist/SearchDesk build/sizes-uncut.json
	$(PY) packaging/bundle.py
	$(PY) packaging/smoke.py --write $(MEASUREMENTS)

# The pinned versions (constraints.txt), the release's hashed lock (packaging/release-lock.txt) and the
# update signer's (packaging/signer-requirements.txt), from one resolution for macOS, Windows and Linux; no
# macOS wheel for a newer macOS than the app's minimum; today's pins are kept where they still fit, and
# `make lock UPGRADE=1` re-resolves everything. Asks only PyPI.
lock: $(STAMP)
	$(PY) packaging/lock.py $(if $(UPGRADE),--upgrade)

clean:
	rm -rf $(VENV) build dist .pytest_cache .mypy_cache .ruff_cache
