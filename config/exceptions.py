"""One error shape for the whole API:
400 {"code": "invalid_argument", "errors": {field: [messages]}}
401/403/404/405/413/429 {"code": ..., "detail": "..."}
409 {"code": "conflict", "detail": "..."}"""

from django.core.exceptions import ObjectDoesNotExist
from django.core.exceptions import PermissionDenied as DjangoPermissionDenied
from django.http import Http404
from django.utils.translation import gettext_lazy as _
from rest_framework import exceptions, status
from rest_framework.response import Response
from rest_framework.views import exception_handler as drf_exception_handler

from .errors import ConflictError, Forbidden, InvalidArgument


class Conflict(exceptions.APIException):
    """The request is well formed but the resource's current state does not allow it."""

    status_code = status.HTTP_409_CONFLICT
    default_detail = _("The resource's current state does not allow this.")
    default_code = "conflict"


_CODES = {
    400: "invalid_argument",
    401: "not_authenticated",
    403: "permission_denied",
    404: "not_found",
    405: "method_not_allowed",
    406: "not_acceptable",
    409: "conflict",
    413: "payload_too_large",
    415: "unsupported_media_type",
    429: "throttled",
}


def _as_field_errors(detail):
    if isinstance(detail, dict):
        return detail
    if isinstance(detail, list):
        return {"non_field_errors": detail}
    return {"non_field_errors": [detail]}


def exception_handler(exc, context):
    extra = exc.extra if isinstance(exc, ConflictError) else {}
    if isinstance(exc, InvalidArgument):
        exc = exceptions.ValidationError({exc.field: [exc.message]})
    elif isinstance(exc, ConflictError):
        exc = Conflict(str(exc))
    elif isinstance(exc, Forbidden):
        exc = exceptions.PermissionDenied(str(exc) or None)
    elif isinstance(exc, ObjectDoesNotExist | Http404):
        exc = exceptions.NotFound()
    elif isinstance(exc, DjangoPermissionDenied):
        exc = exceptions.PermissionDenied()
    response = drf_exception_handler(exc, context)
    if response is None:
        return None
    code = _CODES.get(response.status_code) or getattr(exc, "default_code", None) or "error"
    if isinstance(exc, exceptions.ParseError):
        body = {"code": code, "errors": {"body": [str(exc.detail)]}}
    elif isinstance(exc, exceptions.ValidationError):
        body = {"code": code, "errors": _as_field_errors(exc.detail)}
    else:
        detail = exc.detail if isinstance(exc, exceptions.APIException) else str(exc)
        body = {"code": code, "detail": detail, **extra}
    return Response(body, status=response.status_code, headers=_headers(response))


def _headers(response):
    return {k: v for k, v in response.items() if k in ("WWW-Authenticate", "Retry-After", "Allow")}
