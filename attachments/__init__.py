"""Attachments: the files on tickets and replies, uploaded first and attached after.

Owns the Blob (bytes stored once by content hash in Django's default storage; gone when no
attachment refers to them) and the Attachment (a user's named reference to a blob, on a
ticket and optionally a reply), the upload, download and removal API (apis.py), the type
check by content (types.py: libmagic), the malware scan (scanning.py: a ClamAV daemon), the
thumbnails a worker makes (tasks.py: Pillow) and the sweep of uploads never attached.

May import: ticketing (models, access, transitions), accounts, config. Imported by: workflow
(submit and reply take attachment_ids; outputs list them), console, config.urls."""
