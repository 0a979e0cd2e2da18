"""Several machines on one host for test_machines.py: Linux network namespaces on a bridge.

Each machine is a network namespace with one veth link to a bridge that lives in a namespace
of its own, and an address in 198.18.0.0/24 (set aside for network tests). No machine has a
route out: every address the test uses is inside namespaces it creates. Processes run "on" a
machine through `ip netns exec`; the test itself talks to the machines from threads that
entered the "lab" machine's namespace (`Machine.threads`), never from its own namespace.

Everything is named with PREFIX and the test process's pid, and `Lab.close()` kills every
process in every namespace of the lab and deletes the namespaces (which removes their veth
links and the bridge), also after a failure; `remove_leftovers()` does the same for labs of
test processes that are gone (killed before they could clean up).

Needs root, `ip`, `runuser`, PostgreSQL's server binaries and redis-server
(`missing_requirement()` names what is missing).
"""

from __future__ import annotations

import contextlib
import ctypes
import glob
import os
import pwd
import re
import shutil
import signal
import subprocess
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

PREFIX = "ctm"  # curation test machines: namespaces ctm<pid>-<role>, links ctm<pid><role>
SUBNET = "198.18.0"
NETMASK = 24
_LEFTOVER = re.compile(rf"^{PREFIX}(\d+)")
CLONE_NEWNET = 0x40000000
STOP_TIMEOUT = 30


def postgres_bin() -> Path | None:
    """The directory of PostgreSQL's server binaries (initdb, pg_ctl), newest first."""
    found = sorted(glob.glob("/usr/lib/postgresql/*/bin/pg_ctl"), key=_version, reverse=True)
    return Path(found[0]).parent if found else None


def _version(path: str) -> int:
    match = re.search(r"/postgresql/(\d+)/", path)
    return int(match.group(1)) if match else 0


def missing_requirement() -> str | None:
    """Why the machines cannot be built here, or None."""
    if os.geteuid() != 0:
        return "needs root (network namespaces)"
    for tool in ("ip", "runuser", "redis-server"):
        if not shutil.which(tool):
            return f"`{tool}` is not installed"
    if postgres_bin() is None:
        return "PostgreSQL's server binaries (/usr/lib/postgresql/*/bin) are not installed"
    try:
        pwd.getpwnam("postgres")
    except KeyError:
        return "there is no `postgres` OS user to run initdb as"
    return None


def sh(*args: str, check: bool = True, timeout: float = 60) -> subprocess.CompletedProcess:
    """Run a command (an `ip` command, mostly) and return what it printed."""
    done = subprocess.run(  # noqa: S603 - fixed arguments
        list(args), capture_output=True, text=True, timeout=timeout, check=False
    )
    if check and done.returncode != 0:
        raise RuntimeError(f"{' '.join(args)} exited with {done.returncode}: {done.stderr}")
    return done


# --- Threads inside a namespace ------------------------------------------------------------

_libc = ctypes.CDLL(None, use_errno=True)


def _enter_namespace(namespace: str) -> None:
    """Move the calling thread (only it: network namespaces are per thread) into namespace."""
    path = f"/run/netns/{namespace}"
    descriptor = os.open(path, os.O_RDONLY)
    try:
        if _libc.setns(descriptor, CLONE_NEWNET) != 0:
            error = ctypes.get_errno()
            raise OSError(error, f"setns({path}): {os.strerror(error)}")
    finally:
        os.close(descriptor)
    # Never talk to the machines from the host's own namespace: check where we are.
    if os.stat("/proc/thread-self/ns/net").st_ino != os.stat(path).st_ino:
        raise OSError(f"this thread is not in the network namespace {namespace}")


# --- Processes -------------------------------------------------------------------------------


