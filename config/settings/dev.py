"""`make dev` (devserver/run.py with WEB_SERVER=runserver): `make run` with Django's
auto-reloading runserver, DEBUG on (debug pages with tracebacks, every query kept in memory)
and static files read from the apps' folders as they change. runserver serves each connection
in its own thread; persistent database connections would outlive the threads and exhaust
PostgreSQL's connection limit under a burst of clients, so each request closes its own."""

from .local import *  # noqa: F403
from .local import DATABASES, env

DEBUG = env.bool("DJANGO_DEBUG", default=True)
WHITENOISE_AUTOREFRESH = DEBUG
# A copy: base.py's dict stays as the other settings modules read it.
DATABASES = {
    "default": {**DATABASES["default"], "CONN_MAX_AGE": env.int("DB_CONN_MAX_AGE", default=0)}
}
