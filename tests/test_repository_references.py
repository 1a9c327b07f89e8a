"""The repository stands on its own: nothing points to files that are not in it.

Two checks over the files git knows (tracked, plus untracked files that are not ignored, so a
new file is checked before it is committed; ignored and generated files never count):

* no text file mentions the developers' private notes: a papers folder, a top-level design
  file in upper case, or a shared folder (the patterns are in ``OUTSIDE``). Papers are cited by
  their bibliographic reference, the design by docs/design.md.
* every backticked path in README.md and docs/**/*.md names a file or folder of the
  repository, or a path relative to one of its folders (``gate/tables.py``, ``search.py``),
  except the few names on the allow-lists below: what the commands write, placeholders and
  sources of installed third-party packages.
"""

from __future__ import annotations

import fnmatch
import re
import shutil
import subprocess
from pathlib import Path, PurePosixPath

import pytest

ROOT = Path(__file__).resolve().parent.parent
THIS = Path(__file__).resolve().relative_to(ROOT).as_posix()

# References to files that exist only on the developers' machines.
OUTSIDE = re.compile(r"papers/|DESIGN\.md|shared/")

TEXT_SUFFIXES = {".py", ".md", ".toml", ".yaml", ".yml", ".sh", ".sql", ".mako", ".cfg", ".ini"}
TEXT_NAMES = {"Makefile", "Dockerfile", "NOTICE", ".gitignore"}

# A backticked token names a file when its last part ends in one of these.
FILE_EXTENSIONS = {
    "py", "md", "toml", "yaml", "yml", "json", "csv", "gz", "txt", "svg", "png", "html",
    "db", "sh", "sql", "mako", "cfg", "ini", "parquet", "whl",
}  # fmt: skip
PATH_LIKE = re.compile(r"^[A-Za-z0-9_.*-]+(?:/[A-Za-z0-9_.*-]+)*/?$")
INLINE_CODE = re.compile(r"`([^`\n]+)`")

# Allowed although not in the repository. Keep these tight: each entry must still be used
# (test_allow_lists_are_all_used).
ALLOWED_PREFIXES = {
    "build/": "the git-ignored output folder of the Makefile, the demo and the tests",
    ".venv/": "the virtualenv the Makefile creates (`make test`, `make demo`)",
    "pycanon/": "pyCANON's installed source, read for docs/classic-criteria.md",
    "airflow/": "Apache Airflow's installed source, read for docs/ui.md",
}
ALLOWED_NAMES = {
    "privacy_ledger.db": "the ledger database the commands create (default name)",
    "airflow-logs/": "the folder the browser test writes Airflow's logs to",
    "benchmarks/results/": "where `make bench` writes its JSON (git-ignored)",
}
# An upper-case stem is a placeholder, as in the commands' usage lines: RELEASE.manifest.json.
PLACEHOLDER = re.compile(r"^[A-Z][A-Z0-9_]*\.")


