"""Accounts: how people prove who they are, and how that proof ends.

Owns the API's token login, logout and logout-all (django-rest-knox: tokens stored as
digests, expiring after TOKEN_TTL_HOURS), the revocation of every token when a password
changes, and the lock-out response after repeated failed logins (django-axes).

May import: config. Imported by: config.urls only."""
