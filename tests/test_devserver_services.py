"""The embedded services `make run` and `make test` start (devserver/services.py): when no
loopback port can be had for Redis, the runner says so instead of failing on its own message;
ClamAV's clamd is found where Debian puts it, and a runner that cannot install it says how."""

import os
import socket

import pytest

from devserver import services
from devserver.processes import DevServerError
from devserver.services import _free_port


@pytest.fixture
def no_port_binds(monkeypatch):
    def refuse(self, address):
        raise OSError("address in use")

    monkeypatch.setattr(socket.socket, "bind", refuse)


@pytest.mark.usefixtures("no_port_binds")
def test_no_free_port_from_a_first_port_names_the_range():
    with pytest.raises(DevServerError, match="no free port in 6390-6489"):
        _free_port(6390)


@pytest.mark.usefixtures("no_port_binds")
def test_no_free_port_at_all_is_the_runners_error():
    # first=None (make test's Redis takes any port): the message used to add 99 to None.
    with pytest.raises(DevServerError, match="no free loopback port"):
        _free_port(None)


def test_debians_clamd_is_found_outside_path(tmp_path, monkeypatch):
    # Debian installs clamd in /usr/sbin, which a user's PATH may leave out.
    clamd = tmp_path / "sbin" / "clamd"
    clamd.parent.mkdir()
    clamd.write_text("#!/bin/sh\n")
    clamd.chmod(0o755)
    monkeypatch.setattr(services.shutil, "which", lambda name: None)
    monkeypatch.setattr(services, "CLAMD_PATHS", (str(tmp_path / "bin" / "clamd"), str(clamd)))
    assert services.find_clamd() == str(clamd)


def test_without_clamd_and_no_way_to_install_it_the_runner_says_how(monkeypatch):
    monkeypatch.setattr(services, "find_clamd", lambda: None)
    monkeypatch.setattr(os, "geteuid", lambda: 1000)  # not root: no apt-get install
    with pytest.raises(DevServerError, match="apt-get install clamav-daemon"):
        services.ensure_clamd()
