"""`ticketdesk_task_runs_total{task}` counts every Celery task run, periodic or not, in the
process that runs it (tests/test_beat_two_nodes.py reads it from a real worker's files)."""

import pytest
from prometheus_client.parser import text_string_to_metric_families

from routing.drain import DRAIN_GROUPS_TASK
from routing.tasks import drain_groups
from sla.tasks import tick

TOKEN = "scrape-me"


def _runs(client) -> dict[str, float]:
    response = client.get("/metrics", HTTP_AUTHORIZATION=f"Bearer {TOKEN}")
    assert response.status_code == 200
    return {
        sample.labels["task"]: sample.value
        for family in text_string_to_metric_families(response.content.decode())
        for sample in family.samples
        if sample.name == "ticketdesk_task_runs_total"
    }


@pytest.mark.django_db
def test_each_task_run_is_counted_by_task_name(client, settings):
    settings.METRICS_TOKEN = TOKEN
    before = _runs(client)
    drain_groups.apply(args=[[]])  # an enqueued task, not a periodic one
    tick.apply()
    tick.apply()
    after = _runs(client)
    assert after[DRAIN_GROUPS_TASK] - before.get(DRAIN_GROUPS_TASK, 0) == 1
    assert after["sla.tick"] - before.get("sla.tick", 0) == 2
