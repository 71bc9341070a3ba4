"""Production: what a server imports by default (config/wsgi.py, config/celery_app.py).

Required from the environment, failing loudly at start-up when missing: DJANGO_SECRET_KEY,
DJANGO_ALLOWED_HOSTS, DATABASE_URL, REDIS_URL. HTTPS is assumed (a TLS-terminating proxy
sets X-Forwarded-Proto): SSL redirect, HSTS and secure cookies are on by default and each can
be turned off or tuned by its variable. `manage.py check --deploy` prints no warning with these
defaults (tests/security/test_settings.py)."""

from .base import *  # noqa: F403
from .base import env

DEBUG = False
SECRET_KEY = env("DJANGO_SECRET_KEY")
ALLOWED_HOSTS = env.list("DJANGO_ALLOWED_HOSTS")
DATABASES = {"default": env.db("DATABASE_URL")}  # noqa: F405 (no localhost default here)
DATABASES["default"]["ATOMIC_REQUESTS"] = False
DATABASES["default"]["CONN_MAX_AGE"] = env.int("DB_CONN_MAX_AGE", default=60)
DATABASES["default"]["CONN_HEALTH_CHECKS"] = True
REDIS_URL = env("REDIS_URL")
CACHES["default"]["LOCATION"] = REDIS_URL  # noqa: F405
CELERY_BROKER_URL = env("CELERY_BROKER_URL", default=REDIS_URL)
QUEUEING_REDIS_URL = env("QUEUEING_REDIS_URL", default=REDIS_URL)

# Behind a TLS-terminating proxy that sets X-Forwarded-Proto (and strips it from clients).
SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")
SECURE_SSL_REDIRECT = env.bool("SECURE_SSL_REDIRECT", default=True)
# Probes and the scraper talk to the process directly, over plain HTTP.
SECURE_REDIRECT_EXEMPT = [r"^healthz$", r"^readyz$", r"^metrics/?$"]
SECURE_HSTS_SECONDS = env.int("SECURE_HSTS_SECONDS", default=60 * 60 * 24 * 365)
SECURE_HSTS_INCLUDE_SUBDOMAINS = env.bool("SECURE_HSTS_INCLUDE_SUBDOMAINS", default=True)
SECURE_HSTS_PRELOAD = env.bool("SECURE_HSTS_PRELOAD", default=True)
SESSION_COOKIE_SECURE = env.bool("SESSION_COOKIE_SECURE", default=True)
CSRF_COOKIE_SECURE = env.bool("CSRF_COOKIE_SECURE", default=True)
SESSION_COOKIE_HTTPONLY = True
X_FRAME_OPTIONS = "DENY"

# EMAIL_URL gives the SMTP server (host, port, user, password, TLS). django-environ's parse of
# it names a backend too (SMTP's, for any smtp:// URL): EMAIL_BACKEND, when set, wins over it.
EMAIL_CONFIG = env.email_url("EMAIL_URL", default="smtp://localhost:25")
vars().update(EMAIL_CONFIG)
EMAIL_BACKEND = env("EMAIL_BACKEND", default=EMAIL_CONFIG["EMAIL_BACKEND"])
