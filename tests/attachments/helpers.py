"""Files for the attachment tests, made here rather than kept in the repository."""

import io

from django.core.files.uploadedfile import SimpleUploadedFile
from PIL import Image

PDF = b"%PDF-1.4\n1 0 obj << /Type /Catalog >> endobj\ntrailer << /Root 1 0 R >>\n%%EOF\n"
# The start of a Windows executable (a DOS header, "MZ", and the PE signature).
EXE = (
    b"MZ\x90\x00\x03\x00\x00\x00\x04\x00\x00\x00\xff\xff\x00\x00"
    + b"\x00" * 44
    + b"\x80\x00\x00\x00"
    + b"\x00" * 64
    + b"PE\x00\x00"
    + b"\x00" * 200
)


def png(width: int = 40, height: int = 30, colour=(200, 30, 30)) -> bytes:
    out = io.BytesIO()
    Image.new("RGB", (width, height), colour).save(out, format="PNG")
    return out.getvalue()


def post_file(client, name: str, data: bytes, content_type: str = "application/octet-stream"):
    """POST /api/attachments/ with one file, as the client's user."""
    return client.post(
        "/api/attachments/",
        {"file": SimpleUploadedFile(name, data, content_type=content_type)},
        format="multipart",
    )


def upload(api, user, name: str, data: bytes, content_type: str = "application/octet-stream"):
    """The same, through the suite's `api` fixture as `user`."""
    return post_file(api.as_user(user), name, data, content_type)


def eicar_bytes() -> bytes:
    """The EICAR anti-virus test file (eicar.org), which every scanner reports as malware and
    which harms nothing. Built here rather than kept in a file, so that a developer's own
    anti-virus has no copy in the repository to quarantine."""
    return "".join(
        ["X5O!P%@AP[4\\PZX54(P^)7CC)7}$", "EICAR-STANDARD-", "ANTIVIRUS-TEST-FILE!$H+H*"]
    ).encode()
