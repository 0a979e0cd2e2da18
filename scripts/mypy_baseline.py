"""Run mypy and fail on any type error that is not in the committed baseline.

The baseline (mypy-baseline.txt) lists the errors the code had when mypy was introduced, one
per line as ``path: [code] message``. Line numbers are left out so that editing a file does
not invalidate its entries; an error that occurs twice in a file is listed twice. A listed
error that no longer occurs fails the check too, until its line is removed, so the baseline
only shrinks:

    python scripts/mypy_baseline.py             # check: exit 1 on any error not listed
    python scripts/mypy_baseline.py --update    # drop the entries that were fixed (new
                                                # errors still fail, and are not added)
    python scripts/mypy_baseline.py --update --accept-new
                                                # rewrite it whole (after a mypy or
                                                # stubs upgrade changes the messages)

Errors in the packages checked strictly (pyproject.toml's overrides) are never accepted
into the baseline. Arguments after ``--`` go to mypy. Exits 2 when mypy itself fails (a
crash, a bad config).
"""

from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys
import tomllib
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
BASELINE = ROOT / "mypy-baseline.txt"
HEADER = (
    "# Type errors accepted when mypy was introduced; `make lint` fails on any other.\n"
    "# Fix them and run `python scripts/mypy_baseline.py --update` to remove their lines.\n"
)
# Messages that name another line ("defined on line 12") would move with every edit above.
LINE_REFERENCE = re.compile(r"\bline \d+\b")


def run_mypy(extra_args: list[str]) -> list[tuple[str, str]]:
    """Return each error as its baseline entry and its report line (with the line number)."""
    command = [sys.executable, "-m", "mypy", "--output", "json", *extra_args]
    process = subprocess.run(  # noqa: S603 - fixed command, no shell
        command, cwd=ROOT, capture_output=True, text=True, check=False
    )
    errors: list[tuple[str, str]] = []
    for raw in process.stdout.splitlines():
        try:
            error = json.loads(raw)
        except json.JSONDecodeError:
            continue
        if error.get("severity") != "error":
            continue
        code = error.get("code") or "misc"
        message = LINE_REFERENCE.sub("line N", error["message"])
        errors.append(
            (
                f"{error['file']}: [{code}] {message}",
                f"{error['file']}:{error['line']}: error: {error['message']}  [{code}]",
            )
        )
    # mypy exits 1 when it found errors and 2 when it could not check at all.
    if process.returncode not in (0, 1) or (process.returncode == 1 and not errors):
        sys.stderr.write(process.stdout + process.stderr)
        sys.stderr.write(
            f"mypy failed to run (exit {process.returncode}). Its Django plugin imports the"
            " project: `python manage.py check` shows an import-time error.\n"
        )
        sys.exit(2)
    return errors


def strict_paths() -> tuple[str, ...]:
    """The folders (and modules) pyproject.toml has mypy check strictly: errors there are
    never taken into the baseline."""
    config = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    paths: list[str] = []
    for override in config["tool"]["mypy"].get("overrides", []):
        if override.get("disallow_untyped_defs"):
            modules = override["module"]
            for module in [modules] if isinstance(modules, str) else modules:
                paths.append(module.removesuffix(".*").replace(".", "/"))
    return tuple(paths)


def is_strict(entry: str, paths: tuple[str, ...]) -> bool:
    path = entry.split(":", 1)[0]
    return any(path.startswith(f"{p}/") or path == f"{p}.py" for p in paths)


def read_baseline() -> Counter[str]:
    if not BASELINE.exists():
        return Counter()
    lines = BASELINE.read_text(encoding="utf-8").splitlines()
    return Counter(line for line in lines if line and not line.startswith("#"))


def write_baseline(entries: Counter[str]) -> None:
    lines = sorted(entries.elements())
    BASELINE.write_text(HEADER + "".join(f"{line}\n" for line in lines), encoding="utf-8")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--update", action="store_true", help="remove fixed entries")
    parser.add_argument(
        "--accept-new", action="store_true", help="with --update: also add the new errors"
    )
    parser.add_argument("mypy_args", nargs="*", help="passed to mypy (after --)")
    args = parser.parse_args()

    errors = run_mypy(args.mypy_args)
    current = Counter(entry for entry, _ in errors)
    strict = strict_paths()
    baseline = Counter({e: n for e, n in read_baseline().items() if not is_strict(e, strict)})
    new = current - baseline
    fixed = baseline - current

    if args.update:
        kept = baseline - fixed
        if args.accept_new:
            kept = Counter({e: n for e, n in current.items() if not is_strict(e, strict)})
        write_baseline(kept)
        added = sum((kept - baseline).values())
        print(
            f"mypy baseline updated: {sum(fixed.values())} entr(ies) removed, "
            f"{added} added; {sum(kept.values())} remain."
        )
        new = current - kept

    if new:
        # Of several errors with one entry, any may be the new one: all of them are shown.
        print("mypy: type errors not in the baseline (mypy-baseline.txt):")
        for entry, line in errors:
            if entry in new:
                print(f"  {line}")
        print(
            f"{sum(new.values())} new error(s): fix them (the baseline only shrinks, and never"
            f" holds errors of the strictly checked {', '.join(strict)})."
        )
        return 1

    if fixed and not args.update:
        print(f"mypy: {sum(fixed.values())} baseline entr(ies) no longer occur:")
        for entry in sorted(fixed.elements()):
            print(f"  {entry}")
        print("Run `python scripts/mypy_baseline.py --update` to remove them.")
        return 1
    print(f"mypy: no new type errors ({sum(current.values())} in the baseline).")
    return 0


if __name__ == "__main__":
    sys.exit(main())
