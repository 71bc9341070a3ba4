"""Settings shared by every environment. 12-factor: everything that differs between
deployments comes from the environment (DATABASE_URL, REDIS_URL, CELERY_BROKER_URL, ...)."""

from datetime import timedelta
from pathlib import Path
from typing import Any

import environ
from django.core.exceptions import ImproperlyConfigured

BASE_DIR = Path(__file__).resolve().parent.parent.parent

env = environ.Env()
env.read_env(BASE_DIR / ".env", overwrite=False) if (BASE_DIR / ".env").exists() else None

SECRET_KEY = env("DJANGO_SECRET_KEY", default="dev-insecure-secret-key-change-me")
DEBUG = env.bool("DJANGO_DEBUG", default=False)
ALLOWED_HOSTS = env.list("DJANGO_ALLOWED_HOSTS", default=["localhost", "127.0.0.1", "[::1]"])
CSRF_TRUSTED_ORIGINS = env.list("DJANGO_CSRF_TRUSTED_ORIGINS", default=[])

INSTALLED_APPS = [
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "whitenoise.runserver_nostatic",
    "django.contrib.staticfiles",
    "django.contrib.humanize",  # "about 1.2 million" (config.pagination.count_text)
    "rest_framework",
    "knox",
    "axes",
    "django_filters",
    "drf_spectacular",
    "drf_spectacular_sidecar",  # Swagger UI and ReDoc served from our own static files
    "django_celery_beat",
    "config.beat",  # beat's lease and slot claims (config/beat/__init__.py)
    "accounts",
    "handler_groups",
    "notifications",
    "queueing",
    "idempotency",
    "ticketing",
    "attachments",
    "collaboration",
    "satisfaction",
    "workflow",
    "mail",
    "toolbox",
    "sla",
    "routing",
    "insight",
    "search",
    "console",
    "live",
]

MIDDLEWARE = [
    "config.request_id.RequestIdMiddleware",
    "config.limits.ApiBodyLimitMiddleware",
    "django.middleware.security.SecurityMiddleware",
    "whitenoise.middleware.WhiteNoiseMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    # The language from the cookie, else Accept-Language; the profile's choice overrides it
    # once the person is known (PreferencesMiddleware).
    "django.middleware.locale.LocaleMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    # Each person's time zone and language on every page (accounts/preferences.py).
    "accounts.preferences.PreferencesMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    # Last, as django-axes requires: turns a locked-out login into the lock-out response.
    "axes.middleware.AxesMiddleware",
]

ROOT_URLCONF = "config.urls"
WSGI_APPLICATION = "config.wsgi.application"

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [BASE_DIR / "templates"],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
            ],
        },
    },
]

DATABASES = {
    "default": env.db("DATABASE_URL", default="postgres://postgres@127.0.0.1:5432/ticketdesk"),
}
DATABASES["default"]["ATOMIC_REQUESTS"] = False
DATABASES["default"]["CONN_MAX_AGE"] = env.int("DB_CONN_MAX_AGE", default=60)
DATABASES["default"]["CONN_HEALTH_CHECKS"] = True
# config/db.py prepares the hottest raw statements on the server (only its cursors do: Django's
# own bind on the client and never prepare; the threshold keeps psycopg from preparing
# anything else). A transaction-pooling proxy that cannot keep prepared statements:
# DB_PREPARED_STATEMENTS=false (docs/adr/0004-prepared-statements.md). Such a proxy cannot
# keep a server-side cursor past its transaction either (Django declares them WITH HOLD
# outside one), so DB_SERVER_SIDE_CURSORS follows it unless set (docs/operations.md).
DB_PREPARED_STATEMENTS = env.bool("DB_PREPARED_STATEMENTS", default=True)
DB_SERVER_SIDE_CURSORS = env.bool("DB_SERVER_SIDE_CURSORS", default=DB_PREPARED_STATEMENTS)
DATABASES["default"].setdefault("OPTIONS", {})["prepare_threshold"] = (
    2**31 - 1 if DB_PREPARED_STATEMENTS else None
)
DATABASES["default"]["DISABLE_SERVER_SIDE_CURSORS"] = not DB_SERVER_SIDE_CURSORS
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

REDIS_URL = env("REDIS_URL", default="redis://127.0.0.1:6379/0")

