"""A throwaway PostgreSQL server for the audit tests: a cluster in a temporary folder,
listening only on a unix socket there, stopped and removed at the end.

Debian's ``postgresql`` package puts ``initdb`` and ``pg_ctl`` in
``/usr/lib/postgresql/VERSION/bin``; they refuse to run as root, so as root the cluster is
made and run as the ``postgres`` user. Where no server or no driver is at hand the tests
that need one skip, saying why, unless ``GPU_ADVISOR_REQUIRE_POSTGRES=1`` (set by
``.ci/run``), where they fail.
"""

from __future__ import annotations

import os
import pwd
import shutil
import subprocess
import tempfile
import uuid
from dataclasses import dataclass
from pathlib import Path

REQUIRED_ENV = "GPU_ADVISOR_REQUIRE_POSTGRES"
USER = "gpu"


def binaries() -> Path | None:
    """The folder holding ``initdb`` and ``pg_ctl`` (the newest installed), or None."""
    found = shutil.which("initdb")
    if found and shutil.which("pg_ctl"):
        return Path(found).parent
    candidates = sorted(Path("/usr/lib/postgresql").glob("*/bin/initdb"),
                        key=lambda p: int(p.parts[-3]) if p.parts[-3].isdigit() else 0)
    return candidates[-1].parent if candidates else None


def unavailable() -> str | None:
    """Why no server can be started here (None: one can)."""
    try:
        import psycopg  # noqa: F401
    except ImportError:
        return "psycopg is not installed (pip install -e '.[test]')"
    if binaries() is None:
        return "no PostgreSQL server installed (apt-get install postgresql)"
    if os.geteuid() == 0 and not _has_user("postgres"):
        return "running as root and there is no 'postgres' user to run the server as"
    return None


def _has_user(name: str) -> bool:
    try:
        pwd.getpwnam(name)
    except KeyError:
        return False
    return True


@dataclass
class Server:
    """A running throwaway cluster."""

    root: Path
    bin: Path

    @property
    def socket_dir(self) -> Path:
        return self.root / "socket"

    def url(self, database: str, *, password: str | None = None) -> str:
        """A URL of a database on this server (over its unix socket)."""
        auth = f"{USER}:{password}" if password else USER
        return f"postgresql://{auth}@/{database}?host={self.socket_dir}"

    def new_database(self) -> str:
        """A fresh, empty database's URL."""
        name = f"audit_{uuid.uuid4().hex[:12]}"
        self.sql(f'CREATE DATABASE "{name}"')
        return self.url(name)

    def sql(self, statement: str, database: str = "postgres") -> list[tuple[object, ...]]:
        """Run one statement as the superuser; its rows (if any)."""
        import psycopg

        with psycopg.connect(self.url(database), autocommit=True) as conn:
            cursor = conn.execute(statement)  # type: ignore[arg-type]
            return cursor.fetchall() if cursor.description else []

    def stop(self) -> None:
        """Stop the server and remove its folder."""
        _run(self, [str(self.bin / "pg_ctl"), "-D", str(self.root / "data"), "-m", "immediate",
                    "-w", "stop"], check=False)
        shutil.rmtree(self.root, ignore_errors=True)


def database_of(url: str) -> str:
    """The database a URL names."""
    from urllib.parse import urlsplit

    return urlsplit(url).path.lstrip("/")


def start() -> Server:
    """Make and start a cluster (trust authentication, unix socket only)."""
    bin_dir = binaries()
    assert bin_dir is not None
    root = Path(tempfile.mkdtemp(prefix="gpu-advisor-pg-"))
    root.chmod(0o755)
    (root / "socket").mkdir()
    server = Server(root, bin_dir)
    if os.geteuid() == 0:
        owner = pwd.getpwnam("postgres")
        for path in (root, root / "socket"):
            os.chown(path, owner.pw_uid, owner.pw_gid)
    _run(server, [str(bin_dir / "initdb"), "-D", str(root / "data"), "-A", "trust", "-U", USER,
                  "--no-sync", "-E", "UTF8", "--locale", "C"])
    options = (f"-k {root / 'socket'} -c listen_addresses='' -c fsync=off "
               "-c max_connections=100")
    try:
        _run(server, [str(bin_dir / "pg_ctl"), "-D", str(root / "data"), "-o", options,
                      "-l", str(root / "server.log"), "-w", "-t", "120", "start"])
    except subprocess.CalledProcessError:
        log = (root / "server.log").read_text(errors="replace")[-2000:]
        shutil.rmtree(root, ignore_errors=True)
        raise RuntimeError(f"the test PostgreSQL server did not start:\n{log}") from None
    return server


def _run(server: Server, argv: list[str], *, check: bool = True) -> None:
    if os.geteuid() == 0:
        argv = ["runuser", "-u", "postgres", "--", *argv]
    subprocess.run(argv, check=check, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                   cwd=server.root)
