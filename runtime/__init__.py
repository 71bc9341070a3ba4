"""The command lines the project's processes run with — gunicorn for the web, a Celery worker
for time-critical work and one for slow work, Celery beat (safe on every node) — in one place,
so that `make run`, the containers (Dockerfile, compose.yaml) and the tests start the very same
commands.

    python -m runtime web | worker | worker-slow | beat  # exec the named process (containers)
    python -m runtime migrate                # the release step: migrations, metrics reset

Environment: WEB_BIND (default 127.0.0.1:8000; PORT changes the port), WEB_CONCURRENCY
(gunicorn workers, default 4), WEB_THREADS (threads per worker, default 4), WEB_TIMEOUT
(seconds, default 60), WEB_KEEPALIVE (idle keep-alive seconds, default 5; raise it behind a
proxy), CELERY_CONCURRENCY (critical worker processes, default 2), CELERY_SLOW_CONCURRENCY (slow
worker processes, default 2), CELERY_SLOW_NICENESS (default 10), CELERY_QUEUES (the queues a
worker consumes, comma-separated; default `critical` for `worker`, `deliveries,mail,slow` for
`worker-slow`), CELERY_NODE_NAME (default critical@%h / slow@%h), LOG_LEVEL,
PROMETHEUS_MULTIPROC_DIR (where every process writes its metrics for /metrics to add up;
default <tmp>/ticketdesk-metrics; one volume shared by web, worker and beat in containers)."""