CACHES = {
    "default": {
        "BACKEND": "django.core.cache.backends.redis.RedisCache",
        "LOCATION": REDIS_URL,
        "KEY_PREFIX": "ticketdesk",
        # Short timeouts: a dead Redis costs milliseconds on the request path (config/outage.py).
        "OPTIONS": {"socket_connect_timeout": 0.25, "socket_timeout": 0.5},
    }
}

AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.UserAttributeSimilarityValidator"},
    {
        "NAME": "django.contrib.auth.password_validation.MinimumLengthValidator",
        "OPTIONS": {"min_length": env.int("PASSWORD_MIN_LENGTH", default=10)},
    },
    {"NAME": "django.contrib.auth.password_validation.CommonPasswordValidator"},
    {"NAME": "django.contrib.auth.password_validation.NumericPasswordValidator"},
]

# django-axes checks every authentication (login page, admin, API token) first: after
# AXES_FAILURE_LIMIT failures for one username from one address, that pair is locked out for
# AXES_COOLOFF_HOURS (admin: Axes › Access attempts, delete a row to clear it; or
# `manage.py axes_reset_username NAME`).
AUTHENTICATION_BACKENDS = [
    "axes.backends.AxesStandaloneBackend",
    "django.contrib.auth.backends.ModelBackend",
]
AXES_ENABLED = env.bool("AXES_ENABLED", default=True)
AXES_FAILURE_LIMIT = env.int("AXES_FAILURE_LIMIT", default=5)
AXES_COOLOFF_TIME = env.float("AXES_COOLOFF_HOURS", default=0.25)
AXES_LOCKOUT_PARAMETERS = [["username", "ip_address"]]
AXES_RESET_ON_SUCCESS = True
AXES_LOCKOUT_CALLABLE = "accounts.lockout.lockout_response"
AXES_VERBOSE = False
# Behind a proxy, the client address comes from the header the proxy sets (X-Forwarded-For).
AXES_IPWARE_PROXY_COUNT = env.int("TRUSTED_PROXY_COUNT", default=0) or None
AXES_IPWARE_META_PRECEDENCE_ORDER = (
    ["HTTP_X_FORWARDED_FOR", "REMOTE_ADDR"]
    if env.int("TRUSTED_PROXY_COUNT", default=0)
    else ["REMOTE_ADDR"]
)

# API tokens (django-rest-knox): stored as digests, expire after TOKEN_TTL_HOURS, revoked by
# logout, logout-all and any password change (accounts/signals.py).
REST_KNOX = {
    "TOKEN_TTL": timedelta(hours=env.float("TOKEN_TTL_HOURS", default=10)),
    "AUTH_HEADER_PREFIX": "Token",
    "AUTO_REFRESH": False,
}

# The language of a person who has neither chosen one nor sent Accept-Language, and of
# notifications to them. Each page follows the profile's choice, else the language cookie the
# header switch sets, else Accept-Language (accounts/preferences.py).
LANGUAGE_CODE = "en"
LANGUAGES = [("en", "English"), ("zh-hans", "简体中文")]
LOCALE_PATHS = [BASE_DIR / "locale"]
TIME_ZONE = env("TIME_ZONE", default="UTC")
USE_I18N = True
USE_TZ = True

STATIC_URL = "static/"
STATIC_ROOT = BASE_DIR / "staticfiles"
STATICFILES_DIRS = [BASE_DIR / "static"]
# Uploaded files (attachments/): the filesystem under MEDIA_ROOT (`make run`: .data/media; a
# named volume in compose), or any S3-compatible store through django-storages when
# ATTACHMENT_STORAGE=s3 (AWS_STORAGE_BUCKET_NAME, AWS_S3_ENDPOINT_URL, AWS_ACCESS_KEY_ID,
# AWS_SECRET_ACCESS_KEY, AWS_S3_REGION_NAME), for more than one web node. Never served by
# URL: every download goes through the API's permission check.
MEDIA_ROOT = env.path("MEDIA_ROOT", default=BASE_DIR / ".data" / "media")
ATTACHMENT_STORAGE = env("ATTACHMENT_STORAGE", default="filesystem")


