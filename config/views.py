"""Site-wide error views: the API answers in its one JSON error shape, pages in HTML."""

from django.http import HttpResponseServerError, JsonResponse
from django.template import loader
from django.utils.translation import gettext as _
from django.views.decorators.csrf import csrf_exempt
from django.views.defaults import page_not_found


@csrf_exempt
def api_not_found(request, *args, **kwargs):
    return JsonResponse({"code": "not_found", "detail": _("No such resource.")}, status=404)


def not_found(request, exception=None):
    if request.path.startswith("/api/"):
        return api_not_found(request)
    return page_not_found(request, exception)


def server_error(request):
    if request.path.startswith("/api/"):
        return JsonResponse(
            {"code": "internal", "detail": _("Something went wrong on our side; it is logged.")},
            status=500,
        )
    # As Django's own server_error, with no request context (nothing that could fail again),
    # plus the request id the log lines of this request carry (config/request_id.py).
    page = loader.get_template("500.html")
    return HttpResponseServerError(page.render({"request_id": getattr(request, "request_id", "")}))


def favicon(request):
    """Browsers ask for /favicon.ico on pages that name no icon (the admin, the API docs)."""
    from django.contrib.staticfiles.storage import staticfiles_storage
    from django.http import HttpResponsePermanentRedirect

    return HttpResponsePermanentRedirect(staticfiles_storage.url("favicon.svg"))
