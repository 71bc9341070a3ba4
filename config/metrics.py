"""The Prometheus endpoint. Not public: a scraper presents `Authorization: Bearer
<METRICS_TOKEN>`; a logged-in staff member may also look. Anything else is a 401 (no or wrong
credentials) or a 403 (logged in, not staff).

Two kinds of figures:
- counters and histograms the code increments as it works (requests, SLA events, deliveries,
  drains, reclaims). Under gunicorn, Celery and beat every process writes its own files in
  PROMETHEUS_MULTIPROC_DIR (set by `python -m runtime` and `make run`), and a scrape adds
  them all up, whichever web worker answers it;
- gauges computed at scrape time from the database (tickets waiting, oldest wait, agents
  available, outbox backlog, SLA events due soon). Apps register them with `scrape_gauges`,
  so this module names none of them."""

import hmac
import logging
import os
from collections.abc import Callable, Iterable

from django.conf import settings
from django.http import HttpResponse, JsonResponse
from django.utils.translation import gettext as _
from prometheus_client import CONTENT_TYPE_LATEST, REGISTRY, CollectorRegistry, generate_latest
from prometheus_client.core import GaugeMetricFamily, Metric
from prometheus_client.multiprocess import MultiProcessCollector

logger = logging.getLogger(__name__)

MULTIPROC_ENV = "PROMETHEUS_MULTIPROC_DIR"

GaugeSource = Callable[[], Iterable[Metric]]
_gauge_sources: list[GaugeSource] = []


def scrape_gauges(source: GaugeSource) -> GaugeSource:
    """Register `source() -> metric families`, called on every scrape (in the scraping process
    only, so nothing is summed twice). A source that fails is logged and left out of that one
    scrape; the rest still answer."""
    _gauge_sources.append(source)
    return source


def gauge(name: str, documentation: str, labels: Iterable[str] = ()) -> GaugeMetricFamily:
    return GaugeMetricFamily(name, documentation, labels=list(labels))


class _ScrapeTimeGauges:
    def collect(self):
        for source in _gauge_sources:
            try:
                families = list(source())
            except Exception:
                logger.exception("metrics source failed", extra={"source": source.__qualname__})
                continue
            yield from families


class _ThisProcess:
    """The default registry's metrics (single-process mode: tests, `manage.py shell`)."""

    def collect(self):
        return REGISTRY.collect()


def scrape_registry() -> CollectorRegistry:
    registry = CollectorRegistry(auto_describe=False)
    directory = os.environ.get(MULTIPROC_ENV)
    if directory:
        MultiProcessCollector(registry, path=directory)
    else:
        registry.register(_ThisProcess())
    registry.register(_ScrapeTimeGauges())
    return registry


def _exposition() -> HttpResponse:
    return HttpResponse(generate_latest(scrape_registry()), content_type=CONTENT_TYPE_LATEST)


def _bearer(request) -> str | None:
    scheme, _sep, credentials = request.headers.get("Authorization", "").partition(" ")
    return credentials.strip() if scheme.lower() == "bearer" else None


def prometheus_metrics(request):
    expected = settings.METRICS_TOKEN
    presented = _bearer(request)
    if presented is not None:
        if expected and hmac.compare_digest(presented.encode(), expected.encode()):
            return _exposition()
        return _refused(401, _("Invalid metrics token."))
    user = request.user
    if user.is_authenticated and user.is_staff:
        return _exposition()
    if user.is_authenticated:
        return _refused(403, _("Only staff and the metrics scraper may read the metrics."))
    return _refused(401, _("Send the metrics token as 'Authorization: Bearer <token>'."))


def _refused(status: int, detail: str) -> JsonResponse:
    code = "not_authenticated" if status == 401 else "permission_denied"
    response = JsonResponse({"code": code, "detail": detail}, status=status)
    if status == 401:
        response["WWW-Authenticate"] = 'Bearer realm="metrics"'
    return response


def mark_process_dead(pid: int) -> None:
    """For gunicorn's child_exit and Celery's worker_process_shutdown: a dead process's live
    gauges stop counting (its counters keep adding up, as Prometheus expects)."""
    if os.environ.get(MULTIPROC_ENV):
        from prometheus_client import multiprocess

        multiprocess.mark_process_dead(pid)
