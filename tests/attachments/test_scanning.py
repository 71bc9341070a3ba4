"""The malware scan (attachments/scanning.py) against a real ClamAV daemon: clean bytes pass,
the EICAR test file is found however it is chunked, and a daemon that cannot scan (gone,
silent, over its size limit) is ScannerUnavailable, quickly, never a pass."""

import logging
import socket
import time

import pytest
from django.core.exceptions import ImproperlyConfigured

from attachments import scanning
from attachments.scanning import Infected, ScannerUnavailable
from devserver.services import EmbeddedClamd, _free_port

QUICKLY_SECONDS = 5


def test_clean_bytes_pass(clamav_scanning):
    assert scanning.scan([b"The printer on the third floor is on fire.\n"]) is None


def test_a_clean_file_of_many_chunks_passes(clamav_scanning):
    scanning.scan([b"%PDF-1.7\n", bytes(range(256)) * 1024, b"", b"%%EOF\n"])


def test_the_eicar_test_file_is_infected_and_named(clamav_scanning, eicar):
    with pytest.raises(Infected) as caught:
        scanning.scan([eicar])
    assert "eicar" in caught.value.signature.lower()


def test_eicar_split_over_many_small_chunks_is_still_found(clamav_scanning, eicar):
    with pytest.raises(Infected):
        scanning.scan(eicar[i : i + 1] for i in range(len(eicar)))


def test_an_empty_chunk_does_not_end_the_stream_early(clamav_scanning, eicar):
    # On the wire a zero-length chunk ends the stream: sent as is, clamd would scan nothing.
    with pytest.raises(Infected):
        scanning.scan([b"", eicar[:10], b"", eicar[10:]])


def test_an_infected_file_is_logged_with_its_signature_and_none_of_its_bytes(
    clamav_scanning, eicar, caplog
):
    with caplog.at_level(logging.WARNING, logger="attachments.scanning"):
        with pytest.raises(Infected) as caught:
            scanning.scan([eicar])
    (record,) = [r for r in caplog.records if r.name == "attachments.scanning"]
    assert record.levelno == logging.WARNING
    assert record.signature == caught.value.signature
    assert caught.value.signature in record.getMessage()
    assert b"EICAR" not in record.getMessage().encode()


def assert_unavailable_quickly(match):
    started = time.monotonic()
    with pytest.raises(ScannerUnavailable, match=match):
        scanning.scan([b"hello"])
    assert time.monotonic() - started < QUICKLY_SECONDS


def test_a_unix_socket_that_does_not_exist_is_unavailable_quickly(settings, tmp_path):
    settings.ATTACHMENT_SCANNER = "clamav"
    settings.CLAMD_ADDRESS = f"unix://{tmp_path / 'no-clamd.sock'}"
    assert_unavailable_quickly("cannot reach clamd")


def test_a_tcp_port_nothing_listens_on_is_unavailable_quickly(settings):
    settings.ATTACHMENT_SCANNER = "clamav"
    settings.CLAMD_ADDRESS = f"tcp://127.0.0.1:{_free_port(None, 'the test')}"
    assert_unavailable_quickly("cannot reach clamd")


def test_a_stopped_daemon_is_unavailable_quickly(settings, tmp_path):
    daemon = EmbeddedClamd(tmp_path / "clamd")
    daemon.start()
    settings.ATTACHMENT_SCANNER = "clamav"
    settings.CLAMD_ADDRESS = daemon.address
    scanning.scan([b"hello"])  # it was scanning
    daemon.stop()
    assert_unavailable_quickly("cannot reach clamd")


def test_a_daemon_that_never_answers_is_unavailable_after_the_timeout(settings, tmp_path):
    silent = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    silent.bind(str(tmp_path / "silent.sock"))
    silent.listen()  # connections queue, and nobody reads them
    settings.ATTACHMENT_SCANNER = "clamav"
    settings.CLAMD_ADDRESS = f"unix://{tmp_path / 'silent.sock'}"
    settings.CLAMD_TIMEOUT_SECONDS = 0.5
    try:
        assert_unavailable_quickly("did not answer in 0.5 s")
    finally:
        silent.close()


def test_a_file_over_the_daemons_size_limit_is_unavailable_not_clean(settings, tmp_path):
    daemon = EmbeddedClamd(tmp_path / "clamd", stream_max_bytes=1024 * 1024)
    daemon.start()
    try:
        settings.ATTACHMENT_SCANNER = "clamav"
        settings.CLAMD_ADDRESS = daemon.address
        with pytest.raises(ScannerUnavailable, match="size limit exceeded"):
            scanning.scan([b"x" * (2 * 1024 * 1024)])
    finally:
        daemon.stop()


def test_without_a_scanner_nothing_is_scanned_even_with_no_daemon(settings, tmp_path):
    settings.ATTACHMENT_SCANNER = ""
    settings.CLAMD_ADDRESS = f"unix://{tmp_path / 'no-clamd.sock'}"

    def unread():
        raise AssertionError("the file was read")
        yield b""

    assert scanning.scan(unread()) is None


def test_an_unknown_scanner_is_a_configuration_error(settings):
    settings.ATTACHMENT_SCANNER = "clamd"
    with pytest.raises(ImproperlyConfigured, match="ATTACHMENT_SCANNER"):
        scanning.scan([b"hello"])


def test_an_address_of_neither_form_is_a_configuration_error(settings):
    settings.ATTACHMENT_SCANNER = "clamav"
    settings.CLAMD_ADDRESS = "/var/run/clamav/clamd.ctl"
    with pytest.raises(ImproperlyConfigured, match="CLAMD_ADDRESS"):
        scanning.scan([b"hello"])


def test_ping_is_true_when_the_daemon_answers(settings, clamd):
    settings.CLAMD_ADDRESS = clamd
    assert scanning.ping() is True


def test_ping_is_false_when_no_daemon_answers(settings, tmp_path):
    settings.CLAMD_ADDRESS = f"unix://{tmp_path / 'no-clamd.sock'}"
    assert scanning.ping() is False
