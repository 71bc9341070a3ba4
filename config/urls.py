from django.contrib import admin
from django.urls import include, path, re_path
from django.utils.translation import gettext_lazy as _
from django.views.generic import RedirectView
from drf_spectacular.views import SpectacularAPIView
from rest_framework.routers import DefaultRouter

from accounts.apis import LogoutAllView, LogoutView, TokenLoginView
from accounts.views import ZoneLoginView
from attachments.apis import AttachmentViewSet
from config.docs import RedocView, SwaggerView
from config.health import healthz, readyz
from config.metrics import prometheus_metrics
from config.views import api_not_found, favicon
from handler_groups.apis import HandlerGroupViewSet
from insight.apis import (
    AssignmentMetricsView,
    ErlangCView,
    QueueMetricsView,
    SatisfactionMetricsView,
    SimulationViewSet,
    StaffingView,
)
from live import views as live_views
from notifications.apis import NotificationViewSet
from routing.apis import PresenceViewSet
from sla.apis import SlaReportView, SlaRuleViewSet
from workflow.apis import TicketViewSet

# Path converters, not regexes: a viewset's `lookup_value_converter = "int"` makes its {id} an
# integer in the URL and so in the OpenAPI schema; anything else is no route, a JSON 404
# (tests/test_schema.py holds every registered viewset to it).
# The admin speaks the product's name, in the reader's language.
admin.site.site_header = _("Ticketdesk administration")
admin.site.site_title = _("Ticketdesk administration")
admin.site.index_title = _("Ticketdesk administration")
# The index lists every model; a second list beside each page would push it past 1366 px.
admin.site.enable_nav_sidebar = False

router = DefaultRouter(use_regex_path=False)
router.register("tickets", TicketViewSet, basename="ticket")
router.register("attachments", AttachmentViewSet, basename="attachment")
router.register("handler-groups", HandlerGroupViewSet, basename="handler-group")
router.register("notifications", NotificationViewSet, basename="notification")
router.register("presence", PresenceViewSet, basename="presence")
router.register("sla/rules", SlaRuleViewSet, basename="sla-rule")
router.register("simulations", SimulationViewSet, basename="simulation")

urlpatterns = [
    path("admin/", admin.site.urls),
    # Before Django's own: the login page also takes the browser's time zone.
    path("accounts/login/", ZoneLoginView.as_view(), name="login"),
    path("accounts/", include("django.contrib.auth.urls")),
    path("api/auth/token/", TokenLoginView.as_view(), name="api-token"),
    path("api/auth/logout/", LogoutView.as_view(), name="api-logout"),
    path("api/auth/logout-all/", LogoutAllView.as_view(), name="api-logout-all"),
    path("api/schema/", SpectacularAPIView.as_view(), name="api-schema"),
    path("api/docs/", SwaggerView.as_view(url_name="api-schema"), name="api-docs"),
    path("api/redoc/", RedocView.as_view(url_name="api-schema"), name="api-redoc"),
    path("api/queueing/", include("queueing.urls")),
    path("api/sla/report/", SlaReportView.as_view(), name="sla-report"),
    path("api/metrics/assignment/", AssignmentMetricsView.as_view(), name="assignment-metrics"),
    path("api/metrics/queue/", QueueMetricsView.as_view(), name="queue-metrics"),
    path(
        "api/metrics/satisfaction/",
        SatisfactionMetricsView.as_view(),
        name="satisfaction-metrics",
    ),
    path("api/staffing/erlang-c/", ErlangCView.as_view(), name="staffing-erlang-c"),
    path("api/staffing/", StaffingView.as_view(), name="staffing"),
    path("favicon.ico", favicon, name="favicon"),
    path("healthz", healthz, name="healthz"),
    path("readyz", readyz, name="readyz"),
    path("metrics", prometheus_metrics, name="prometheus-metrics"),
    path("metrics/", prometheus_metrics),
    path("console/", include("console.urls")),
    # The live pages' event stream; servers route it to Django's ASGI handler (config/asgi.py).
    path("events/", live_views.events, name="live-events"),
    path("inbox/", include("console.inbox_urls")),
    # The satisfaction survey's page, answered from its signed link without signing in.
    path("survey/", include("satisfaction.page_urls")),
    path("", RedirectView.as_view(url="/console/", permanent=False)),
    path("api/search/", include("search.urls")),
    path("api/", include("collaboration.urls")),
    path("api/", include("satisfaction.urls")),
    path("api/", include("mail.urls")),
    path("api/", include("toolbox.urls")),
    path("api/", include(router.urls)),
    # Anything else under /api/ is a JSON 404 in every mode (DEBUG's HTML page included).
    re_path(r"^api/", api_not_found),
]

handler404 = "config.views.not_found"
handler500 = "config.views.server_error"
