import os

import pytest

from devserver.services import EmbeddedClamd
from tests.attachments.helpers import eicar_bytes


@pytest.fixture(scope="session")
def clamd(tmp_path_factory):
    """The CLAMD_ADDRESS of a real ClamAV daemon: one started for the session
    (devserver/services.py's EmbeddedClamd, whose one signature is the EICAR test file's), or,
    with CLAMD_EXTERNAL=1, the one CLAMD_ADDRESS names (e.g. a deployment's own, with the
    downloaded databases)."""
    if os.environ.get("CLAMD_EXTERNAL") == "1":
        if not os.environ.get("CLAMD_ADDRESS"):
            pytest.fail("CLAMD_EXTERNAL=1 needs CLAMD_ADDRESS (unix:///path or tcp://host:port)")
        yield os.environ["CLAMD_ADDRESS"]
        return
    daemon = EmbeddedClamd(tmp_path_factory.mktemp("clamd"))
    daemon.start()
    yield daemon.address
    daemon.stop()


@pytest.fixture
def clamav_scanning(settings, clamd):
    """Uploads are scanned by the session's clamd, as with ATTACHMENT_SCANNER=clamav."""
    settings.ATTACHMENT_SCANNER = "clamav"
    settings.CLAMD_ADDRESS = clamd
    return clamd


@pytest.fixture
def eicar():
    """The EICAR anti-virus test file (tests/attachments/helpers.py)."""
    return eicar_bytes()
