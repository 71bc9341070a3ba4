"""Celery beat that is safe to run on every node: the schedule stays in django-celery-beat's
tables, and two tables of our own decide who sends.

- `beat_lease` (leases.py): one row naming the beat that sends. Taken and renewed with one
  atomic upsert against PostgreSQL's clock (renewed every 2 s, expiring 6 s after the last
  renewal); each new holder gets a larger fencing token. The others stand by and ask again
  every second, so a dead sender is replaced within ~8 s.
- `beat_slot` (leases.py): per periodic task, the last schedule slot sent and the token that
  sent it. Before sending, the leader claims the slot with a compare-and-set that also checks
  its lease: a slot goes at most once, and a former leader (lower token) can send nothing
  once a newer one has claimed a slot.

Both are single statements on one row, so they work through PgBouncer in transaction mode
(no session advisory locks, no LISTEN). The scheduler (scheduler.py) is a small subclass of
django-celery-beat's DatabaseScheduler.

May import: Django, Celery, django-celery-beat. Imported by: nothing in the project (the
settings name the scheduler by its dotted path)."""
