"""The container files start the project's own command lines (runtime/commands.py — the ones
`make run` and tests/test_runtime.py run), with one beat, health checks and named volumes. No
container daemon runs where the suite runs, so this reads the files; the commands themselves
are exercised by tests/test_runtime.py."""

from pathlib import Path

import yaml

from runtime.commands import COMMANDS

ROOT = Path(__file__).resolve().parents[1]


def _compose() -> dict:
    return yaml.safe_load((ROOT / "compose.yaml").read_text())


def test_compose_has_the_whole_deployment_with_health_checks_and_volumes():
    services = _compose()["services"]
    assert set(services) == {"db", "redis", "migrate", "web", "worker", "worker-slow", "beat"}
    assert (
        services["db"]["image"].startswith("postgres:1")
        and int(services["db"]["image"].split(":")[1]) >= 15
    )
    assert services["redis"]["image"] == "redis:7"
    for name in ("db", "redis", "web", "worker", "worker-slow"):
        assert "healthcheck" in services[name], name
    assert "/readyz" in " ".join(services["web"]["healthcheck"]["test"])
    assert set(_compose()["volumes"]) == {"postgres-data", "redis-data", "metrics", "media"}
    for name in ("web", "worker-slow"):  # uploads stored by web, thumbnails by the slow worker
        assert "media:/srv/media" in services[name]["volumes"], name
    assert services["migrate"]["command"] == ["python", "-m", "runtime", "migrate"]
    for name in ("web", "worker", "worker-slow", "beat"):
        assert services[name]["depends_on"]["migrate"]["condition"] == (
            "service_completed_successfully"
        )


def test_web_worker_and_beat_run_the_projects_own_commands_and_one_beat():
    services = _compose()["services"]
    for name in ("migrate", "web", "worker", "worker-slow", "beat"):
        command = services[name]["command"]
        assert command[:3] == ["python", "-m", "runtime"] and command[3] == name
        assert name in COMMANDS
    assert services["beat"]["deploy"]["replicas"] == 1
    # One metrics volume shared by every process /metrics adds up.
    for name in ("migrate", "web", "worker", "worker-slow", "beat"):
        assert services[name]["environment"]["PROMETHEUS_MULTIPROC_DIR"] == "/srv/metrics"
        assert "metrics:/srv/metrics" in services[name]["volumes"]
    assert not [
        s for s, spec in services.items() if s != "beat" and "beat" in spec.get("command", [])
    ]


def test_the_image_is_slim_runs_as_a_user_and_collects_static_files_at_build():
    dockerfile = (ROOT / "Dockerfile").read_text()
    assert "FROM python:3.11-slim" in dockerfile
    assert "USER ticketdesk" in dockerfile
    assert "collectstatic --noinput" in dockerfile
    # Dependencies in their own layer, before the source is copied.
    assert dockerfile.index("pip install -r") < dockerfile.index("COPY . .")
    assert 'CMD ["python", "-m", "runtime", "web"]' in dockerfile
    ignored = (ROOT / ".dockerignore").read_text().split()
    assert {".git", ".venv", ".data"} <= set(ignored)
