"""`spbench bench` built from declarations: every declared benchmark's command builds and shows its
help, listing them imports no measuring code, and a benchmark declared in a test (the worked example
of docs/design.md, "How to add … a benchmark") becomes a command that writes rows and its table."""
import subprocess
import sys
import time
from pathlib import Path

import pytest
from click import Context
from click.testing import CliRunner

from spbench.harness import catalog as bench_catalog
from spbench.cli.bench import bench
from spbench.harness.declaration import Benchmark
from spbench.harness.options import BadOption, Option, names_of
from spbench.cli import main
from spbench.store.results import load_rows

ROOT = Path(__file__).resolve().parents[1]
DECLARED = sorted(bench_catalog.declared())


def test_the_declarations_are_read_whole():
    """Each experiment's declarations and the shared ones are found from the folders (the
    parametrized checks below would pass on an empty list)."""
    assert bench_catalog.declaration_modules() == ("spbench.sptrsv.benchmarks.declarations",
                                                   "spbench.tucker.benchmarks.declarations",
                                                   "spbench.harness.shared_benchmarks")
    assert {"serial", "order", "sptrsv-refs", "sptrsv-model", "lite", "hooi", "ttm", "tucker-scale", "splatt",
            "tucker-model", "ingest", "standin", "preflight"} <= set(DECLARED)


@pytest.mark.parametrize("name", DECLARED)
def test_every_declared_benchmark_builds_with_its_help(name):
    """Its command has its options and the common ones, --help works, and what it names (measuring
    function, table, check, each option's choices) exists."""
    declaration = bench_catalog.find(name)
    command = bench.get_command(Context(bench), name)
    assert command.declaration is declaration and command.name == name
    res = CliRunner().invoke(main, ["bench", name, "--help"])
    assert res.exit_code == 0, res.output
    for flag in [o.flag for o in declaration.options] + ["--out", "--fresh", "--quiet"]:
        assert flag in res.output, flag
    assert callable(declaration.measuring()) and callable(declaration.tabulating())
    for option in declaration.options:
        if option.kind in ("choice", "names", "name"):
            assert names_of(option.choices), option.flag
        if option.kind == "names" and option.default:
            assert option.parse(option.default)  # the default is made of known names


#: runs `spbench bench --help` in a fresh interpreter, then prints the modules it imported
LIST_AND_SHOW_MODULES = ("import sys\nfrom spbench.cli import main\n"
                         "main(['bench', '--help'], prog_name='spbench', standalone_mode=False)\n"
                         "print('MODULES', *sorted(sys.modules))\n")


def test_listing_the_benchmarks_imports_no_measuring_code():
    """`spbench bench --help` reads the declarations only: no measuring module, registry, numpy,
    scipy or pandas."""
    done = subprocess.run([sys.executable, "-c", LIST_AND_SHOW_MODULES], capture_output=True, text=True, timeout=120,
                          cwd=ROOT)
    assert done.returncode == 0, done.stderr[-2000:]
    listing, _, modules = done.stdout.partition("MODULES ")
    imported = set(modules.split())
    assert "spbench.sptrsv.benchmarks.declarations" in imported and "spbench.harness.shared_benchmarks" in imported
    experiment_code = {m for m in imported if m.startswith(("spbench.sptrsv", "spbench.tucker"))}
    assert all(m.endswith((".benchmarks.declarations", ".benchmarks")) or m in ("spbench.sptrsv", "spbench.tucker")
               for m in experiment_code), experiment_code
    assert not {m for m in imported if m.split(".")[0] in ("scipy", "pandas", "numpy")}
    assert not {"spbench.harness.tables", "spbench.harness.rows", "spbench.datasets"} & imported
    for name in DECLARED:
        assert f"  {name} " in listing, name


#: shows every declared benchmark's help in one fresh interpreter, then the heavy libraries it imported
EVERY_HELP_AND_MODULES = ("import sys\nfrom click.testing import CliRunner\nfrom spbench.cli import main\n"
                          "from spbench.harness import catalog as bench_catalog\n"
                          "for name in sorted(bench_catalog.declared()):\n"
                          "    assert CliRunner().invoke(main, ['bench', name, '--help']).exit_code == 0, name\n"
                          "print(*sorted({m.split('.')[0] for m in sys.modules} & {'numpy', 'scipy', 'pandas'}))\n")


def test_every_benchmark_s_help_imports_no_numpy(fresh_python):
    """A benchmark's --help reads its choices from registries that hold names only (e.g. the Lanczos
    modes and TTM kernels of spbench.tucker.hooi.variants), so it answers without numpy."""
    assert fresh_python(EVERY_HELP_AND_MODULES) == ""


