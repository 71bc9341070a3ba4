"""The embedded services `make run` and `make test` start (devserver/services.py): when no
loopback port can be had for Redis, the runner says so instead of failing on its own message."""

import socket

import pytest

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