def s3_storage(bucket: str, **options) -> dict:
    """django-storages' S3 backend for `bucket` (endpoint_url, region_name, access_key,
    secret_key as options): private objects, signed URLs only, the same key overwritten (keys
    are content hashes: the same key is the same bytes)."""
    return {
        "BACKEND": "storages.backends.s3.S3Storage",
        "OPTIONS": {
            "bucket_name": bucket,
            "default_acl": None,
            "querystring_auth": True,
            "file_overwrite": True,
            **options,
        },
    }


if ATTACHMENT_STORAGE == "s3":
    _media = s3_storage(
        env("AWS_STORAGE_BUCKET_NAME"),
        endpoint_url=env("AWS_S3_ENDPOINT_URL", default=None),
        region_name=env("AWS_S3_REGION_NAME", default=None),
        access_key=env("AWS_ACCESS_KEY_ID", default=None),
        secret_key=env("AWS_SECRET_ACCESS_KEY", default=None),
    )
elif ATTACHMENT_STORAGE == "filesystem":
    _media = {
        "BACKEND": "django.core.files.storage.FileSystemStorage",
        "OPTIONS": {"location": MEDIA_ROOT, "base_url": None},
    }
else:
    raise ImproperlyConfigured("ATTACHMENT_STORAGE must be filesystem or s3")
STORAGES = {
    "default": _media,
    "staticfiles": {"BACKEND": "whitenoise.storage.CompressedStaticFilesStorage"},
}

# Attachments (attachments/): per file and per ticket (413 beyond); the types accepted, as
# decided from the content by libmagic (415 otherwise: executables, scripts and HTML are not
# in the default list); an upload not attached within ATTACHMENT_UNATTACHED_HOURS is removed;
# its uploader may remove it for ATTACHMENT_REMOVE_MINUTES after uploading (staff always).
ATTACHMENT_MAX_BYTES = env.int("ATTACHMENT_MAX_BYTES", default=20 * 1024 * 1024)
ATTACHMENT_TICKET_MAX_BYTES = env.int("ATTACHMENT_TICKET_MAX_BYTES", default=100 * 1024 * 1024)
ATTACHMENT_ALLOWED_TYPES = env.list(
    "ATTACHMENT_ALLOWED_TYPES",
    default=[
        "image/png",
        "image/jpeg",
        "image/gif",
        "image/webp",
        "image/bmp",
        "image/tiff",
        "image/heic",
        "application/pdf",
        "text/plain",
        "text/csv",
        "application/csv",
        "application/json",
        "application/zip",
        "application/msword",
        "application/vnd.ms-excel",
        "application/vnd.ms-powerpoint",
        "application/vnd.openxmlformats-officedocument.wordprocessingml.document",
        "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet",
        "application/vnd.openxmlformats-officedocument.presentationml.presentation",
        "application/vnd.oasis.opendocument.text",
        "application/vnd.oasis.opendocument.spreadsheet",
        "application/vnd.oasis.opendocument.presentation",
        "application/rtf",
        "text/rtf",
        "message/rfc822",
    ],
)
ATTACHMENT_UNATTACHED_HOURS = env.float("ATTACHMENT_UNATTACHED_HOURS", default=24)
ATTACHMENT_REMOVE_MINUTES = env.float("ATTACHMENT_REMOVE_MINUTES", default=15)
# "clamav": every upload is scanned by the ClamAV daemon at CLAMD_ADDRESS (unix:///path or
# tcp://host:port) before it can be attached; infected files are refused (422), and while the
# daemon cannot be reached uploads are refused (503), never stored unscanned. "" scans nothing.
ATTACHMENT_SCANNER = env("ATTACHMENT_SCANNER", default="")
CLAMD_ADDRESS = env("CLAMD_ADDRESS", default="unix:///var/run/clamav/clamd.ctl")
CLAMD_TIMEOUT_SECONDS = env.float("CLAMD_TIMEOUT_SECONDS", default=30.0)

LOGIN_URL = "/accounts/login/"
LOGIN_REDIRECT_URL = "/console/"
LOGOUT_REDIRECT_URL = "/accounts/login/"

