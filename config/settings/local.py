from .base import *  # noqa: F403
from .base import env

DEBUG = env.bool("DJANGO_DEBUG", default=True)
ALLOWED_HOSTS = env.list("DJANGO_ALLOWED_HOSTS", default=["*"])
WHITENOISE_AUTOREFRESH = DEBUG
# runserver serves each connection in its own thread; persistent database connections would
# outlive the threads and exhaust PostgreSQL's connection limit under a burst of clients.
DATABASES["default"]["CONN_MAX_AGE"] = env.int("DB_CONN_MAX_AGE", default=0)  # noqa: F405