@dataclass
class Process:
    """A process started on a machine, in its own process group, logging to log_path."""

    name: str
    popen: subprocess.Popen
    log_path: Path

    def alive(self) -> bool:
        return self.popen.poll() is None

    def log_text(self) -> str:
        return self.log_path.read_text(errors="replace") if self.log_path.exists() else ""

    def log_tail(self, lines: int = 40) -> str:
        return "\n".join(self.log_text().splitlines()[-lines:])

    def send(self, number: int) -> None:
        if self.alive():
            with contextlib.suppress(ProcessLookupError):
                os.killpg(self.popen.pid, number)

    def kill(self) -> None:
        """SIGKILL the process and everything in its group (a Celery pool too)."""
        self.send(signal.SIGKILL)
        with contextlib.suppress(subprocess.TimeoutExpired):
            self.popen.wait(10)

    def stop(self, sig: int = signal.SIGTERM, timeout: float = STOP_TIMEOUT) -> None:
        """Ask it to stop (SIGTERM: warm shutdown); SIGKILL it after `timeout`."""
        if not self.alive():
            return
        with contextlib.suppress(ProcessLookupError):
            self.popen.send_signal(sig)
        try:
            self.popen.wait(timeout)
        except subprocess.TimeoutExpired:
            self.kill()
        with contextlib.suppress(ProcessLookupError):
            os.killpg(self.popen.pid, signal.SIGKILL)  # what is left of its group


# --- Machines --------------------------------------------------------------------------------


@dataclass
class Machine:
    lab: Lab
    role: str
    namespace: str
    address: str
    link: str  # the bridge's end of the machine's veth pair: down cuts the machine off
    _threads: ThreadPoolExecutor | None = field(default=None, repr=False)

    def command(self, *args: str, user: str | None = None) -> list[str]:
        """`args` run on this machine (as `user` if given)."""
        run_as = ["runuser", "-u", user, "--"] if user else []
        return ["ip", "netns", "exec", self.namespace, *run_as, *args]

    def run(
        self,
        *args: str,
        env: dict | None = None,
        user: str | None = None,
        cwd: Path | None = None,
        timeout: float = 180,
    ) -> str:
        """Run a command on this machine and return its output; fail on a non-zero exit."""
        done = subprocess.run(  # noqa: S603 - fixed arguments
            self.command(*args, user=user),
            env=env,
            cwd=cwd,
            capture_output=True,
            text=True,
            timeout=timeout,
            check=False,
        )
        if done.returncode != 0:
            raise RuntimeError(
                f"{self.role}: {' '.join(args)[:200]} exited with {done.returncode}:\n"
                f"{done.stdout[-2000:]}\n{done.stderr[-4000:]}"
            )
        return done.stdout

    def start(
        self,
        name: str,
        *args: str,
        env: dict | None = None,
        cwd: Path | None = None,
        user: str | None = None,
    ) -> Process:
        """Start a long-running process on this machine, logging to the lab's log folder."""
        log_path = self.lab.logs / f"{name}.log"
        with log_path.open("a") as log:
            popen = subprocess.Popen(  # noqa: S603 - fixed arguments
                self.command(*args, user=user),
                env=env,
                cwd=cwd,
                stdout=log,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )
        process = Process(name, popen, log_path)
        self.lab.processes.append(process)
        return process

    def cut(self) -> None:
        """Unplug the machine from the bridge: its packets go nowhere, its processes live."""
        self.lab.bridge_ip("link", "set", self.link, "down")

    def plug(self) -> None:
        self.lab.bridge_ip("link", "set", self.link, "up")

    def threads(self, workers: int = 16) -> ThreadPoolExecutor:
        """Threads of the test process that live in this machine's network namespace."""
        if self._threads is None:
            self._threads = ThreadPoolExecutor(
                workers,
                thread_name_prefix=f"on-{self.role}",
                initializer=_enter_namespace,
                initargs=(self.namespace,),
            )
        return self._threads


