"""What a file is, from its bytes (libmagic, through python-magic), never from its name or the
client's Content-Type; and what its name may be once it is ours."""

import fnmatch
import os
import unicodedata

import magic
from django.conf import settings

# libmagic needs no more than this of a file's start to tell the types we accept (office
# documents are zip files whose first entries say what they are).
SNIFF_BYTES = 1024 * 1024
MAX_FILENAME = 200
# Types a browser may show in the page instead of downloading: raster images only. SVG and
# HTML can carry script and are never inline.
INLINE_TYPES = frozenset({"image/png", "image/jpeg", "image/gif", "image/webp"})
# Raster images a worker makes a thumbnail of (Pillow).
THUMBNAIL_TYPES = INLINE_TYPES | {"image/bmp", "image/tiff"}


def detect(head: bytes) -> str:
    """The MIME type of a file starting with `head` (at least its first SNIFF_BYTES)."""
    if not head:
        return "application/x-empty"
    return magic.from_buffer(head[:SNIFF_BYTES], mime=True) or "application/octet-stream"


def allowed(content_type: str) -> bool:
    """Whether the operator's ATTACHMENT_ALLOWED_TYPES accepts the type ("image/*" patterns
    allowed)."""
    return any(
        fnmatch.fnmatchcase(content_type, pattern.strip().lower())
        for pattern in settings.ATTACHMENT_ALLOWED_TYPES
        if pattern.strip()
    )


def _kept(char: str) -> bool:
    # Cc: control characters; Cf: format characters, among them the bidi overrides and
    # isolates (U+202A–U+202E, U+2066–U+2069) that make "exe.pdf" read as "fdp.exe".
    return unicodedata.category(char) not in ("Cc", "Cf", "Cs", "Co", "Cn")


def clean_filename(raw: str) -> str:
    """The name shown and offered on download: its Unicode kept (NFC), its path parts (either
    slash), control and bidi characters gone, at most MAX_FILENAME characters with the
    extension kept. Never empty."""
    name = unicodedata.normalize("NFC", raw or "")
    name = name.replace("\\", "/").rsplit("/", 1)[-1]
    name = "".join(char if _kept(char) else "" for char in name)
    name = " ".join(name.split())  # tabs, newlines and runs of spaces: one space
    name = name.strip(" .")
    if not name:
        return "file"
    if len(name) > MAX_FILENAME:
        stem, ext = os.path.splitext(name)
        if not ext or len(ext) > 20:
            return name[:MAX_FILENAME]
        return stem[: MAX_FILENAME - len(ext)].rstrip(" .") + ext
    return name
