"""GET /api/metrics/queue/?group_by=tag: each bucket's arrivals' figures per tag, a ticket
with two tags under both, the untagged under null; without group_by the answer is as before."""

from datetime import timedelta

import pytest

from tests.insight.test_queue_figures import H10, URL, at, history, people  # noqa: F401
from ticketing.models import Ticket

pytestmark = pytest.mark.django_db


def test_queue_metrics_group_the_arrivals_by_tag(api, people, history):  # noqa: F811
    def tag(approved_at, tags):
        Ticket.objects.filter(handler_group=history, approved_time=approved_at).update(tags=tags)

    tag(at(0), ["printer", "vip"])  # assigned after 10 s
    tag(at(5), ["printer"])  # after 30 s
    tag(at(20), ["printer"])  # after 90 s, abandoned
    # (at(10): after 50 s, and at(30): still waiting, carry no tag.)
    window = {"from": "2025-03-03T10:00:00Z", "to": "2025-03-03T12:00:00Z"}
    response = api.as_user(people["leader"]).get(
        URL, {"group": history.pk, "group_by": "tag", **window}
    )
    assert response.status_code == 200, response.json()
    ten, eleven = response.json()["buckets"]
    assert ten["arrivals"] == 5  # the bucket's own figures are unchanged
    rows = {row["tag"]: row for row in ten["by_tag"]}
    assert [row["tag"] for row in ten["by_tag"]] == ["printer", "vip", None]
    assert rows["printer"]["arrivals"] == 3
    assert rows["printer"]["time_to_assign_p50_seconds"] == 30
    assert rows["printer"]["abandoned"] == 1
    assert rows["printer"]["service_level"] == pytest.approx(2 / 3, abs=1e-4)
    assert rows["vip"]["arrivals"] == 1 and rows["vip"]["service_level"] == 1
    assert rows[None]["arrivals"] == 2 and rows[None]["service_level"] == 0.5
    assert rows[None]["time_to_assign_p50_seconds"] == 50
    assert [row["tag"] for row in eleven["by_tag"]] == [None]

    plain = api.as_user(people["leader"]).get(URL, {"group": history.pk, **window}).json()
    assert "by_tag" not in plain["buckets"][0]


def test_an_unknown_grouping_is_a_400_naming_it(api, people, history):  # noqa: F811
    response = api.as_user(people["staff"]).get(URL, {"group": history.pk, "group_by": "x"})
    assert response.status_code == 400
    assert "group_by" in response.json()["errors"]


def test_the_tag_statement_is_one_more(api, people, history, django_assert_max_num_queries):  # noqa: F811
    client = api.as_user(people["staff"])
    params = {"group": history.pk, "from": H10.isoformat(), "to": (H10 + timedelta(hours=1))}
    with django_assert_max_num_queries(12) as plain:
        client.get(URL, params)
    with django_assert_max_num_queries(len(plain) + 1):
        client.get(URL, {**params, "group_by": "tag"})