class Lab:
    """The machines of one test: a bridge namespace and one namespace per machine."""

    def __init__(self, logs: Path) -> None:
        self.tag = f"{PREFIX}{os.getpid()}"
        self.bridge_namespace = f"{self.tag}-net"
        self.machines: dict[str, Machine] = {}
        self.processes: list[Process] = []
        self.logs = logs
        logs.mkdir(parents=True, exist_ok=True)
        remove_leftovers()
        sh("ip", "netns", "add", self.bridge_namespace)
        self.bridge_ip("link", "add", "br0", "type", "bridge")
        self.bridge_ip("link", "set", "br0", "up")

    def bridge_ip(self, *args: str) -> None:
        sh("ip", "-n", self.bridge_namespace, *args)

    def machine(self, role: str, host: int) -> Machine:
        """A new machine at SUBNET.host, plugged into the bridge."""
        assert re.fullmatch(r"[a-z0-9]{1,3}", role), role  # link names have 15 characters
        namespace, link, peer = f"{self.tag}-{role}", f"{self.tag}{role}", f"{self.tag}{role}p"
        address = f"{SUBNET}.{host}"
        sh("ip", "netns", "add", namespace)
        machine = Machine(self, role, namespace, address, link)
        self.machines[role] = machine
        sh("ip", "-n", namespace, "link", "set", "lo", "up")
        sh("ip", "link", "add", link, "type", "veth", "peer", "name", peer)
        sh("ip", "link", "set", link, "netns", self.bridge_namespace)
        sh("ip", "link", "set", peer, "netns", namespace)
        self.bridge_ip("link", "set", link, "master", "br0")
        self.bridge_ip("link", "set", link, "up")
        sh("ip", "-n", namespace, "link", "set", peer, "name", "eth0")
        sh("ip", "-n", namespace, "addr", "add", f"{address}/{NETMASK}", "dev", "eth0")
        sh("ip", "-n", namespace, "link", "set", "eth0", "up")
        # Only the subnet's own route, never a default one: nothing leaves the lab.
        routes = sh("ip", "-n", namespace, "route", "show").stdout
        assert "default" not in routes, routes
        return machine

    def close(self) -> None:
        """Stop every process, then delete every namespace of the lab (also on failure)."""
        for machine in self.machines.values():
            if machine._threads is not None:
                machine._threads.shutdown(wait=False, cancel_futures=True)
        for process in reversed(self.processes):
            with contextlib.suppress(Exception):
                process.kill()
        _remove_lab(self.tag)


def _namespaces() -> list[str]:
    listed = sh("ip", "netns", "list", check=False).stdout.splitlines()
    return [line.split()[0] for line in listed if line.strip()]


def _kill_namespace_processes(namespace: str) -> None:
    """SIGKILL whatever still runs in the namespace (daemons such as postgres too)."""
    for _ in range(5):
        pids = sh("ip", "netns", "pids", namespace, check=False).stdout.split()
        if not pids:
            return
        for pid in pids:
            with contextlib.suppress(ProcessLookupError, ValueError):
                os.kill(int(pid), signal.SIGKILL)
        time.sleep(0.2)


def _remove_lab(tag: str) -> None:
    namespaces = [n for n in _namespaces() if n.startswith(f"{tag}-")]
    for namespace in namespaces:
        _kill_namespace_processes(namespace)
    for namespace in namespaces:
        sh("ip", "netns", "del", namespace, check=False)
    # Links created but not yet moved into a namespace (a failure half-way).
    for line in sh("ip", "-o", "link", "show", check=False).stdout.splitlines():
        name = line.split(":")[1].strip().split("@")[0] if ":" in line else ""
        if name.startswith(tag):
            sh("ip", "link", "del", name, check=False)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def remove_leftovers() -> None:
    """Remove the labs of test processes that are gone (killed before their clean-up)."""
    tags = set()
    for namespace in _namespaces():
        match = _LEFTOVER.match(namespace)
        if match and not _alive(int(match.group(1))):
            tags.add(f"{PREFIX}{match.group(1)}")
    for line in sh("ip", "-o", "link", "show", check=False).stdout.splitlines():
        name = line.split(":")[1].strip().split("@")[0] if ":" in line else ""
        match = _LEFTOVER.match(name)
        if match and not _alive(int(match.group(1))):
            tags.add(f"{PREFIX}{match.group(1)}")
    for tag in tags:
        _remove_lab(tag)
    for leftover in glob.glob(f"/tmp/{PREFIX}[0-9]*-run"):  # noqa: S108 - our own folders
        match = _LEFTOVER.match(Path(leftover).name)
        if match and not _alive(int(match.group(1))):
            shutil.rmtree(leftover, ignore_errors=True)


# --- The services of the db machine ----------------------------------------------------------


