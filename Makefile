# SearchDesk — the README names `make run` and `make test`; both set everything up themselves.
PYTHON ?= python3
VENV   := .venv
PY     := $(VENV)/bin/python
STAMP  := $(VENV)/.installed

.PHONY: run test lint bench bundle screenshots clean

$(STAMP): pyproject.toml constraints.txt
	@test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --disable-pip-version-check --upgrade "pip>=24"
	$(PY) -m pip install --quiet --disable-pip-version-check -c constraints.txt -e '.[desktop,test]'
	@touch $(STAMP)

# With a display, the desktop app on the demo; with none, the server's self-check on the demo.
run: $(STAMP)
	@if [ -n "$$DISPLAY$$WAYLAND_DISPLAY" ] || [ "$$(uname -s)" != "Linux" ]; then \
		$(VENV)/bin/searchdesk --demo; \
	else \
		echo "No display found: running the server's self-check on the demo instead."; \
		$(VENV)/bin/searchdesk-server --check --demo; \
	fi

lint: $(STAMP)
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .
	$(VENV)/bin/mypy

test: lint
	$(PY) -m pytest -n 2 --dist loadgroup -q

bench: $(STAMP)
	$(PY) tests/bench/run.py --write docs/performance.md

clean:
	rm -rf $(VENV) build dist .pytest_cache .mypy_cache .ruff_cache
