"""docs/design.md's layout table names every module of the package and nothing that is gone: a
module added without a line there, or a line left behind by a move, fails here."""
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SOURCES = (".py", ".pyx", ".pxd", ".h", ".cpp")
#: `sub/` (`a.py`, `b.py`): the modules of a sub-folder, listed in one cell
GROUP = re.compile(r"`([^`]+)/`\s*\(([^)]*)\)")


def named_in_design() -> set[str]:
    """The paths the layout table names: folder cell + each backticked module of the modules cell."""
    named, folder = set(), None
    for line in (ROOT / "docs" / "design.md").read_text().splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")] if line.startswith("| ") else []
        if len(cells) < 3 or cells[0] in ("folder", "---"):
            continue
        if cells[0].startswith("`"):
            folder = cells[0].strip("`").rstrip("/")
        elif cells[0]:
            continue
        if folder is None:
            continue
        for sub, listed in GROUP.findall(cells[1]):
            named |= {f"{folder}/{sub}/{name}" for name in re.findall(r"`([^`]+)`", listed)}
        named |= {f"{folder}/{name}" for name in re.findall(r"`([^`]+)`", GROUP.sub("", cells[1]))}
    return {n for n in named if n.endswith(SOURCES)}


def modules_in_tree() -> set[str]:
    return {str(p.relative_to(ROOT)) for base in ("bench", "datasets", "kernels") for p in (ROOT / base).rglob("*")
            if p.suffix in SOURCES and p.name != "__init__.py" and "__pycache__" not in p.parts}


def test_every_module_has_its_line_in_the_layout():
    assert sorted(modules_in_tree() - named_in_design()) == []


def test_the_layout_names_no_module_that_is_gone():
    assert sorted(n for n in named_in_design() if not (ROOT / n).is_file()) == []