# The worked example: a benchmark measuring numpy's copy at a few buffer sizes.
def copy_bench(options: dict, run) -> list[dict]:
    """One item per size: the median seconds of ``repeats`` copies and the bandwidth."""
    import numpy as np

    items = []
    for kib in options["sizes"]:
        run.say(f"{kib} KiB")
        a = np.ones(kib * 128)
        b = np.empty_like(a)
        times = []
        for _ in range(options["repeats"]):
            start = time.perf_counter()
            np.copyto(b, a)
            times.append(time.perf_counter() - start)
        seconds = float(np.median(times))
        items.append({"item": f"copy {kib} KiB", "dataset": "ones", "bytes": 2 * a.nbytes, "time": seconds,
                      "bandwidth": 2 * a.nbytes / max(seconds, 1e-9)})
    return items


def copy_table(rows: list[dict]) -> str:
    lines = ["| size | bytes moved | median s | GB/s |", "|---|---|---|---|"]
    lines += [f"| {r['item']} | {r['bytes']} | {r['time']:.2e} | {r['bandwidth'] / 1e9:.2f} |" for r in rows]
    return "\n".join(lines)


def at_most_64(options: dict) -> dict:
    if max(options["sizes"]) > 64:
        raise BadOption(f"--sizes: at most 64 KiB here, got {max(options['sizes'])}")
    return options


COPY = Benchmark("copy", "numpy's copy at a few buffer sizes: median seconds and bandwidth.",
                 (Option("--sizes", "ints", "1,4", "Comma-separated buffer sizes in KiB."),
                  Option("--repeats", "int", 5, "Timed copies per size.", minimum=1)),
                 measure=copy_bench, table=copy_table, code=("numpy",), check=at_most_64)


@pytest.fixture
def copy_registered():
    bench_catalog.register(COPY)
    yield COPY
    bench_catalog.unregister(COPY.name)


def test_a_declared_benchmark_is_a_command_writing_rows_and_its_table(copy_registered, tmp_path):
    out = tmp_path / "bench-copy"
    res = CliRunner().invoke(main, ["bench", "copy", "--sizes", "1,2", "--repeats", "3", "--out", str(out), "-q"])
    assert res.exit_code == 0, res.output
    assert res.stdout.startswith("| size | bytes moved | median s | GB/s |")
    df = load_rows(out).sort_values("item_index")
    assert list(df["item"]) == ["copy 1 KiB", "copy 2 KiB"] and list(df["bytes"]) == [2048, 4096]
    assert set(df["benchmark"]) == {"copy"} and (df["time"] > 0).all()
    assert df["params"].iloc[0] == {"sizes": [1, 2], "repeats": 3}
    assert df["units"].iloc[0] == {"bytes": "B", "time": "s", "bandwidth": "B/s"}
    plots = tmp_path / "plots"
    assert CliRunner().invoke(main, ["profile", str(out), "--out", str(plots)]).exit_code == 0
    assert res.stdout.strip() in (plots / "bench-copy" / "copy.md").read_text()
    listed = CliRunner().invoke(main, ["bench", "--help"]).output
    assert "copy  " in listed and "numpy's copy at a few buffer sizes" in listed


@pytest.mark.parametrize("args, said", [(["--sizes", "1,x"], "--sizes: expected comma-separated integers >= 1"),
                                        (["--sizes", "128"], "--sizes: at most 64 KiB here, got 128"),
                                        (["--repeats", "0"], "--repeats")])
def test_a_declared_benchmark_refuses_bad_options_in_one_line(copy_registered, args, said, tmp_path):
    out = tmp_path / "r"
    res = CliRunner().invoke(main, ["bench", "copy", *args, "--out", str(out)])
    assert res.exit_code == 2 and len(res.output.strip().splitlines()) == 1, res.output
    assert res.output.startswith("Error: spbench bench copy: ") and said in res.output
    assert not out.exists()


def test_an_unregistered_benchmark_is_gone(copy_registered):
    bench_catalog.unregister("copy")
    res = CliRunner().invoke(main, ["bench", "copy"])
    assert res.exit_code == 2 and "copy" in res.output


def test_a_declaration_refuses_a_name_used_twice():
    with pytest.raises(ValueError, match="repeat a name"):
        Benchmark("x", "x", (Option("--out"),), copy_bench, copy_table, ("numpy",))
    with pytest.raises(ValueError, match="kind"):
        Option("--size", "number")