REST_FRAMEWORK = {
    "DEFAULT_AUTHENTICATION_CLASSES": [
        "accounts.auth.TokenAuthentication",
        "rest_framework.authentication.SessionAuthentication",
    ],
    "DEFAULT_PERMISSION_CLASSES": ["rest_framework.permissions.IsAuthenticated"],
    "DEFAULT_RENDERER_CLASSES": [
        "rest_framework.renderers.JSONRenderer",
        "rest_framework.renderers.BrowsableAPIRenderer",
    ],
    "DEFAULT_PARSER_CLASSES": ["config.parsers.SafeJSONParser"],
    # Rates are read from THROTTLE_RATES at request time (config/throttling.py).
    "DEFAULT_THROTTLE_CLASSES": [
        "config.throttling.AnonThrottle",
        "config.throttling.UserThrottle",
    ],
    "DEFAULT_FILTER_BACKENDS": ["django_filters.rest_framework.DjangoFilterBackend"],
    "DEFAULT_PAGINATION_CLASS": "config.pagination.Pagination",
    "PAGE_SIZE": 20,
    "DEFAULT_SCHEMA_CLASS": "drf_spectacular.openapi.AutoSchema",
    "EXCEPTION_HANDLER": "config.exceptions.exception_handler",
}

# A list's count reads at most this many rows + 1; beyond, the planner's estimate is shown
# and flagged (config/pagination.py: "count_is_estimate", "about 1.2 million").
EXACT_COUNT_LIMIT = env.int("EXACT_COUNT_LIMIT", default=1000)
# How far a saved view's tab counts exactly ("more than 100" beyond): every pool page counts
# all the caller's views in one statement.
SAVED_VIEW_COUNT_LIMIT = env.int("SAVED_VIEW_COUNT_LIMIT", default=100)
# The most tickets one CSV export writes (GET /api/tickets/export/): more is a 400.
TOOLBOX_EXPORT_MAX_ROWS = env.int("TOOLBOX_EXPORT_MAX_ROWS", default=100_000)

# Requests per period (s, m, h, d): "anon" per client address, "user" per account, "login"
# the token endpoint per client address (on top of the lock-out after failed passwords).
THROTTLE_RATES = {
    "anon": env("THROTTLE_ANON", default="60/min"),
    "user": env("THROTTLE_USER", default="1200/min"),
    "login": env("THROTTLE_LOGIN", default="10/min"),
    # Received mail posted by a provider's webhook, per mailbox and client address.
    "mail_inbound": env("THROTTLE_MAIL_INBOUND", default="600/min"),
}
# Number of proxies in front of the app whose X-Forwarded-For DRF may trust for the client
# address (throttles); 0 means REMOTE_ADDR.
REST_FRAMEWORK["NUM_PROXIES"] = env.int("TRUSTED_PROXY_COUNT", default=0) or None

# API bodies larger than this are refused with 413 in the JSON error shape, before they are
# read (config/limits.py). Django's DATA_UPLOAD_MAX_MEMORY_SIZE (2.5 MB) covers the pages.
API_MAX_BODY_BYTES = env.int("API_MAX_BODY_BYTES", default=1024 * 1024)
# JSON bodies nested deeper than this are a 400 naming the limit, before any view reads them
# (config/parsers.py says why 64).
API_MAX_JSON_DEPTH = env.int("API_MAX_JSON_DEPTH", default=64)

# Rarely changing rows read on hot paths (SLA rules, notification templates) are memoised per
# process for this long; a change made in another process applies within it (config/memo.py).
REFERENCE_CACHE_SECONDS = env.float("REFERENCE_CACHE_SECONDS", default=5)

# /metrics answers a Prometheus scraper presenting `Authorization: Bearer <METRICS_TOKEN>`
# (and staff); with no token set, staff only.
METRICS_TOKEN = env("METRICS_TOKEN", default="")

SPECTACULAR_SETTINGS = {
    "TITLE": "Ticketdesk API",
    "DESCRIPTION": "Tickets, handler groups, SLA, notifications and queue ranking.",
    "VERSION": "1.0.0",
    "SERVE_INCLUDE_SCHEMA": False,
    "COMPONENT_SPLIT_REQUEST": True,
    # The toolbox's one scope (canned responses, macros, saved views) is one enum.
    "ENUM_NAME_OVERRIDES": {
        "ItemScopeEnum": "toolbox.models.Scope",
        "TicketStatusEnum": "ticketing.models.TicketStatus",
    },
    "PREPROCESSING_HOOKS": ["config.openapi.without_format_suffix_routes"],
    # The docs pages load their scripts from this project's static files, never a CDN.
    "SWAGGER_UI_DIST": "SIDECAR",
    "SWAGGER_UI_FAVICON_HREF": "SIDECAR",
    "REDOC_DIST": "SIDECAR",
}

