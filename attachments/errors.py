"""Why an upload or an attachment was refused, each with its status in the API's error shape
(config/exceptions.py): {"code": ..., "detail": ...}. The console shows the same messages."""

from django.template.defaultfilters import filesizeformat
from django.utils.translation import gettext as _
from rest_framework import status
from rest_framework.exceptions import APIException


class FileTooLarge(APIException):
    status_code = status.HTTP_413_REQUEST_ENTITY_TOO_LARGE
    default_code = "payload_too_large"

    def __init__(self, limit: int):
        super().__init__(
            _("The file is larger than the limit of %(limit)s.") % {"limit": filesizeformat(limit)}
        )


class TicketFull(APIException):
    status_code = status.HTTP_413_REQUEST_ENTITY_TOO_LARGE
    default_code = "payload_too_large"

    def __init__(self, limit: int):
        super().__init__(
            _("A ticket's files may add up to %(limit)s; these would go beyond it.")
            % {"limit": filesizeformat(limit)}
        )


class UnsupportedType(APIException):
    status_code = status.HTTP_415_UNSUPPORTED_MEDIA_TYPE
    default_code = "unsupported_media_type"

    def __init__(self, content_type: str):
        self.content_type = content_type
        super().__init__(
            _("Files of this type (%(type)s) cannot be attached.") % {"type": content_type}
        )


class Infected(APIException):
    status_code = status.HTTP_422_UNPROCESSABLE_ENTITY
    default_code = "infected"

    def __init__(self):
        super().__init__(_("The malware scanner found a threat in this file; it was not stored."))


class ScannerUnavailable(APIException):
    status_code = status.HTTP_503_SERVICE_UNAVAILABLE
    default_code = "scanner_unavailable"

    def __init__(self):
        super().__init__(
            _("Files cannot be uploaded now: the malware scanner is unavailable. Try again soon.")
        )
