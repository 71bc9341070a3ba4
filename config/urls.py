from django.contrib import admin
from django.urls import include, path
from django.views.generic import RedirectView
from drf_spectacular.views import SpectacularAPIView, SpectacularSwaggerView
from rest_framework.routers import DefaultRouter

from config.auth import ObtainTokenView
from handler_groups.apis import (
    AssignmentMetricsView,
    HandlerGroupViewSet,
    PresenceViewSet,
    prometheus_metrics,
)
from notifications.apis import NotificationViewSet
from sla.apis import SlaReportView
from ticketing.apis import TicketViewSet

router = DefaultRouter()
router.register("tickets", TicketViewSet, basename="ticket")
router.register("handler-groups", HandlerGroupViewSet, basename="handler-group")
router.register("notifications", NotificationViewSet, basename="notification")
router.register("presence", PresenceViewSet, basename="presence")

urlpatterns = [
    path("admin/", admin.site.urls),
    path("accounts/", include("django.contrib.auth.urls")),
    path("api/auth/token/", ObtainTokenView.as_view(), name="api-token"),
    path("api/schema/", SpectacularAPIView.as_view(), name="api-schema"),
    path("api/docs/", SpectacularSwaggerView.as_view(url_name="api-schema"), name="api-docs"),
    path("api/queueing/", include("queueing.urls")),
    path("api/sla/report/", SlaReportView.as_view(), name="sla-report"),
    path("api/metrics/assignment/", AssignmentMetricsView.as_view(), name="assignment-metrics"),
    path("metrics", prometheus_metrics, name="prometheus-metrics"),
    path("metrics/", prometheus_metrics),
    path("console/", include("ticketing.console_urls")),
    path("inbox/", include("notifications.inbox_urls")),
    path("", RedirectView.as_view(url="/console/", permanent=False)),
    path("api/", include(router.urls)),
]

handler404 = "config.views.not_found"
handler500 = "config.views.server_error"
