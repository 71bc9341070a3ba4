"""Request body limits for the API: 413 in the JSON error shape, decided from Content-Length
before the body is read (and again by the parser while reading, for bodies without one).

The default is API_MAX_BODY_BYTES; the queue ranking takes whole queues and has its own
(QUEUEING_MAX_BODY_BYTES). Pages keep Django's DATA_UPLOAD_MAX_MEMORY_SIZE, which would
otherwise refuse (as an HTML 400) an API body within its endpoint's larger limit."""

import io

from django.conf import settings
from django.http import JsonResponse
from django.utils.translation import gettext as _
from rest_framework import status
from rest_framework.exceptions import APIException

QUEUEING_PREFIX = "/api/queueing/"
# Uploads (attachments/apis.py): one file of up to ATTACHMENT_MAX_BYTES, plus room for the
# multipart framing; streamed to a temporary file by Django's upload handlers, never read
# into memory here.
UPLOAD_PATH = "/api/attachments/"
# Received mail posted by a provider (mail/apis.py): each mailbox has its own limit
# (max_message_bytes), checked by the view from Content-Length before reading and again
# while reading the stream; neither the API's limit nor the pages' applies.
MAIL_INBOUND_PREFIX = "/api/mail/inbound/"
MULTIPART_OVERHEAD = 64 * 1024


def body_limit_for(path: str) -> int:
    if path.startswith(QUEUEING_PREFIX):
        return settings.QUEUEING_MAX_BODY_BYTES
    if path == UPLOAD_PATH:
        return settings.ATTACHMENT_MAX_BYTES + MULTIPART_OVERHEAD
    return settings.API_MAX_BODY_BYTES


def too_large_message(limit: int, path: str = "") -> str:
    if path == UPLOAD_PATH:
        from django.template.defaultfilters import filesizeformat

        return _("The file is larger than the limit of %(limit)s.") % {
            "limit": filesizeformat(settings.ATTACHMENT_MAX_BYTES)
        }
    return _("The request body is larger than this endpoint's limit of %(limit)d bytes.") % {
        "limit": limit
    }


class PayloadTooLarge(APIException):
    status_code = status.HTTP_413_REQUEST_ENTITY_TOO_LARGE
    default_code = "payload_too_large"

    def __init__(self, limit: int):
        super().__init__(too_large_message(limit))


class ApiBodyLimitMiddleware:
    """Refuses an API request whose declared body exceeds the endpoint's limit, unread."""

    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        if request.path.startswith("/api/") and not request.path.startswith(MAIL_INBOUND_PREFIX):
            try:
                declared = int(request.META.get("CONTENT_LENGTH") or 0)
            except ValueError:
                declared = 0
            limit = body_limit_for(request.path)
            if declared > limit:
                return JsonResponse(
                    {
                        "code": "payload_too_large",
                        "detail": too_large_message(limit, request.path),
                    },
                    status=status.HTTP_413_REQUEST_ENTITY_TOO_LARGE,
                )
            pages_limit = settings.DATA_UPLOAD_MAX_MEMORY_SIZE
            if pages_limit is not None and declared > pages_limit and request.path != UPLOAD_PATH:
                # Within this endpoint's limit: read here, as HttpRequest.body would, without
                # the pages' smaller one.
                body = request.read(declared)
                request._body, request._stream = body, io.BytesIO(body)
        return self.get_response(request)
