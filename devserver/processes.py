"""Child processes of the runners: started so that they never outlive the runner, and stopped
politely (SIGTERM, then SIGKILL of their whole process group after a grace period)."""

from __future__ import annotations

import ctypes
import os
import selectors
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

_PR_SET_PDEATHSIG = 1


def say(message: str) -> None:
    print(f"devserver | {message}", file=sys.stderr, flush=True)


class DevServerError(Exception):
    """Set-up failed; the message tells the user what and where to look."""


class StopRequested(Exception):
    """The user asked the runner to stop (Ctrl-C, SIGTERM, SIGHUP)."""


def _die_with_parent_hook() -> Callable[[], None] | None:
    """A preexec_fn that makes the child receive SIGTERM when the runner dies, even by SIGKILL,
    so no web server, worker or Redis is left behind. Linux only; elsewhere children are still
    stopped on every normal exit path."""
    if not sys.platform.startswith("linux"):
        return None
    prctl = ctypes.CDLL(None, use_errno=True).prctl
    runner_pid = os.getpid()

    def hook() -> None:
        prctl(_PR_SET_PDEATHSIG, signal.SIGTERM)
        if os.getppid() != runner_pid:  # the runner died before prctl took effect
            os.kill(os.getpid(), signal.SIGTERM)

    return hook


def spawn(
    argv: Sequence[str],
    *,
    env: Mapping[str, str],
    own_process_group: bool = True,
    stdout: int | None = None,
) -> subprocess.Popen[bytes]:
    """Start a child in the project root. With own_process_group the terminal's Ctrl-C reaches
    only the runner, which then stops the children in order instead of all at once."""
    return subprocess.Popen(
        list(argv),
        cwd=ROOT,
        env=dict(env),
        start_new_session=own_process_group,
        # preexec_fn is safe here: the runners are single-threaded.
        preexec_fn=_die_with_parent_hook(),
        stdin=subprocess.DEVNULL if own_process_group else None,
        stdout=stdout,
        stderr=subprocess.STDOUT if stdout is not None else None,
    )


def kill_process_group(proc: subprocess.Popen[bytes]) -> None:
    """SIGKILL everything left in the child's process group (e.g. Celery's pool processes)."""
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass


def describe_exit(returncode: int) -> str:
    if returncode < 0:
        return f"killed by {signal.Signals(-returncode).name}"
    return f"exit code {returncode}"


@dataclass
class Child:
    name: str
    proc: subprocess.Popen[bytes]
    pending: bytes = b""


# A second stop signal within this time is the first one delivered again, not an escalation.
ESCALATE_AFTER_SECONDS = 3.0


@dataclass
class Supervisor:
    """Owns the long-running children of `make run`, prefixes their output with their name,
    and turns Ctrl-C / SIGTERM / SIGHUP into an orderly stop (a second Ctrl-C kills at once)."""

    children: list[Child] = field(default_factory=list)
    stop_signal: int | None = None
    force: bool = False
    _first_signal_at: float = 0.0
    _selector: selectors.BaseSelector = field(default_factory=selectors.DefaultSelector)

    def install_signal_handlers(self) -> None:
        for signum in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
            signal.signal(signum, self._on_signal)

    def _on_signal(self, signum: int, _frame: object) -> None:
        """The first signal starts an orderly stop. The same stop often arrives twice at once
        (a supervisor, `timeout` or `docker stop` signals the whole process group, and `make`
        passes its own on): only a signal after ESCALATE_AFTER_SECONDS forces the kill."""
        now = time.monotonic()
        if self.stop_signal is None:
            self.stop_signal = signum
            self._first_signal_at = now
        elif now - self._first_signal_at >= ESCALATE_AFTER_SECONDS:
            self.force = True

    def raise_if_stop_requested(self) -> None:
        if self.stop_signal is not None:
            raise StopRequested(signal.Signals(self.stop_signal).name)

    # -- one-off set-up steps (migrate, collectstatic, seed_demo) -------------------------------

    def run_step(self, name: str, argv: Sequence[str], *, env: Mapping[str, str]) -> None:
        """Run a set-up command to completion with its output shown as is; a failure is fatal."""
        self.raise_if_stop_requested()
        say(f"{name}: {' '.join(argv[1:])}")
        proc = spawn(argv, env=env)
        while proc.poll() is None:
            if self.stop_signal is not None:
                stop_all([Child(name, proc)], grace_seconds=10, force=lambda: self.force)
                raise StopRequested(signal.Signals(self.stop_signal).name)
            time.sleep(0.1)
        if proc.returncode != 0:
            raise DevServerError(f"{name} failed ({describe_exit(proc.returncode)})")

    # -- long-running children ------------------------------------------------------------------

    def start(self, name: str, argv: Sequence[str], *, env: Mapping[str, str]) -> None:
        self.raise_if_stop_requested()
        proc = spawn(argv, env=env, stdout=subprocess.PIPE)
        assert proc.stdout is not None
        os.set_blocking(proc.stdout.fileno(), False)
        child = Child(name, proc)
        self._selector.register(proc.stdout, selectors.EVENT_READ, child)
        self.children.append(child)
        say(f"started {name} (pid {proc.pid}): {' '.join(argv)}")

    def watch(self, *, on_tick: Callable[[], None]) -> int:
        """Relay output until a stop is requested (returns 0) or a child dies (returns 1)."""
        while True:
            self.pump_output(timeout=0.2)
            if self.stop_signal is not None:
                say(f"{signal.Signals(self.stop_signal).name} received: stopping everything")
                return 0
            for child in self.children:
                if child.proc.poll() is not None:
                    self.pump_output(timeout=0)
                    how = describe_exit(child.proc.returncode)
                    say(f"{child.name} stopped unexpectedly ({how}): stopping everything")
                    return 1
            on_tick()

    def pump_output(self, *, timeout: float) -> None:
        if not self._selector.get_map():
            time.sleep(timeout)
            return
        for key, _ in self._selector.select(timeout):
            child: Child = key.data
            try:
                chunk = os.read(key.fd, 65536)
            except BlockingIOError:
                continue
            if not chunk:  # EOF: the child closed its output
                self._selector.unregister(key.fileobj)
                chunk = b"\n" if child.pending else b""
            *lines, child.pending = (child.pending + chunk).split(b"\n")
            for line in lines:
                sys.stdout.write(f"{child.name:<6} | {line.decode(errors='replace')}\n")
            sys.stdout.flush()

    def stop_children(self) -> None:
        stop_all(
            self.children,
            grace_seconds=30,
            force=lambda: self.force,
            pump=lambda: self.pump_output(timeout=0.1),
        )


def stop_all(
    children: Sequence[Child],
    *,
    grace_seconds: float,
    force: Callable[[], bool],
    pump: Callable[[], None] | None = None,
) -> None:
    """SIGTERM every child still running, wait for all of them (relaying their last output),
    then SIGKILL whatever is left of their process groups."""
    for child in children:
        if child.proc.poll() is None:
            say(f"stopping {child.name} (pid {child.proc.pid})")
            try:
                child.proc.send_signal(signal.SIGTERM)
            except ProcessLookupError:
                pass
    deadline = time.monotonic() + grace_seconds
    while any(c.proc.poll() is None for c in children):
        if force() or time.monotonic() > deadline:
            for child in children:
                if child.proc.poll() is None:
                    say(f"killing {child.name} (pid {child.proc.pid})")
                    kill_process_group(child.proc)
            break
        if pump is not None:
            pump()
        else:
            time.sleep(0.1)
    for child in children:
        child.proc.wait()
        kill_process_group(child.proc)
