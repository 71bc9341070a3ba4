"""Accounts: how people prove who they are, and how that proof ends.

Owns the API's token login, logout and logout-all (django-rest-knox: tokens stored as
digests, expiring after TOKEN_TTL_HOURS), the revocation of every token when a password
changes, the lock-out response after repeated failed logins (django-axes), and each person's
profile: the time zone and the language every page and notification uses for them
(accounts/preferences.py: the middleware, and reader_settings for whoever writes to them).

May import: config. Imported by: config.urls, notifications (reader_settings) and the console
(the profile page, the language switch)."""
