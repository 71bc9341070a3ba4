"""The gunicorn worker class of the web (runtime/commands.py): uvicorn's, told to end the live
pages' event streams when it shuts down.

uvicorn stops accepting, then waits for every open response to finish; an event stream never
finishes on its own, so a worker with one open console would wait its whole graceful timeout
(30 s) and then be killed. Here the streams on this worker end first (live.stream.end_streams):
the browsers reconnect to a worker still running and resume from their last event id, and the
worker exits as soon as its other requests are done."""

import sys

from gunicorn.arbiter import Arbiter
from uvicorn.server import Server
from uvicorn_worker import UvicornWorker


class _Server(Server):
    async def shutdown(self, sockets=None) -> None:
        # Imported here: gunicorn's master loads this class before Django is set up.
        from live import stream

        stream.end_streams()
        await super().shutdown(sockets=sockets)


class Worker(UvicornWorker):
    async def _serve(self) -> None:
        # uvicorn_worker's own _serve, with the server above.
        self.config.app = self.wsgi
        server = _Server(config=self.config)
        self._install_sigquit_handler()
        await server.serve(sockets=self.sockets)
        if not server.started:
            sys.exit(Arbiter.WORKER_BOOT_ERROR)
