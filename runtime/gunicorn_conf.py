"""gunicorn settings that are code rather than command-line flags (runtime/commands.py passes
`--config python:runtime.gunicorn_conf`)."""


def child_exit(server, worker):
    """A web worker died or was recycled: its live gauges stop counting in /metrics."""
    from config.metrics import mark_process_dead

    mark_process_dead(worker.pid)
