"""Varnish in front of a running site, with the repository's VCL (deploy/varnish/curation.vcl).

Used by the benchmark (bench/run_pages.py --varnish) and the integration tests
(tests/integration/test_varnish.py): `start_varnish(...)` writes the site.vcl the VCL
includes (the site's address and the addresses allowed to purge) into a directory of its
own, starts `varnishd -F` there on a free loopback port (or the one given) and waits until
it answers; `Varnish.stop()` stops that process by its id. Nothing of the system's Varnish
(its working directory, its service) is used.
"""

import os
import shutil
import signal
import socket
import subprocess
import tempfile
import time
import urllib.error
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
VCL = ROOT / "deploy" / "varnish" / "curation.vcl"
VMOD_DIRS = (Path("/usr/lib/x86_64-linux-gnu/varnish/vmods"), Path("/usr/lib/varnish/vmods"))
START_TIMEOUT = 30.0
STOP_TIMEOUT = 10.0

SITE_VCL = """vcl 4.1;

backend default {{
    .host = "{host}";
    .port = "{port}";
    .probe = curation_health;
    .first_byte_timeout = 30s;
}}

acl purgers {{
{purgers}
}}
"""


def missing() -> str:
    """Why Varnish cannot run here ("" if it can): varnishd or the xkey vmod is missing."""
    if not shutil.which("varnishd"):
        return "varnishd is not installed (Debian: apt-get install varnish varnish-modules)"
    if not any((folder / "libvmod_xkey.so").exists() for folder in VMOD_DIRS):
        return "the xkey vmod is not installed (Debian: apt-get install varnish-modules)"
    return ""


def free_port(host: str = "127.0.0.1") -> int:
    with socket.socket() as sock:
        sock.bind((host, 0))
        return sock.getsockname()[1]


@dataclass
class Varnish:
    process: subprocess.Popen
    host: str
    port: int
    workdir: Path
    log_path: Path
    stopped: bool = field(default=False)

    @property
    def url(self) -> str:
        return f"http://{self.host}:{self.port}"

    def log_tail(self, lines: int = 40) -> str:
        if not self.log_path.exists():
            return ""
        return "\n".join(self.log_path.read_text(errors="replace").splitlines()[-lines:])

    def stop(self) -> None:
        """SIGTERM the varnishd manager by its id (it stops its child); SIGKILL after a
        while, with the child (its own process group)."""
        if self.stopped:
            return
        self.stopped = True
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(STOP_TIMEOUT)
            except subprocess.TimeoutExpired:
                os.killpg(self.process.pid, signal.SIGKILL)
                self.process.wait(STOP_TIMEOUT)
        shutil.rmtree(self.workdir, ignore_errors=True)


def site_vcl(backend_host: str, backend_port: int, purgers: tuple[str, ...]) -> str:
    allowed = "\n".join(f'    "{address}";' for address in purgers)
    return SITE_VCL.format(host=backend_host, port=backend_port, purgers=allowed)


def command(workdir: Path, listen: str, *, memory: str = "64m", threads: int = 0) -> list[str]:
    """The varnishd command line: the repository's VCL, site.vcl from `workdir`."""
    arguments = [
        "varnishd",
        "-F",
        "-f",
        str(VCL),
        "-a",
        listen,
        "-n",
        str(workdir / "n"),
        "-p",
        f"vcl_path={workdir}:/usr/share/varnish/vcl",
        "-s",
        f"malloc,{memory}",
        # No shared memory log written to a file for others; the test reads none of it.
        "-p",
        "vsl_space=1M",
    ]
    if threads:
        arguments += ["-p", f"thread_pool_min={threads}"]
    return arguments


def start_varnish(
    backend_host: str,
    backend_port: int,
    *,
    purgers: tuple[str, ...] = ("127.0.0.1",),
    host: str = "127.0.0.1",
    port: int | None = None,
    log_dir: Path | None = None,
    prefix: list[str] | None = None,
) -> Varnish:
    """Start varnishd in front of backend_host:backend_port; wait until it answers.

    `prefix` runs it through another command (`ip netns exec NAME`).
    """
    port = port or free_port(host)
    workdir = Path(tempfile.mkdtemp(prefix="curation-varnish-"))
    workdir.chmod(0o755)  # varnishd's unprivileged child reads site.vcl
    (workdir / "site.vcl").write_text(site_vcl(backend_host, backend_port, purgers))
    log_path = (log_dir or workdir) / f"varnishd-{port}.log"
    log_path.parent.mkdir(parents=True, exist_ok=True)
    with log_path.open("w") as log:
        process = subprocess.Popen(  # noqa: S603 - fixed arguments
            [*(prefix or []), *command(workdir, f"{host}:{port}")],
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    varnish = Varnish(process, host, port, workdir, log_path)
    try:
        _wait_until_answering(varnish)
    except BaseException:
        varnish.stop()
        raise
    return varnish


def _wait_until_answering(varnish: Varnish) -> None:
    deadline = time.monotonic() + START_TIMEOUT
    while True:
        if varnish.process.poll() is not None:
            raise RuntimeError(f"varnishd exited:\n{varnish.log_tail()}")
        try:
            # A PURGE without tags: 400 from our VCL (or 403 from an address not allowed).
            request = urllib.request.Request(varnish.url + "/", method="PURGE")  # noqa: S310
            urllib.request.urlopen(request, timeout=1)  # noqa: S310
            return
        except urllib.error.HTTPError:
            return
        except OSError:
            if time.monotonic() > deadline:
                raise RuntimeError(
                    f"varnishd did not answer within {START_TIMEOUT}s:\n{varnish.log_tail()}"
                ) from None
            time.sleep(0.1)
