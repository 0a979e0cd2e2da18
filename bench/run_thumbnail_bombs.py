"""Decompression bombs against the thumbnail decoder: a worker's peak memory per file.

    .venv/bin/python bench/run_thumbnail_bombs.py                  # this checkout
    .venv/bin/python bench/run_thumbnail_bombs.py --before HEAD~3  # and an older decoder

For each file of the bomb corpus (tests/image_bombs.py), and for two real pictures for
scale (a 1280x720 JPEG, a platform thumbnail; a 4096x4096 RGBA PNG, the largest decoded
size accepted), a fresh Python process loads summaries/thumbnails/images.py (pure: Pillow
only, as the Celery worker runs it) and calls make_variants on it once. It prints the
outcome, the time and how far the process's peak resident memory (VmHWM) rose above what
it was before the call, against the bound: a bomb may raise it by at most BOMB_BOUND_MIB
(it is refused from its header), an accepted picture by at most three times
images.MAX_DECODED_BYTES (decoded, converted and resized copies). Exits 1 when a bomb is
not refused or a bound is exceeded.

`--before REV` also runs the images.py of that git revision, for comparison (that column
is not held to the bounds). Each process may use at most `--memory-limit` MiB of address
space, so an old decoder fails on a bomb instead of taking the machine's memory.
Not a test: nothing here runs in CI. Needs nothing but the project's virtualenv.
"""

from __future__ import annotations

import argparse
import importlib.util
import io
import json
import os
import resource
import subprocess
import sys
import tempfile
from pathlib import Path
from types import ModuleType

from servers import PYTHON, ROOT, say

BOMB_BOUND_MIB = 16
IMAGES = ROOT / "summaries" / "thumbnails" / "images.py"

# Run in a fresh process: load images.py from the path given, decode the file given once.
DECODE_ONCE = """
import importlib.util, json, sys, time

def peak_mib():
    status = open("/proc/self/status").read()
    return int(status.split("VmHWM:")[1].split()[0]) / 1024

spec = importlib.util.spec_from_file_location("thumbnail_images", sys.argv[1])
images = importlib.util.module_from_spec(spec)
sys.modules[spec.name] = images
spec.loader.exec_module(images)
data = open(sys.argv[2], "rb").read()
before, started = peak_mib(), time.perf_counter()
try:
    outcome = f"{len(images.make_variants(data))} variants"
except Exception as error:
    outcome = f"{type(error).__name__}: {error}"
print(json.dumps({"outcome": outcome, "seconds": time.perf_counter() - started,
                  "growth_mib": peak_mib() - before}))
"""


def load_images(path: Path) -> ModuleType:
    """images.py loaded on its own (the package's __init__ needs Django)."""
    spec = importlib.util.spec_from_file_location("thumbnail_images", path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


def pictures() -> dict[str, bytes]:
    """Real pictures, for scale: what a worker decodes every day, and the largest allowed."""
    from PIL import Image

    def encoded(image, fmt: str) -> bytes:
        buffer = io.BytesIO()
        image.save(buffer, format=fmt)
        return buffer.getvalue()

    return {
        "jpeg 1,280 x 720 (a thumbnail)": encoded(Image.new("RGB", (1280, 720), "teal"), "JPEG"),
        "png 4,096 x 4,096 rgba (largest)": encoded(Image.new("RGBA", (4096, 4096)), "PNG"),
    }


def decode_once(images_path: Path, data: bytes, memory_limit_mib: int) -> dict:
    """The child's report ({outcome, seconds, growth_mib}), or its failure as an outcome."""

    def limit() -> None:
        size = memory_limit_mib << 20
        resource.setrlimit(resource.RLIMIT_AS, (size, size))

    with tempfile.NamedTemporaryFile(suffix=".img") as file:
        file.write(data)
        file.flush()
        child = subprocess.run(
            [PYTHON, "-c", DECODE_ONCE, str(images_path), file.name],
            capture_output=True,
            text=True,
            timeout=600,
            preexec_fn=limit,
        )
    if child.returncode != 0:
        last = (child.stderr.strip().splitlines() or ["no output"])[-1]
        return {"outcome": f"process failed: {last}", "seconds": 0.0, "growth_mib": None}
    return json.loads(child.stdout.strip().splitlines()[-1])


def images_of(revision: str, folder: Path) -> Path:
    """images.py as it was at `revision`, written to `folder`."""
    source = subprocess.run(
        ["git", "show", f"{revision}:summaries/thumbnails/images.py"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    path = folder / "images_before.py"
    path.write_text(source)
    return path


def shown(report: dict | None) -> str:
    if report is None:
        return ""
    growth = report["growth_mib"]
    peak = "    -   " if growth is None else f"{growth:>6.1f} MiB"
    return f"{peak} {report['seconds']:>5.2f} s  {report['outcome'][:60]}"


def commit() -> str:
    head = subprocess.run(
        ["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True, text=True
    ).stdout.strip()
    dirty = subprocess.run(
        ["git", "status", "--porcelain", "--untracked-files=no", "--", str(IMAGES)],
        cwd=ROOT,
        capture_output=True,
        text=True,
    ).stdout.strip()
    return f"{head}{' (images.py with uncommitted changes)' if dirty else ''}"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--before", metavar="REV", help="also run images.py of this revision")
    parser.add_argument(
        "--memory-limit", type=int, default=4096, help="MiB of address space per process"
    )
    args = parser.parse_args(argv)

    sys.path.insert(0, str(ROOT))
    from tests.image_bombs import corpus

    accepted_bound = 3 * load_images(IMAGES).MAX_DECODED_BYTES / (1 << 20)
    say(f"commit {commit()}; one fresh process per file; growth of VmHWM during the call")
    missed = []
    with tempfile.TemporaryDirectory(prefix="curation-bombs-") as folder:
        before = images_of(args.before, Path(folder)) if args.before else None
        files = [(name, data, True) for name, data in corpus().items()]
        files += [(name, data, False) for name, data in pictures().items()]
        for name, data, bomb in files:
            now = decode_once(IMAGES, data, args.memory_limit)
            then = decode_once(before, data, args.memory_limit) if before else None
            say(f"{name:<36} {len(data):>7,} B  now {shown(now)}")
            if then:
                say(f"{'':<36} {'':>9}  {args.before} {shown(then)}")
            growth = now["growth_mib"]
            if bomb and not now["outcome"].startswith("NotAnImage"):
                missed.append(f"{name} not refused")
            elif growth is None or growth > (BOMB_BOUND_MIB if bomb else accepted_bound):
                missed.append(f"{name} grew {growth} MiB")
    say(
        f"bounds: a bomb refused and at most {BOMB_BOUND_MIB} MiB; an accepted picture at most "
        f"{accepted_bound:.0f} MiB: " + (f"MISSED ({'; '.join(missed)})" if missed else "met")
    )
    return 1 if missed else 0


if __name__ == "__main__":
    os.chdir(ROOT)
    sys.exit(main())
