"""Shared OpenAPI pieces, so every endpoint documents the one error shape truthfully."""

from drf_spectacular.utils import OpenApiResponse, extend_schema_field, inline_serializer
from rest_framework import serializers


@extend_schema_field(
    {
        "oneOf": [
            {"type": "array", "items": {"type": "string"}},
            {"type": "object", "additionalProperties": True},
        ]
    }
)
class FieldErrors(serializers.JSONField):
    """Messages for one field: a list of strings, or, for a list or nested field, an object
    keyed by index or sub-field (e.g. {"members": {"0": ["…"]}})."""


ValidationErrorBody = inline_serializer(
    name="ValidationError",
    fields={
        "code": serializers.CharField(default="invalid_argument"),
        "errors": serializers.DictField(child=FieldErrors()),
    },
)
DetailErrorBody = inline_serializer(
    name="DetailError",
    fields={"code": serializers.CharField(), "detail": serializers.CharField()},
)

BAD_REQUEST = OpenApiResponse(ValidationErrorBody, description="Bad input; errors name the field.")
UNAUTHENTICATED = OpenApiResponse(DetailErrorBody, description="Not authenticated.")
FORBIDDEN = OpenApiResponse(DetailErrorBody, description="Not allowed to take this action.")
NOT_FOUND = OpenApiResponse(DetailErrorBody, description="No such resource visible to you.")
CONFLICT = OpenApiResponse(DetailErrorBody, description="The current state does not allow it.")
TOO_LARGE = OpenApiResponse(DetailErrorBody, description="Larger than the limit.")
UNSUPPORTED = OpenApiResponse(DetailErrorBody, description="Of a type not accepted.")
UNPROCESSABLE = OpenApiResponse(DetailErrorBody, description="Refused for its content.")
UNAVAILABLE = OpenApiResponse(DetailErrorBody, description="A service it needs is down.")


def errors(*codes: int) -> dict:
    table = {
        400: BAD_REQUEST,
        401: UNAUTHENTICATED,
        403: FORBIDDEN,
        404: NOT_FOUND,
        409: CONFLICT,
        413: TOO_LARGE,
        415: UNSUPPORTED,
        422: UNPROCESSABLE,
        503: UNAVAILABLE,
    }
    return {code: table[code] for code in codes}


def without_format_suffix_routes(endpoints: list) -> list:
    """The schema documents each route once, without its `.json` twin. A router on path
    converters spells the twin `tickets{format}` (the dot is inside DRF's converter), which
    the generator does not recognise as a suffix route as it does `tickets.{format}`."""
    return [endpoint for endpoint in endpoints if not endpoint[0].rstrip("/").endswith("{format}")]
