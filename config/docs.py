"""The API docs pages (Swagger UI at /api/docs/, ReDoc at /api/redoc/), served with their
scripts from this project's static files (drf-spectacular-sidecar) so they work offline."""

from drf_spectacular.utils import extend_schema
from drf_spectacular.views import SpectacularRedocView, SpectacularSwaggerView


class SwaggerView(SpectacularSwaggerView):
    """drf-spectacular's Swagger UI page. OPTIONS answers the allowed methods and no body:
    DRF's description of the view would be drawn by the page's HTML template, which has none
    (a 500)."""

    metadata_class = None


class RedocView(SpectacularRedocView):
    """ReDoc draws a "powered by" logo from its vendor's CDN: the page's Content-Security-Policy
    keeps images on this host, so no request leaves it (templates/drf_spectacular/redoc.html
    drops the web fonts the same way). OPTIONS: as SwaggerView's."""

    metadata_class = None

    @extend_schema(exclude=True)
    def get(self, request, *args, **kwargs):
        response = super().get(request, *args, **kwargs)
        response["Content-Security-Policy"] = "img-src 'self' data: blob:"
        return response
