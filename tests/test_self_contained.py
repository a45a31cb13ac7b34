"""The repository stands on its own: no file refers to material outside it, the documents the
code cites exist with the sections it cites, and the MiniMalloc inputs the planner tests read
are shipped unchanged with their licence."""

from __future__ import annotations

import hashlib
import re
import subprocess
import tomllib
from pathlib import Path

import pytest

from xrelay.transforms.planners.csv_io import read_minimalloc_csv

ROOT = Path(__file__).resolve().parents[1]
MINIMALLOC = ROOT / "benchmarks" / "data" / "minimalloc"
DESIGN = ROOT / "docs" / "design.md"
SEMANTICS = ROOT / "docs" / "relay-semantics.md"

# Built from pieces so that this file does not match its own patterns.
_SHARED = "sha" + "red"
OUTSIDE = re.compile(
    "|".join(
        [
            r"\.\./" + _SHARED,  # the folder beside the checkout
            r"/work/" + _SHARED,
            _SHARED + r"/(reference|benchmarks|seeds|hooks)\b",
            r"\bDESIGN" + r"\.md\b",
            r"(?<![\w-])relay" + r"\.md\b",  # a bare page name (docs/relay-semantics.md is fine)
            r"xdsl-0\.74" + r"\.md\b",
            r"memory-planning" + r"\.md\b",
        ]
    ).encode()
)

# sha256 of each file as MiniMalloc publishes it, and its number of buffers.
MINIMALLOC_FILES = {
    "A.1048576.csv": ("4660c0d84de8a0bcada83e3a9faab2793bcb008f38b8eea228fe2b5b6c66af1a", 154),
    "B.1048576.csv": ("83f3ce84099f199e804376a2b6104c7812db9d96a340695ebd44275bb4b2798a", 170),
    "C.1048576.csv": ("88a286397f28b21d623f82a99f53d7c48be689ac3a4830e091d19622b8229f15", 203),
    "D.1048576.csv": ("5f7d865fe822b0c2124e3ddb17d7dd94faf27e5f72e5938a94f87a0618eb1f80", 213),
    "E.1048576.csv": ("25b153b7836474534cf19c4b6db46bf7a21892a21f49051817c4fdba24a79fc5", 215),
    "F.1048576.csv": ("a1266bb5adc0793c8b7b04a006d6b073fe3557fe084458e9a13c0794038ce10b", 296),
    "G.1048576.csv": ("60bc03e388349033b42ccfb070b071b4321015006fdabe96905fdc30f156da7d", 308),
    "H.1048576.csv": ("3f87b5a2fc337836120e90806e21837d80273095ac4c3c08146d084850d0e9da", 316),
    "I.1048576.csv": ("c3f205cb1a3daa5ed8134b04c25ae695e8f50417f7cdb155b9600467f5db333d", 374),
    "J.1048576.csv": ("95ff0330ae1ae792f85d7851fb219c76f546482345ad6c3976e0576246db05ad", 409),
    "K.1048576.csv": ("0ed830405f662b2c35ba4f5dc408ac8c95678513ecde6ee4cce5b892b15db4f1", 454),
    "input.12.csv": ("8688babc6b9ee57096fbe8a7ed89f93ee27e4b975731909a6eafdaae73dd43d1", 5),
}


def repository_files() -> list[Path]:
    """Tracked files and new files git does not ignore (so a new reference fails before it is
    committed); everything but ``.git`` and what ``.gitignore`` names (the venv, caches)."""
    out = subprocess.run(
        ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
        cwd=ROOT,
        capture_output=True,
        check=True,
    ).stdout
    files = [ROOT / name for name in out.decode().split("\0") if name]
    return [f for f in files if f.is_file()]


def test_nothing_refers_outside_the_repository():
    files = repository_files()
    assert len(files) > 100  # the listing worked
    found = []
    for path in files:
        for number, line in enumerate(path.read_bytes().splitlines(), 1):
            if OUTSIDE.search(line):
                found.append(f"{path.relative_to(ROOT)}:{number}: {line.decode(errors='replace')}")
    assert found == []


def test_the_pattern_catches_what_it_must():
    for text in [
        "data in ../" + _SHARED + "/benchmarks/minimalloc",
        "see /work/" + _SHARED + "/reference",
        "(DESIGN" + ".md decision 3)",
        "(reference/" + "relay" + ".md §5)",
        "per `" + _SHARED + "/reference/memory-planning" + ".md`",
    ]:
        assert OUTSIDE.search(text.encode()), text
    assert not OUTSIDE.search(b"(docs/relay-semantics.md section 5, docs/design.md)")


def _headings(path: Path) -> list[str]:
    return [line for line in path.read_text().splitlines() if line.startswith("#")]


def test_cited_sections_exist():
    """Every "docs/relay-semantics.md §N" and "docs/design.md, decision N" names a heading."""
    semantics = {m[1] for h in _headings(SEMANTICS) if (m := re.match(r"#+ (\d+(?:\.\d+)?)\.? ", h))}
    decisions = {m[1] for h in _headings(DESIGN) if (m := re.match(r"### Decision (\d+):", h))}
    assert {"1", "2.1", "2.2", "2.3", "5", "6.1", "6.2", "7", "8"} <= semantics
    assert {"1", "3", "7"} <= decisions
    cited = 0
    for path in repository_files():
        if path.suffix not in {".py", ".md", ".mlir"}:
            continue
        for number, line in enumerate(path.read_text(errors="replace").splitlines(), 1):
            where = f"{path.relative_to(ROOT)}:{number}"
            if (at := line.find("relay-semantics.md")) >= 0:
                for section in re.findall(r"§\s*(\d+(?:\.\d+)?)", line[at:]):
                    cited += 1
                    assert section in semantics, f"{where}: no §{section} in {SEMANTICS.name}"
            for decision in re.findall(r"design\.md, decision (\d+)", line):
                cited += 1
                assert decision in decisions, f"{where}: no decision {decision} in {DESIGN.name}"
    assert cited >= 15


@pytest.mark.parametrize("name", sorted(MINIMALLOC_FILES))
def test_minimalloc_file_is_shipped_unchanged(name):
    digest, buffers = MINIMALLOC_FILES[name]
    path = MINIMALLOC / name
    assert hashlib.sha256(path.read_bytes()).hexdigest() == digest
    assert path.read_text().splitlines()[0] == "id,lower,upper,size"
    assert len(read_minimalloc_csv(path)) == buffers


def test_minimalloc_licence_and_origin():
    licence = (MINIMALLOC / "LICENSE").read_text()
    assert "Apache License" in licence and "Version 2.0, January 2004" in licence
    readme = (MINIMALLOC / "README.md").read_text()
    for fact in ["github.com/google/minimalloc", "Apache License 2.0", "LICENSE"]:
        assert fact in readme
    assert sorted(p.name for p in MINIMALLOC.glob("*.csv")) == sorted(MINIMALLOC_FILES)


def test_project_licence():
    assert "Apache License" in (ROOT / "LICENSE").read_text()
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    assert project["license"] == "Apache-2.0"
    assert project["license-files"] == ["LICENSE"]
