"""The spbench package has no import circle (docs/design.md "Data flow": data flows one way, no module reaches back up).

The graph is read from the source, not from a running interpreter: every ``import`` / ``from …
import`` statement of every module, at top level or inside a function, is an edge to the module it
names and to each package above that module which is not already above the importer (importing
``a.b.c`` from outside ``a.b`` runs ``a/b/__init__``); ``from pkg import name`` of a name that is no
submodule is an edge to ``pkg`` itself, even from inside it (the module needs the package's body).
An import that runs only while type checking, or only when its module is the program (``if
__name__ == "__main__":``), is no edge. A circle is reported module by module.
"""
from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
#: the folders assembled into the import package (setup.py's package_dir)
PACKAGE_DIRS = {"spbench": ROOT / "bench", "spbench.kernels": ROOT / "kernels", "spbench.datasets": ROOT / "datasets"}


def package_modules() -> dict[str, Path]:
    """Every Python module of the package, by import name."""
    found = {}
    for prefix, folder in PACKAGE_DIRS.items():
        for path in sorted(folder.rglob("*.py")):
            rel = path.relative_to(folder).with_suffix("")
            parts = [p for p in rel.parts if p != "__init__"]
            name = ".".join([prefix, *parts])
            if prefix == "spbench" and parts and f"spbench.{parts[0]}" in PACKAGE_DIRS:
                continue  # a folder of its own elsewhere (not under bench/)
            found[name] = path
    return found


