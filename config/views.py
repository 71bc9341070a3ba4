"""Site-wide error views: the API answers in its one JSON error shape, pages in HTML."""

from django.http import JsonResponse
from django.utils.translation import gettext as _
from django.views.decorators.csrf import csrf_exempt
from django.views.defaults import page_not_found
from django.views.defaults import server_error as html_server_error


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
    return html_server_error(request)


def favicon(request):
    """Browsers ask for /favicon.ico on pages that name no icon (the admin, the API docs)."""
    from django.contrib.staticfiles.storage import staticfiles_storage
    from django.http import HttpResponsePermanentRedirect

    return HttpResponsePermanentRedirect(staticfiles_storage.url("favicon.svg"))