def _git_files() -> list[str]:
    """Files git knows in the work tree (tracked, or untracked and not ignored) that exist."""
    git = shutil.which("git")
    if git is None:
        pytest.skip("git is not installed")
    proc = subprocess.run(
        [git, "-C", str(ROOT), "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
        capture_output=True,
        text=True,
        check=False,
    )
    if proc.returncode != 0:
        pytest.skip(f"not a git work tree: {proc.stderr.strip()}")
    names = sorted({n for n in proc.stdout.split("\0") if n})
    return [n for n in names if (ROOT / n).is_file()]


def _is_text(name: str) -> bool:
    path = PurePosixPath(name)
    if path.suffix in TEXT_SUFFIXES or path.name in TEXT_NAMES:
        return True
    if path.suffix:
        return False
    with (ROOT / name).open("rb") as fh:
        return fh.read(2) == b"#!"  # scripts without a suffix (.ci/run)


def _doc_files(files: list[str]) -> list[str]:
    return [f for f in files if f == "README.md" or (f.startswith("docs/") and f.endswith(".md"))]


def _inline_code(text: str) -> list[tuple[int, str]]:
    """(line number, content) of every inline code span outside fenced blocks."""
    spans: list[tuple[int, str]] = []
    fenced = False
    for number, line in enumerate(text.splitlines(), 1):
        if line.lstrip().startswith("```"):
            fenced = not fenced
            continue
        if not fenced:
            spans.extend((number, m.group(1).strip()) for m in INLINE_CODE.finditer(line))
    return spans


def _as_path(token: str) -> str | None:
    """The repository path a backticked token names, or None when it is not a path.

    A path has only path characters and either a ``/`` after or between parts of two
    characters or more (so not ``N/A`` or ``1/3``) or a last part with a file extension and a
    stem (so not ``.csv.gz`` or ``np.unique``). A pytest node id names its file.
    """
    token = token.split("::", 1)[0]
    if not PATH_LIKE.match(token):
        return None
    parts = token.rstrip("/").split("/")
    if len(parts) > 1 or token.endswith("/"):
        if all(len(p) >= 2 for p in parts) and re.search(r"[A-Za-z]", token):
            return token
        return None
    stem, dot, extension = parts[0].partition(".")
    if stem and dot and extension.rsplit(".", 1)[-1] in FILE_EXTENSIONS:
        return token
    return None


def _known_paths(files: list[str]) -> set[str]:
    paths = set(files)
    for name in files:
        paths.update(str(p) for p in PurePosixPath(name).parents if str(p) != ".")
    return paths


def _exists(path: str, known: set[str]) -> bool:
    """In the repository, as written or relative to one of its folders (``gate/tables.py``)."""
    path = path.rstrip("/")
    if "*" in path:
        return any(fnmatch.fnmatch(p, path) or fnmatch.fnmatch(p, "*/" + path) for p in known)
    return path in known or any(p.endswith("/" + path) for p in known)


def _allowed_by(path: str) -> str | None:
    """The allow-list entry that lets ``path`` name something outside the repository."""
    if path in ALLOWED_NAMES:
        return path
    for prefix in ALLOWED_PREFIXES:
        if path.startswith(prefix):
            return prefix
    if PLACEHOLDER.match(path):
        return PLACEHOLDER.pattern
    return None


def _doc_paths(files: list[str]) -> list[tuple[str, int, str]]:
    """(doc, line, path) for every backticked path in the docs and the README."""
    found: list[tuple[str, int, str]] = []
    for doc in _doc_files(files):
        for number, token in _inline_code((ROOT / doc).read_text(encoding="utf-8")):
            path = _as_path(token)
            if path is not None:
                found.append((doc, number, path))
    return found


def test_no_references_to_files_outside_the_repository() -> None:
    files = [f for f in _git_files() if f != THIS and _is_text(f)]
    assert "README.md" in files and "Makefile" in files
    hits = [
        f"{name}:{number}: {line.strip()}"
        for name in files
        for number, line in enumerate(
            (ROOT / name).read_text(encoding="utf-8", errors="replace").splitlines(), 1
        )
        if OUTSIDE.search(line)
    ]
    assert not hits, "references to files outside the repository:\n" + "\n".join(hits)


def test_backticked_paths_in_docs_exist() -> None:
    files = _git_files()
    known = _known_paths(files)
    found = _doc_paths(files)
    # not vacuous: the docs do cite repository paths
    assert any(path == "docs/design.md" for _, _, path in found)
    missing = [
        f"{doc}:{number}: `{path}`"
        for doc, number, path in found
        if not _exists(path, known) and _allowed_by(path) is None
    ]
    assert not missing, "backticked paths that are not in the repository:\n" + "\n".join(missing)


def test_allow_lists_are_all_used() -> None:
    files = _git_files()
    known = _known_paths(files)
    used = {_allowed_by(path) for _, _, path in _doc_paths(files) if not _exists(path, known)}
    entries = {*ALLOWED_NAMES, *ALLOWED_PREFIXES, PLACEHOLDER.pattern}
    assert not entries - used, f"allow-list entries no longer needed: {sorted(entries - used)}"


@pytest.mark.parametrize(
    ("token", "path"),
    [
        ("docs/design.md", "docs/design.md"),
        ("tests/cli/test_cli.py::test_help", "tests/cli/test_cli.py"),
        ("search.py", "search.py"),
        ("benchmarks/", "benchmarks/"),
        ("N/A", None),
        ("1/3", None),
        (".csv.gz", None),
        ("np.unique", None),
        ("airflow-privacy audit", None),
        ("$AIRFLOW_HOME/privacy_ledger.db", None),
        ("/privacy/api/releases", None),
    ],
)
def test_what_counts_as_a_path(token: str, path: str | None) -> None:
    assert _as_path(token) == path


def test_outside_patterns() -> None:
    assert OUTSIDE.search("see ../shared/notes.md")
    assert OUTSIDE.search("(papers/003_*, section 2)")
    assert OUTSIDE.search("DESIGN.md, Data model")
    assert not OUTSIDE.search("docs/design.md")
