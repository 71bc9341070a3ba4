from .base import *  # noqa: F403
from .base import LOGGING, env

DEBUG = False
PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
CELERY_TASK_ALWAYS_EAGER = False
EMAIL_BACKEND = "django.core.mail.backends.locmem.EmailBackend"
STORAGES = {
    "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
    "staticfiles": {"BACKEND": "django.contrib.staticfiles.storage.StaticFilesStorage"},
}
LOGGING["root"]["level"] = env("LOG_LEVEL", default="WARNING").strip().upper()
WHITENOISE_AUTOREFRESH = True
# The suite makes thousands of requests from one address; the throttle tests set their own.
THROTTLE_RATES = {
    "anon": "100000/min",
    "user": "100000/min",
    "login": "100000/min",
    "mail_inbound": "100000/min",
}
# Tests change rules and templates with queryset updates too: no memo (tests/test_memo.py
# turns it on where it is the subject).
REFERENCE_CACHE_SECONDS = env.float("REFERENCE_CACHE_SECONDS", default=0)
