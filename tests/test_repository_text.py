"""What the repository says about itself holds: every file or module a doc or a comment names
exists, and nothing speaks of the work that made it (issue numbers) instead of the code."""

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
DOCS = [ROOT / "README.md", ROOT / "CONTRIBUTING.md", ROOT / "CHANGELOG.md"]
DOCS += sorted((ROOT / "docs").glob("*.md")) + sorted((ROOT / "bench").glob("*.md"))
CODE_DIRS = ["curation", "summaries", "tests", "bench", "scripts", "templates", "static"]
CODE_SUFFIXES = {".py", ".html", ".js", ".css", ".sh", ".txt", ".toml"}
# A path inside the project: a top-level folder of ours, then path characters.
NAMED_PATH = re.compile(
    r"(?<![\w./-])((?:curation|summaries|tests|bench|scripts|docs|templates|static|\.ci)"
    r"/[\w./-]*[\w/])"
)
# Made while running, not kept in git, or written as a pattern rather than a path.
NOT_KEPT = ("test-artifacts", "var/", "bench/.lighthouse", "bench/lighthouse-reports")
ISSUE_WORDING = re.compile(r"\bissue \d+|\bissue's\b|§\s?\d", re.IGNORECASE)


def code_files() -> list[Path]:
    files = []
    for folder in CODE_DIRS:
        files += [
            p
            for p in (ROOT / folder).rglob("*")
            if p.suffix in CODE_SUFFIXES and p.is_file() and "__pycache__" not in p.parts
        ]
    files += [ROOT / "Makefile", ROOT / "Procfile", ROOT / ".env.example", ROOT / "pyproject.toml"]
    return [p for p in files if p.exists() and p.name != Path(__file__).name]


def named_paths(text: str) -> set[str]:
    found = set()
    for match in NAMED_PATH.finditer(text):
        path = match.group(1).rstrip(".")
        if any(part in path for part in NOT_KEPT) or "*" in path or "<" in path:
            continue
        found.add(path)
    return found


# Where a path may be relative to: the project, or (for `{% static %}` and template names)
# the static and template folders.
BASES = [ROOT, ROOT / "static", ROOT / "templates"]


def exists(path: str) -> bool:
    """A file or folder of the project (or a static file or template by the name Django
    finds it under), or a module named by its file without `.py`."""
    return any((base / path).exists() or (base / f"{path}.py").exists() for base in BASES)


@pytest.mark.parametrize("doc", DOCS, ids=lambda p: str(p.relative_to(ROOT)))
def test_every_path_a_doc_names_exists(doc):
    missing = sorted(p for p in named_paths(doc.read_text()) if not exists(p))
    assert not missing, f"{doc.name} names paths that do not exist: {missing}"


def test_every_path_a_comment_or_docstring_names_exists():
    missing = {}
    for file in code_files():
        gone = sorted(p for p in named_paths(file.read_text()) if not exists(p))
        if gone:
            missing[str(file.relative_to(ROOT))] = gone
    assert not missing, f"paths named in code that do not exist: {missing}"


def test_nothing_speaks_of_issue_numbers():
    found = {}
    for file in code_files() + DOCS:
        lines = [
            f"{n}: {line.strip()}"
            for n, line in enumerate(file.read_text().splitlines(), 1)
            if ISSUE_WORDING.search(line) and "RFC" not in line
        ]
        if lines:
            found[str(file.relative_to(ROOT))] = lines
    assert not found, f"history instead of description: {found}"


def test_the_path_finder_finds_paths_and_the_check_catches_a_missing_one():
    text = "see `summaries/editing/gate.py` and summaries/nowhere.py, not test-artifacts/x.png"
    assert named_paths(text) == {"summaries/editing/gate.py", "summaries/nowhere.py"}
    assert exists("summaries/editing/gate.py") and exists("summaries/editing/gate")
    assert not exists("summaries/nowhere.py")


def locked_versions() -> dict[str, str]:
    from packaging.utils import canonicalize_name

    pins = {}
    for line in (ROOT / "requirements.lock").read_text().splitlines():
        if line.strip() and not line.startswith("#"):
            name, version = line.split("==")
            pins[canonicalize_name(name)] = version.strip()
    return pins


def test_every_dependency_is_pinned_in_the_lock_file_within_its_range():
    import tomllib

    from packaging.requirements import Requirement
    from packaging.utils import canonicalize_name

    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    wanted = [*project["dependencies"], *project["optional-dependencies"]["dev"]]
    pins = locked_versions()
    for spec in wanted:
        requirement = Requirement(spec)
        if requirement.marker is not None and not requirement.marker.evaluate():
            continue
        name = canonicalize_name(requirement.name)
        assert name in pins, f"{requirement.name} is not in requirements.lock (make lock)"
        assert requirement.specifier.contains(pins[name], prereleases=True), (
            f"requirements.lock pins {requirement.name} {pins[name]}, outside {spec}"
        )


def test_make_installs_with_the_lock_file():
    makefile = (ROOT / "Makefile").read_text()
    assert '-e ".[dev]" -c $(LOCK)' in makefile and "LOCK := requirements.lock" in makefile
