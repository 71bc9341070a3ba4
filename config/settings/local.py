"""`make run` (devserver/run.py under gunicorn): the product on one machine, behaving as
production does. DEBUG is off (the product's own error pages, with the request id; no query
log), database connections persist between requests and are checked before reuse (base.py:
DB_CONN_MAX_AGE, 60 s, and CONN_HEALTH_CHECKS), and static files are the ones collectstatic
wrote, served by whitenoise with production's storage and cache headers. What stays local:
any Host is accepted (the server listens on loopback unless HOST says otherwise, and
devserver/run.py warns when it listens elsewhere without DJANGO_ALLOWED_HOSTS and
DJANGO_SECRET_KEY), plain HTTP, e-mail written as log lines (base.py), the embedded servers
and the demo data (devserver/run.py). `make dev` is config/settings/dev.py; `manage.py` uses
this module too."""

from .base import *  # noqa: F403
from .base import env

DEBUG = env.bool("DJANGO_DEBUG", default=False)
ALLOWED_HOSTS = env.list("DJANGO_ALLOWED_HOSTS", default=["*"])
# Production serves what collectstatic wrote; `make dev` re-reads the apps' folders instead.
WHITENOISE_AUTOREFRESH = DEBUG