# Celery: JSON only, bounded tasks, one timezone shared with Django.
CELERY_BROKER_URL = env("CELERY_BROKER_URL", default=REDIS_URL)
CELERY_RESULT_BACKEND = None
CELERY_TASK_IGNORE_RESULT = True
CELERY_TASK_SERIALIZER = "json"
CELERY_RESULT_SERIALIZER = "json"
CELERY_ACCEPT_CONTENT = ["json"]
CELERY_TIMEZONE = TIME_ZONE
CELERY_ENABLE_UTC = True
CELERY_TASK_TIME_LIMIT = 300
CELERY_TASK_SOFT_TIME_LIMIT = 240
CELERY_TASK_ACKS_LATE = True
# A task whose worker process died under it (SIGKILL, the OOM killer) goes back on its queue
# instead of being acknowledged as failed: every task is safe to run twice (claims are
# compare-and-set), and the ones that could crash a worker every time are bounded by their own
# attempt counts (insight's simulations). A whole worker killed leaves its messages unacked
# for the visibility timeout below; the sweeps make those good well before (docs/operations.md).
CELERY_TASK_REJECT_ON_WORKER_LOST = True
# Two kinds of work on separate queues and worker processes (runtime/commands.py): what must
# happen on the second (SLA levels, routing, assignment notices and the sweeps) on `critical`,
# which is every task not routed elsewhere; outbox deliveries, whose receivers may be slow, on
# `deliveries`; simulations and other long computations on `slow`. No amount of the latter
# two delays the first (tests/test_queues.py).
CELERY_TASK_DEFAULT_QUEUE = "critical"
CELERY_TASK_ROUTES = {
    "notifications.deliver": {"queue": "deliveries"},
    "insight.simulate": {"queue": "slow"},
    "attachments.thumbnail": {"queue": "slow"},
    # Mail in: fetching IMAP mailboxes waits on remote servers; the notices a refused sender
    # gets go out with the other deliveries.
    "mail.fetch_all": {"queue": "mail"},
    "mail.notice": {"queue": "deliveries"},
}
CELERY_WORKER_PREFETCH_MULTIPLIER = 1
CELERY_BROKER_CONNECTION_RETRY_ON_STARTUP = True
# django-celery-beat's schedule in the database, sent by whichever beat holds the lease: a beat
# on every node is safe (config/beat/scheduler.py).
CELERY_BEAT_SCHEDULER = "config.beat.scheduler:LeasedDatabaseScheduler"
# Redis redelivers a task not acknowledged within the visibility timeout; it must outlast the
# longest countdown the code schedules (an offer's timeout, at most a day: handler_groups'
# MAX_OFFER_TIMEOUT_SECONDS; a delivery retry, at most an hour) or a delayed task would run
# twice (they are idempotent, but once is the design). tests/test_runtime.py holds them together.
CELERY_BROKER_TRANSPORT_OPTIONS = {"visibility_timeout": 2 * 24 * 3600}
# Redis down is not an outage (config/outage.py): a publish from a request gives up within about
# a second (a connect timeout of 1 s, one immediate retry that heals a connection a restarted
# Redis closed) rather than Celery's 4 s and three retries; the sweeps make the message good.
CELERY_BROKER_CONNECTION_TIMEOUT = 1.0
CELERY_BROKER_TRANSPORT_OPTIONS["socket_connect_timeout"] = 1
CELERY_TASK_PUBLISH_RETRY_POLICY = {
    "max_retries": 1,
    "interval_start": 0,
    "interval_step": 0.1,
    "interval_max": 0.1,
}
CELERY_TASK_ALWAYS_EAGER = env.bool("CELERY_TASK_ALWAYS_EAGER", default=False)
# Worker and beat log through Django's LOGGING (one JSON object per line on stdout), like the web.
CELERY_WORKER_HIJACK_ROOT_LOGGER = False

