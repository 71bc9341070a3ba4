"""The Prometheus endpoint. Not public: a scraper presents `Authorization: Bearer
<METRICS_TOKEN>`; a logged-in staff member may also look. Anything else is a 401 (no or wrong
credentials) or a 403 (logged in, not staff)."""

import hmac

from django.conf import settings
from django.http import HttpResponse, JsonResponse
from django.utils.translation import gettext as _
from prometheus_client import CONTENT_TYPE_LATEST, generate_latest


def _bearer(request) -> str | None:
    scheme, _sep, credentials = request.headers.get("Authorization", "").partition(" ")
    return credentials.strip() if scheme.lower() == "bearer" else None


def prometheus_metrics(request):
    expected = settings.METRICS_TOKEN
    presented = _bearer(request)
    if presented is not None:
        if expected and hmac.compare_digest(presented.encode(), expected.encode()):
            return HttpResponse(generate_latest(), content_type=CONTENT_TYPE_LATEST)
        return _refused(401, _("Invalid metrics token."))
    user = request.user
    if user.is_authenticated and user.is_staff:
        return HttpResponse(generate_latest(), content_type=CONTENT_TYPE_LATEST)
    if user.is_authenticated:
        return _refused(403, _("Only staff and the metrics scraper may read the metrics."))
    return _refused(401, _("Send the metrics token as 'Authorization: Bearer <token>'."))


def _refused(status: int, detail: str) -> JsonResponse:
    code = "not_authenticated" if status == 401 else "permission_denied"
    response = JsonResponse({"code": code, "detail": detail}, status=status)
    if status == 401:
        response["WWW-Authenticate"] = 'Bearer realm="metrics"'
    return response
