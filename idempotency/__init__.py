"""Idempotency: the `Idempotency-Key` header on the API's creating calls (POST /api/tickets/,
POST /api/tickets/{id}/replies/). The same key from the same caller within 24 hours answers the
first answer again (same status, same body) and creates nothing; the record is written in
PostgreSQL in the creation's own transaction, so a creation that committed just before a crash
is answered from it when the client retries. Owns the record (models.py), the claim and the
answer (services.py), the purge sweep (tasks.py) and the API's use of them (apis.py).

May import: config. Imported by: workflow (its APIs)."""
