"""POST /api/simulations/ and GET /api/simulations/{id}/: access, validation, the worker
hand-off (mocked broker) and the worker task itself."""

from unittest import mock

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from insight import services, tasks
from insight.models import Simulation
from tests.factories import HandlerGroupFactory, UserFactory

pytestmark = pytest.mark.django_db

URL = "/api/simulations/"
SYNTHETIC = {"synthetic": {"agents": 2, "calls": 6}, "strategies": [1, 4], "seed": 3}


@pytest.fixture
def people(db):
    leader, other_leader, member = (UserFactory(username=n) for n in ("lead", "lead2", "mem"))
    group = HandlerGroupFactory(name="support", leader=leader, members=[member], assign_strategy=1)
    HandlerGroupFactory(name="facilities", leader=other_leader, members=[member])
    return {"leader": leader, "other_leader": other_leader, "member": member, "group": group}


def _recorded(group):
    return {"group": group.pk, "from": "2026-11-02", "to": "2026-11-03", "strategies": [1, 2]}


def test_a_leader_starts_a_simulation_of_their_group_handed_to_a_worker(
    people, api, django_capture_on_commit_callbacks
):
    with mock.patch("insight.services.current_app.send_task") as send:
        with django_capture_on_commit_callbacks(execute=True):
            response = api.as_user(people["leader"]).post(
                URL, _recorded(people["group"]), format="json"
            )
    assert response.status_code == 202, response.content
    simulation = Simulation.objects.get(pk=response.data["id"])
    assert response.data == {"id": simulation.pk, "status": "queued"}
    send.assert_called_once_with("insight.simulate", args=(simulation.pk,))
    assert simulation.group == people["group"]
    assert simulation.params == {
        "strategies": [1, 2],
        "seed": 0,
        "group": people["group"].pk,
        "from": "2026-11-02",
        "to": "2026-11-03",
    }


def test_an_unreachable_broker_fails_the_simulation(
    people, api, django_capture_on_commit_callbacks
):
    with mock.patch("insight.services.current_app.send_task", side_effect=OSError("down")):
        with django_capture_on_commit_callbacks(execute=True):
            response = api.as_user(people["leader"]).post(URL, SYNTHETIC, format="json")
    simulation = Simulation.objects.get(pk=response.data["id"])
    assert simulation.status == "failed" and "down" in simulation.error


@pytest.mark.parametrize(
    ("who", "body", "status"),
    [
        ("leader", "synthetic", 202),
        ("other_leader", "recorded", 403),
        ("other_leader", "synthetic", 202),
        ("member", "recorded", 403),
        ("member", "synthetic", 403),
        ("staff", "recorded", 202),
        ("staff", "synthetic", 202),
    ],
)
def test_who_may_start_a_simulation(people, staff, api, who, body, status):
    user = staff if who == "staff" else people[who]
    data = SYNTHETIC if body == "synthetic" else _recorded(people["group"])
    response = api.as_user(user).post(URL, data, format="json")
    assert response.status_code == status, response.content


def test_anonymous_is_refused(api):
    assert api.post(URL, SYNTHETIC, format="json").status_code == 401


@pytest.mark.parametrize(
    ("body", "fields"),
    [
        ({}, {"group", "from", "to"}),
        ({"group": 999999, "from": "2026-11-02", "to": "2026-11-02"}, {"group"}),
        ({"group": "{group}", "from": "2026-11-05", "to": "2026-11-02"}, {"to"}),
        ({"group": "{group}", "from": "2026-01-01", "to": "2026-12-31"}, {"to"}),
        ({"group": "{group}", "from": "yesterday", "to": "2026-11-02"}, {"from"}),
        ({"synthetic": {"agents": 0, "colour": "blue"}}, {"synthetic"}),
        ({"synthetic": {}, "group": "{group}"}, {"group"}),
        ({"synthetic": {}, "strategies": [0]}, {"strategies"}),
        ({"synthetic": {}, "strategies": [1, 1]}, {"strategies"}),
        ({"synthetic": {}, "seed": -1}, {"seed"}),
    ],
)
def test_bad_input_is_a_400_naming_the_fields(people, staff, api, body, fields):
    body = {k: people["group"].pk if v == "{group}" else v for k, v in body.items()}
    response = api.as_user(staff).post(URL, body, format="json")
    assert response.status_code == 400, response.content
    assert set(response.json()["errors"]) == fields, response.json()
    assert not Simulation.objects.exists()


