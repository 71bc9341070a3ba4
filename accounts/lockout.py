"""What a locked-out client sees (django-axes calls `lockout_response`): 429 with Retry-After,
in the API's JSON error shape under /api/, and as the login page's own message elsewhere."""

import math

from axes.helpers import get_cool_off
from django.http import JsonResponse
from django.shortcuts import render
from django.utils.translation import gettext as _

LOCKED_OUT_STATUS = 429


def _retry_after_seconds(request) -> int | None:
    cool_off = get_cool_off(request)
    return None if cool_off is None else max(1, math.ceil(cool_off.total_seconds()))


def lockout_response(request, original_response=None, credentials=None):
    retry_after = _retry_after_seconds(request)
    if retry_after is None:
        message = _("Too many failed logins: this account is locked. Ask an administrator.")
    else:
        message = _(
            "Too many failed logins: try again in %(minutes)d minutes or ask an administrator."
        ) % {"minutes": math.ceil(retry_after / 60)}
    if request.path.startswith("/api/"):
        response = JsonResponse({"code": "locked_out", "detail": message}, status=LOCKED_OUT_STATUS)
    else:
        response = render(
            request, "registration/locked_out.html", {"message": message}, status=LOCKED_OUT_STATUS
        )
    if retry_after is not None:
        response["Retry-After"] = str(retry_after)
    return response
