# Quick start targets. Both install what they need first (PyPI only).
PYTHON ?= python3
PIP_FLAGS ?= --quiet --disable-pip-version-check

.PHONY: install demo test bench webui

install:
	@echo "installing lightrag-pg with its extras (pip; a few minutes the first time, seconds after)"
	$(PYTHON) -m pip install $(PIP_FLAGS) -e '.[embedded,offline,server,dev]'

demo: install
	$(PYTHON) -m lightrag_pg demo

test: install
	$(PYTHON) -m mypy
	$(PYTHON) -m pytest -q -n auto --maxprocesses=4 --dist loadfile

bench: install
	$(PYTHON) bench/ingest.py --docs 20
	$(PYTHON) bench/query.py --docs 20

# Rebuild the web UI into lightrag_pg/server/static/webui (needs node and npm; commit the result).
webui:
	cd webui && npm install --no-save --no-audit --no-fund && npm run build