class Postgres:
    """A PostgreSQL server of the test's own on `machine` (initdb refuses root: runs as
    the postgres OS user), with its data in `directory`."""

    def __init__(self, machine: Machine, directory: Path, settings: dict[str, str]) -> None:
        self.machine = machine
        self.directory = directory
        self.bin = postgres_bin()
        self.settings = settings
        self.log_path = machine.lab.logs / "postgres.log"
        self.url = f"postgres://postgres@{machine.address}:5432/curation"

    def _pg_ctl(self, *args: str) -> str:
        return self.machine.run(
            str(self.bin / "pg_ctl"), "-D", str(self.directory), *args, user="postgres", timeout=120
        )

    def create(self) -> None:
        self.directory.mkdir(parents=True)
        shutil.chown(self.directory, "postgres", "postgres")
        self.log_path.touch()
        shutil.chown(self.log_path, "postgres", "postgres")
        self.directory.chmod(0o700)
        self.machine.run(
            str(self.bin / "initdb"),
            "-D",
            str(self.directory),
            "-A",
            "trust",
            "-U",
            "postgres",
            "--no-sync",
            user="postgres",
        )
        with (self.directory / "pg_hba.conf").open("a") as hba:  # the lab's machines
            hba.write(f"host all all {SUBNET}.0/{NETMASK} trust\n")
            hba.write(f"host replication all {SUBNET}.0/{NETMASK} trust\n")
        self.start()
        self.machine.run(
            str(self.bin / "createdb") if (self.bin / "createdb").exists() else "createdb",
            "-h",
            str(self.directory),
            "-U",
            "postgres",
            "curation",
            user="postgres",
        )

    def create_replica_of(self, primary: Postgres) -> None:
        """A streaming replica of `primary`, copied over the lab's network (pg_basebackup -R
        writes the standby settings: it follows the primary from then on)."""
        self.directory.mkdir(parents=True)
        shutil.chown(self.directory, "postgres", "postgres")
        self.directory.chmod(0o700)
        self.log_path = self.machine.lab.logs / f"postgres-{self.machine.role}.log"
        self.log_path.touch()
        shutil.chown(self.log_path, "postgres", "postgres")
        self.machine.run(
            str(self.bin / "pg_basebackup"),
            "-h",
            primary.machine.address,
            "-U",
            "postgres",
            "-D",
            str(self.directory),
            "-R",
            "-X",
            "stream",
            user="postgres",
        )
        # The primary keeps its socket in its data folder: the copy has the socket's lock
        # file, which would stop this server from starting.
        for lock in self.directory.glob(".s.PGSQL.*"):
            lock.unlink()
        self.start()

    def start(self) -> None:
        options = [
            f"-c listen_addresses={self.machine.address}",
            "-p 5432",
            f"-c unix_socket_directories={self.directory}",
            *(f"-c {name}={value}" for name, value in self.settings.items()),
        ]
        self._pg_ctl("-o", " ".join(options), "-l", str(self.log_path), "-w", "-t", "60", "start")

    def stop(self) -> None:
        """A fast shutdown (as a service manager's restart): sessions are ended."""
        self._pg_ctl("-m", "fast", "-w", "-t", "60", "stop")


class Redis:
    """A redis-server of the test's own on `machine` that saves its data to `directory`
    when stopped with SIGTERM (as a service manager stops it) and loads it on start."""

    def __init__(self, machine: Machine, directory: Path) -> None:
        self.machine = machine
        self.directory = directory
        self.process: Process | None = None
        self.url = f"redis://{machine.address}:6379/0"
        directory.mkdir(parents=True)

    def start(self) -> None:
        self.process = self.machine.start(
            "redis",
            "redis-server",
            "--bind",
            self.machine.address,
            "--port",
            "6379",
            "--protected-mode",
            "no",
            "--save",
            "3600 1",
            "--appendonly",
            "no",
            "--dir",
            str(self.directory),
            # As the README says for one Redis shared by broker and cache.
            "--maxmemory",
            "256mb",
            "--maxmemory-policy",
            "volatile-lru",
        )

    def stop(self) -> None:
        assert self.process is not None
        self.process.stop(signal.SIGTERM)


def wait_for(condition, what: str, timeout: float, *, every: float = 0.1, processes=()):
    """Poll `condition` until it returns something true; fail naming `what`."""
    deadline = time.monotonic() + timeout
    while True:
        value = condition()
        if value:
            return value
        if time.monotonic() > deadline:
            logs = "\n".join(f"--- {p.name}:\n{p.log_tail()}" for p in processes)
            raise AssertionError(f"{what}: not within {timeout}s\n{logs}")
        for process in processes:
            if not process.alive():
                raise AssertionError(f"{what}: {process.name} exited\n{process.log_tail()}")
        time.sleep(every)


class Stopwatch:
    """Seconds since it was made (monotonic), for the figures the test prints."""

    def __init__(self) -> None:
        self.started = time.monotonic()
        self.lock = threading.Lock()

    def __call__(self) -> float:
        return time.monotonic() - self.started
