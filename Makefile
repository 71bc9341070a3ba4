# Two commands on a fresh machine (see README.md): `make run` and `make test`.
# Both create .venv when missing and (re)install the project only when pyproject.toml changed.

PYTHON3 ?= python3
VENV := .venv
PYTHON := $(VENV)/bin/python
INSTALLED := $(VENV)/.installed-pyproject.stamp
ARGS ?=

.PHONY: run dev test test-pgbouncer check install messages screenshots

# Production settings with the documented environment (placeholders: nothing is connected).
DEPLOY_ENV := DJANGO_SETTINGS_MODULE=config.settings.production \
	DJANGO_SECRET_KEY=check-deploy-placeholder-key-0123456789-abcdefghijklmnopqrstuvwxyz \
	DJANGO_ALLOWED_HOSTS=desk.example.com DATABASE_URL=postgres://check@127.0.0.1:1/check \
	REDIS_URL=redis://127.0.0.1:1/0

# The product as production serves it (config.settings.local: DEBUG off, persistent database
# connections, collected static files) on http://127.0.0.1:8000; PORT= and HOST= change where.
run: $(INSTALLED)
	$(PYTHON) -m devserver.run

# For working on the code: Django's auto-reloading development server instead of gunicorn, with
# debug pages and one database connection per request (config.settings.dev).
dev: $(INSTALLED)
	WEB_SERVER=runserver $(PYTHON) -m devserver.run

# The whole suite, then (when ARGS is empty) its database-heavy tests again through PgBouncer
# in transaction pooling mode with DB_PREPARED_STATEMENTS=false (devserver/test.py).
test: check
	$(PYTHON) -m devserver.test $(ARGS)

# Only the PgBouncer job (Debian's pgbouncer, installed when missing); ARGS adds pytest options.
test-pgbouncer: $(INSTALLED)
	$(PYTHON) -m devserver.test --pgbouncer $(ARGS)

# The static checks `make test` (and so CI) runs first: lint and format, the layers contract
# (every module in a layer), types (mypy with django-stubs: [tool.mypy] in pyproject.toml),
# commit subjects, no model change without its migration, and Django's deployment checks on
# production settings.
check: $(INSTALLED)
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .
	$(VENV)/bin/lint-imports --no-cache
	$(VENV)/bin/mypy
	$(PYTHON) -m devserver.layers
	$(PYTHON) -m devserver.commits
	$(PYTHON) -W ignore::RuntimeWarning manage.py makemigrations --check --dry-run
	$(DEPLOY_ENV) $(PYTHON) manage.py check --deploy --fail-level WARNING

install: $(INSTALLED)

# The layout screenshots in docs/screenshots/ (docs/console.md): the layout browser tests, which
# also write their pictures there when TICKETDESK_DOCS_SCREENSHOTS is set.
screenshots: $(INSTALLED)
	TICKETDESK_DOCS_SCREENSHOTS=$(CURDIR)/docs/screenshots $(PYTHON) -m devserver.test tests/browser/test_layout.py

# The Simplified Chinese catalogue: collect the marked strings into locale/zh_Hans/.../django.po
# (translate the new entries there; locale/GLOSSARY.zh_Hans.md fixes the words), then compile
# the .mo that ships in the repository. Needs GNU gettext (apt-get install gettext); running
# the product and the tests does not.
messages: $(INSTALLED)
	$(PYTHON) manage.py makemessages -l zh_Hans --no-obsolete -i '.venv/*' -i 'bench/*' \
		-i 'tests/*' -i 'staticfiles/*' -i 'test-artifacts/*' -i 'docs/*' -i 'devserver/*'
	$(PYTHON) manage.py compilemessages -l zh_Hans --ignore '.venv/*'

$(PYTHON):
	$(PYTHON3) -m venv $(VENV)

$(INSTALLED): pyproject.toml | $(PYTHON)
	$(PYTHON) -m pip install -e '.[dev]'
	touch $@
