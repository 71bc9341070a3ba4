"""Secrets a mailbox keeps (its IMAP password, its inbound endpoint's secret), encrypted at
rest with Fernet (AES-128-CBC with HMAC-SHA256, from `cryptography`) under MAIL_SECRET_KEY.

MAIL_SECRET_KEY is a Fernet key (`python -c "from cryptography.fernet import Fernet;
print(Fernet.generate_key().decode())"`), or any other text, from which a key is derived;
unset, the key is derived from SECRET_KEY (fine for `make run`; a deployment sets its own, so
that a leaked database dump alone reveals no password). Several keys, comma-separated, rotate:
the first encrypts, any decrypts."""

import base64
import hashlib

from cryptography.fernet import Fernet, InvalidToken, MultiFernet
from django.conf import settings


class SecretUnreadable(Exception):
    """Stored with a key that is no longer configured."""


def _fernet_key(text: str) -> bytes:
    raw = text.strip().encode()
    try:
        if len(base64.urlsafe_b64decode(raw)) == 32:
            return raw
    except ValueError:
        pass
    return base64.urlsafe_b64encode(hashlib.sha256(b"ticketdesk.mail:" + raw).digest())


def _fernet() -> MultiFernet:
    configured = getattr(settings, "MAIL_SECRET_KEY", "") or ""
    keys = [k for k in configured.split(",") if k.strip()] or [settings.SECRET_KEY]
    return MultiFernet([Fernet(_fernet_key(key)) for key in keys])


def encrypt(value: str) -> str:
    return _fernet().encrypt(value.encode()).decode()


def decrypt(token: str) -> str:
    if not token:
        return ""
    try:
        return _fernet().decrypt(token.encode()).decode()
    except InvalidToken as exc:
        raise SecretUnreadable(
            "stored with another MAIL_SECRET_KEY: set that key again, or enter the secret anew"
        ) from exc
