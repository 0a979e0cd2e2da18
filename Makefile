# The README's commands: `make run` (the whole service on zero-config defaults) and
# `make test` (the full suite, on the defaults and on PostgreSQL + Redis). `make lint` is CI's.
SHELL := /bin/bash
.SHELLFLAGS := -euo pipefail -c
.DEFAULT_GOAL := help

VENV := .venv
BIN := $(VENV)/bin
PYTHON := $(BIN)/python
# Reinstall the project only when pyproject.toml or the lock file changed since the last
# install; every package is installed at the version the lock file pins.
STAMP := $(VENV)/.installed-stamp
LOCK := requirements.lock
PORT ?= 8000
# Links in webhook events start with SITE_URL: by default the address `make run` serves
# (honcho gives each process its own PORT, so the workers cannot derive it themselves).
# A SITE_URL in the environment or in .env wins.
SITE_URL ?= http://127.0.0.1:$(PORT)
# `make run` serves what readers get: DEBUG off (the site's own 404 and 500 pages, hashed
# static files served by whitenoise), over plain HTTP on this machine. `DEBUG=1 make run`
# gives Django's debug pages and static files read straight from static/ for development.
DEBUG ?= 0
VAR_DIR ?= $(or $(CURATION_VAR_DIR),var)
SECRET_KEY_FILE := $(VAR_DIR)/secret_key
# With DEBUG off the settings require what production must set; these are the values for
# this machine only (a random key kept under var/, the loopback names, no HTTPS).
LOCAL_ENV := SECRET_KEY="$$(cat $(SECRET_KEY_FILE))" \
	ALLOWED_HOSTS="$${ALLOWED_HOSTS:-127.0.0.1,localhost,[::1]}" \
	CSRF_TRUSTED_ORIGINS="$${CSRF_TRUSTED_ORIGINS:-http://127.0.0.1:$(PORT),http://localhost:$(PORT)}" \
	SECURE_SSL_REDIRECT=0 SESSION_COOKIE_SECURE=0 CSRF_COOKIE_SECURE=0 SECURE_HSTS_SECONDS=0 \
	SECURE_HSTS_INCLUDE_SUBDOMAINS=0 SECURE_HSTS_PRELOAD=0
RUN_ENV := DEBUG=$(DEBUG) $(if $(filter 0 false no off,$(DEBUG)),$(LOCAL_ENV))

.PHONY: help venv run test lint lock

help:
	@echo "make run   - set up, load the demo and run web + Celery worker + beat (Ctrl-C stops)"
	@echo "make test  - set up and run the full test suite on SQLite and on PostgreSQL + Redis"
	@echo "make lint  - ruff, import contracts, mypy (new errors only), Django checks (also --deploy), missing migrations"
	@echo "make lock  - pin every package again at the newest versions pyproject.toml allows"

$(PYTHON):
	python3 -m venv $(VENV)
	$(PYTHON) -m pip install --quiet --upgrade pip

$(STAMP): pyproject.toml $(LOCK) | $(PYTHON)
	$(PYTHON) -m pip install --quiet -e ".[dev]" -c $(LOCK)
	touch $(STAMP)

# In a venv of its own, so that what is pinned is what pyproject.toml asks for and no more.
lock:
	rm -rf .venv-lock
	python3 -m venv .venv-lock
	.venv-lock/bin/python -m pip install --quiet --upgrade pip
	.venv-lock/bin/python -m pip install --quiet -e ".[dev]"
	{ sed -n '/^#/p' $(LOCK); .venv-lock/bin/python -m pip freeze --exclude-editable; } > $(LOCK).new
	mv $(LOCK).new $(LOCK)
	rm -rf .venv-lock

venv: $(STAMP)

$(SECRET_KEY_FILE):
	mkdir -p $(VAR_DIR)
	umask 077 && $(PYTHON) -c 'import secrets; print(secrets.token_urlsafe(50))' > $@

run: venv $(SECRET_KEY_FILE)
	export $(RUN_ENV); \
	$(PYTHON) manage.py migrate --noinput; \
	$(PYTHON) manage.py load_demo --if-missing; \
	$(PYTHON) manage.py create_demo_editor; \
	$(if $(filter 0 false no off,$(DEBUG)),$(PYTHON) manage.py collectstatic --noinput --verbosity 0)
	@echo
	@echo "Curation is starting: web server, Celery worker and Celery beat (Ctrl-C stops all)."
	@echo "  Reader site:  http://127.0.0.1:$(PORT)/"
	@echo "  Editor admin: http://127.0.0.1:$(PORT)/admin/  (log in with the editor login above)"
	@echo
	export $(RUN_ENV); \
	PATH="$(CURDIR)/$(BIN):$$PATH" SITE_URL="$(SITE_URL)" exec $(BIN)/honcho start --no-colour -p $(PORT) -f Procfile

test: venv
	bash scripts/test.sh

lint: venv
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/lint-imports
	$(PYTHON) scripts/mypy_baseline.py
	$(PYTHON) manage.py check
	$(PYTHON) manage.py makemigrations --check --dry-run
	DEBUG=0 \
	SECRET_KEY="$$($(PYTHON) -c 'import secrets; print(secrets.token_urlsafe(50))')" \
	ALLOWED_HOSTS=curation.example.com \
	CSRF_TRUSTED_ORIGINS=https://curation.example.com \
	BEHIND_TLS_PROXY=1 \
	$(PYTHON) manage.py check --deploy --fail-level WARNING