# EMAIL_URL names the SMTP server mail goes out through (smtp://user:password@host:587 with
# ?tls=true or smtps:// for TLS; django-environ's email_url); `make run` points it at its local
# mail catcher (devserver/mailcatcher.py). Unset: every e-mail is one INFO log line
# (recipients, subject), not sent. EMAIL_BACKEND, when set, wins over both.
if env("EMAIL_URL", default=""):
    vars().update(env.email_url("EMAIL_URL"))
    EMAIL_BACKEND = env("EMAIL_BACKEND", default=env.email_url("EMAIL_URL")["EMAIL_BACKEND"])
else:
    EMAIL_BACKEND = env("EMAIL_BACKEND", default="config.mail.LogEmailBackend")
DEFAULT_FROM_EMAIL = env("DEFAULT_FROM_EMAIL", default="ticketdesk@localhost")
# One SMTP conversation ends well inside an outbox delivery's lease (notifications/delivery.py:
# SEND_TIMEOUT_SECONDS), so a slow server means a retry, not a second concurrent send.
EMAIL_TIMEOUT = env.float("EMAIL_TIMEOUT", default=10.0)
# Where people reach this site: the links that messages carry (the survey's, in e-mail and
# the inbox) are absolute under it.
SITE_URL = env("SITE_URL", default="http://127.0.0.1:8000")

# Tickets by e-mail (mail app). The key the mailboxes' IMAP passwords and inbound secrets are
# encrypted with (mail/crypto.py; unset: derived from SECRET_KEY); how many days after its
# completion the applicant may still reopen a ticket (the team always may); how many new
# tickets one sender may open by mail in an hour before further messages are held for review.
MAIL_SECRET_KEY = env("MAIL_SECRET_KEY", default="")
REOPEN_DAYS = env.int("REOPEN_DAYS", default=14)
MAIL_FLOOD_PER_HOUR = env.int("MAIL_FLOOD_PER_HOUR", default=20)
# A CA bundle to verify IMAP servers' certificates with, beyond the system's (a private CA).
MAIL_IMAP_CA_FILE = env("MAIL_IMAP_CA_FILE", default="")

# Queue ranking service (queueing app).
QUEUEING_REDIS_URL = env("QUEUEING_REDIS_URL", default=REDIS_URL)
QUEUEING_KEY_PREFIX = env("QUEUEING_KEY_PREFIX", default="lechat_")
QUEUEING_MAX_PERSONS = env.int("QUEUEING_MAX_PERSONS", default=20_000)
QUEUEING_JUMP_TTL_SECONDS = env.int("QUEUEING_JUMP_TTL_SECONDS", default=7 * 24 * 3600)
# The ranking endpoint's own body limit: QUEUEING_MAX_PERSONS persons as ordinary (indented)
# JSON with every optional field fit with room to spare (tests/security/test_hostile_input.py).
QUEUEING_MAX_BODY_BYTES = env.int("QUEUEING_MAX_BODY_BYTES", default=12 * 1024 * 1024)

LOGGING: dict[str, Any] = {
    "version": 1,
    "disable_existing_loggers": False,
    "filters": {
        "request_id": {"()": "config.request_id.RequestIdLogFilter"},
        "refusal_without_traceback": {"()": "config.logging.RefusalWithoutTraceback"},
        "demote_chatter": {"()": "config.logging.DemoteChatter"},
    },
    "formatters": {"json": {"()": "config.logging.JsonFormatter"}},
    "handlers": {
        # Standard output, in every process (web, worker, beat), as supervisors and
        # container runtimes collect it; gunicorn's own start/stop lines stay on stderr.
        "console": {
            "class": "logging.StreamHandler",
            "stream": "ext://sys.stdout",
            "formatter": "json",
            "filters": ["request_id", "refusal_without_traceback", "demote_chatter"],
        }
    },
    # In any case: logging knows only upper-case names (gunicorn and Celery take lower case).
    "root": {"handlers": ["console"], "level": env("LOG_LEVEL", default="INFO").strip().upper()},
    "loggers": {
        # Django's own handlers (a plain console line with the traceback under DEBUG, mail to
        # ADMINS) are dropped: its records go to the JSON console like everything else.
        "django": {"handlers": [], "level": "INFO", "propagate": True},
        "django.server": {"level": "WARNING"},
    },
}