def _runs_only_apart(test: ast.expr) -> bool:
    """``if TYPE_CHECKING:`` (never at run time) or ``if __name__ == "__main__":`` (only when the
    module is the program, a module object no other module imports)."""
    if (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or \
            (isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"):
        return True
    return (isinstance(test, ast.Compare) and isinstance(test.left, ast.Name) and test.left.id == "__name__"
            and len(test.comparators) == 1 and isinstance(test.comparators[0], ast.Constant)
            and test.comparators[0].value == "__main__")


def _imports(tree: ast.AST):
    """Import statements of a module, at any depth, except those that run only apart (above)."""
    stack = [tree]
    while stack:
        node = stack.pop()
        if isinstance(node, ast.If) and _runs_only_apart(node.test):
            stack.extend(node.orelse)
            continue
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            yield node
        stack.extend(ast.iter_child_nodes(node))


def _ancestors(name: str) -> set[str]:
    parts = name.split(".")
    return {".".join(parts[:i]) for i in range(1, len(parts))}


def import_graph(modules: dict[str, Path]) -> dict[str, set[str]]:
    """module -> the spbench modules its import statements run."""
    graph = {}
    for name, path in modules.items():
        is_package = path.name == "__init__.py"
        here = name if is_package else name.rpartition(".")[0]
        above = _ancestors(name)
        edges = set()
        for node in _imports(ast.parse(path.read_text(), str(path))):
            if isinstance(node, ast.Import):
                targets = [alias.name for alias in node.names]
            else:
                base = node.module or ""
                if node.level:
                    anchor = here.split(".")
                    anchor = anchor[:len(anchor) - (node.level - 1)]
                    base = ".".join(anchor + ([base] if base else []))
                targets = [f"{base}.{a.name}" if f"{base}.{a.name}" in modules else base for a in node.names]
            for target in targets:
                edges |= ({target} | (_ancestors(target) - above)) & set(modules)
        edges.discard(name)
        graph[name] = edges
    return graph


def find_cycle(graph: dict[str, set[str]]) -> list[str] | None:
    """One import circle as [a, b, ..., a], or None (iterative depth-first search)."""
    state: dict[str, int] = {}  # 1 = on the current path, 2 = done
    for start in sorted(graph):
        if state.get(start):
            continue
        path, iters = [start], [iter(sorted(graph[start]))]
        state[start] = 1
        while path:
            nxt = next(iters[-1], None)
            if nxt is None:
                state[path.pop()] = 2
                iters.pop()
            elif state.get(nxt) == 1:
                return path[path.index(nxt):] + [nxt]
            elif not state.get(nxt):
                state[nxt] = 1
                path.append(nxt)
                iters.append(iter(sorted(graph.get(nxt, ()))))
    return None


def test_the_graph_sees_imports_of_every_kind(tmp_path):
    """The reader finds relative, absolute, function-level and package imports (or the circle check is blind)."""
    files = {"p/__init__.py": "from .a import A\n", "p/a.py": "from . import b\nA = 1\n",
             "p/b.py": "def f():\n    from p.q import c\n", "p/q/__init__.py": "",
             "p/q/c.py": "import typing\nif typing.TYPE_CHECKING:\n    import p.a\nfrom .. import A\n"
                         "if __name__ == '__main__':\n    from p.b import f\n"}
    for rel, text in files.items():
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text(text)
    modules = {"p": tmp_path / "p/__init__.py", "p.a": tmp_path / "p/a.py", "p.b": tmp_path / "p/b.py",
               "p.q": tmp_path / "p/q/__init__.py", "p.q.c": tmp_path / "p/q/c.py"}
    graph = import_graph(modules)
    assert graph == {"p": {"p.a"}, "p.a": {"p.b"}, "p.b": {"p.q", "p.q.c"}, "p.q": set(), "p.q.c": {"p"}}
    assert find_cycle(graph) == ["p", "p.a", "p.b", "p.q.c", "p"]
    assert find_cycle({"a": {"b"}, "b": set(), "c": {"a", "b"}}) is None
    assert "spbench.pipeline.config" in import_graph(package_modules())["spbench.cli.run"]  # inside a click command


def test_the_package_has_no_import_circle():
    cycle = find_cycle(import_graph(package_modules()))
    assert cycle is None, "import circle: " + " -> ".join(cycle)


@pytest.mark.slow
def test_every_module_imports_on_its_own():
    """Each module imports in a fresh interpreter (the graph names real modules, none needs a circle to load)."""
    names = sorted(package_modules())
    script = ("import importlib, sys\nfailed = []\nfor name in sys.argv[1:]:\n"
              "    try:\n        importlib.import_module(name)\n"
              "    except Exception as exc:\n        failed.append(f'{name}: {type(exc).__name__}: {exc}')\n"
              "print('\\n'.join(failed))\nsys.exit(1 if failed else 0)\n")
    done = subprocess.run([sys.executable, "-c", script, *names], capture_output=True, text=True, timeout=300,
                          cwd=ROOT)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-2000:]


@pytest.mark.parametrize("module", ["spbench.cli", "spbench.cli.run", "spbench.cli.profile", "spbench.cli.compare",
                                    "spbench.cli.calibrate", "spbench.cli.info", "spbench.pipeline.config", "spbench.pipeline.runner"])
def test_generic_modules_name_no_experiment_module(module):
    """Generic modules reach an experiment only through the registry, never by importing its package."""
    graph = import_graph(package_modules())
    assert not {m for m in graph[module] if m.startswith(("spbench.sptrsv", "spbench.tucker"))}


SHARED_REPORT = sorted(m for m in package_modules() if m == "spbench.report" or m.startswith("spbench.report."))


def test_the_shared_report_is_read_whole():
    """The parametrized check below sees every module of bench/report/ (an empty list would pass it)."""
    assert {"spbench.report.report", "spbench.report.tables", "spbench.report.rows", "spbench.report.labels",
            "spbench.report.perfprofile", "spbench.report.figures", "spbench.report.intervals"} <= set(SHARED_REPORT)


@pytest.mark.parametrize("module", SHARED_REPORT)
def test_the_shared_report_imports_no_experiment(module):
    """bench/report/ holds what both experiments' reports use and imports neither experiment (each
    one's figures and tables live in its own report/ package); the driver reaches them through the
    registry."""
    edges = import_graph(package_modules())[module]
    assert not {m for m in edges if m.startswith(("spbench.sptrsv", "spbench.tucker"))}, module


def test_help_loads_no_experiment():
    """`spbench --help` finds the experiments through the registry without importing one, and lists
    the command groups of their own modules without importing them (nor scipy, pandas or numpy)."""
    done = subprocess.run([sys.executable, "-X", "importtime", "-m", "spbench.cli", "--help"], capture_output=True,
                          text=True, timeout=120, cwd=ROOT)
    assert done.returncode == 0, done.stderr[-2000:]
    imported = {line.rsplit("|", 1)[-1].strip() for line in done.stderr.splitlines() if "|" in line}
    assert "spbench.experiment_registry" in imported
    assert not {m for m in imported if m.startswith(("spbench.sptrsv", "spbench.tucker"))}
    assert not {m for m in imported if m.split(".")[0] in ("scipy", "pandas", "numpy")}
    assert not {"spbench.cli.datasets", "spbench.cli.bench", "spbench.datasets"} & imported
    assert "datasets" in done.stdout and "bench" in done.stdout


def test_help_lists_each_lazy_group_as_it_describes_itself():
    """The short help `spbench --help` shows without importing a group is the group's own."""
    from click import Context

    from spbench.cli import TopGroup, main

    ctx = Context(main)
    for name, (load, text) in TopGroup.LAZY.items():
        assert load().get_short_help_str(limit=1000) == text, name
        assert main.get_command(ctx, name).name == name