def test_reading_a_simulation(people, staff, api):
    mine = services.simulation_request(
        user=people["leader"], group=people["group"], params=_recorded(people["group"])
    )
    theirs = services.simulation_request(user=people["other_leader"], group=None, params=SYNTHETIC)
    leader = api.as_user(people["leader"])
    response = leader.get(f"{URL}{mine.pk}/")
    assert response.status_code == 200
    assert response.data == {
        "id": mine.pk,
        "status": "queued",
        "params": mine.params,
        "result": None,
        "error": "",
    }
    assert leader.get(f"{URL}{theirs.pk}/").status_code == 404
    assert leader.get(f"{URL}999999/").status_code == 404
    assert api.as_user(people["other_leader"]).get(f"{URL}{mine.pk}/").status_code == 404
    assert api.as_user(people["member"]).get(f"{URL}{mine.pk}/").status_code == 403
    assert api.as_user(staff).get(f"{URL}{theirs.pk}/").status_code == 200


def test_the_worker_runs_a_synthetic_simulation(people):
    simulation = Simulation.objects.create(params=SYNTHETIC, created_by=people["leader"])
    assert tasks.simulate(simulation.pk) == "done"
    simulation.refresh_from_db()
    assert simulation.finished is not None and simulation.error == ""
    reports = simulation.result["strategies"]
    assert [r["strategy_label"] for r in reports] == ["round robin", "longest idle"]
    assert all(sum(r["counts"].values()) == 6 for r in reports)
    assert simulation.result["claim"]["seed_claim"] == {
        "round_robin": 6.2,
        "longest_idle_wrap_up": 1.8,
    }
    assert tasks.simulate(simulation.pk) == "skipped"  # only a queued simulation runs


def test_the_worker_runs_a_recorded_simulation_and_reports_failures(people):
    ok = Simulation.objects.create(group=people["group"], params=_recorded(people["group"]))
    assert services.run_simulation(ok.pk) == "done"
    ok.refresh_from_db()
    assert ok.result["mode"] == "recorded" and ok.result["arrivals"] == 0
    bad = Simulation.objects.create(params={"synthetic": {"agents": 0}})
    assert services.run_simulation(bad.pk) == "failed"
    bad.refresh_from_db()
    assert "agents" in bad.error


def test_the_command_prints_a_table_per_strategy(capsys):
    call_command("simulate_routing", "--synthetic", "agents=2,calls=10", "--strategies", "1,4")
    out = capsys.readouterr().out
    assert "wait p50 s" in out and "count sd" in out
    assert "round robin " in out and "longest idle " in out
    assert "seed claim (round robin 6.2" in out


def test_the_command_replays_a_group(people, capsys):
    call_command(
        "simulate_routing", "--group", "support", "--from", "2026-11-02", "--to", "2026-11-02"
    )
    out = capsys.readouterr().out
    assert "group support" in out and "presence:" in out
    assert out.count("counts:") == 4


@pytest.mark.parametrize(
    "args",
    [
        ["--synthetic", "agents=zero"],
        ["--group", "nope", "--from", "2026-11-02", "--to", "2026-11-02"],
        ["--group", "support", "--from", "2026-11-02"],
        ["--synthetic", "", "--strategies", "0"],
        [],
    ],
)
def test_the_command_refuses_bad_arguments(people, args):
    with pytest.raises(CommandError):
        call_command("simulate_routing", *args)
