"""Accounts: how people prove who they are, and how that proof ends.

Owns the API's token login, logout and logout-all (django-rest-knox: tokens stored as
digests, expiring after TOKEN_TTL_HOURS), the revocation of every token when a password
changes, the lock-out response after repeated failed logins (django-axes), and each person's
profile: the time zone every page shows times in (accounts/timezones.py) and the language.

May import: config. Imported by: config.urls and the console (the profile page)."""
