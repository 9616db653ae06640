"""A benchmark added the way a newcomer would (docs/design.md, "How to add … a benchmark"): one folder
outside the package holding its measurement, table and declaration, and one line naming it
(``$SPBENCH_PLUGINS``). With no file of spbench edited, `spbench bench` runs it, stores its rows with
its own figures' units and code version, prints its table, and `spbench profile` writes that table."""
import json
import os
import subprocess
import textwrap

import pytest

from spbench.store.results import load_rows

#: the toy benchmark, as a newcomer writes it in a folder of their own
TOY = textwrap.dedent('''
    """Sums of squares of 0..n-1, timed: a benchmark living outside spbench."""
    import time

    from spbench.harness import catalog
    from spbench.harness.declaration import Benchmark
    from spbench.harness.options import Option


    def measure(options, run):
        items = []
        for n in options["n"]:
            start = time.perf_counter()
            total = sum(i * i for i in range(n))
            seconds = time.perf_counter() - start
            run.say(f"n={n}: {total}")
            items.append({"item": f"n={n}", "dataset": "range", "n": n, "sum_squares": total, "time": seconds,
                          "squares_per_s": n / max(seconds, 1e-9)})
        return items


    def table(rows):
        lines = ["| n | sum of squares | seconds |", "|---|---|---|"]
        lines += [f"| {r['n']} | {r['sum_squares']} | {r['time']:.2e} |" for r in rows]
        return "\\n".join(lines)


    SQUARES = Benchmark("squares", "Sums of squares of 0..n-1, timed (a toy benchmark).",
                        (Option("--n", "ints", "10,100", "Comma-separated counts."),),
                        measure=measure, table=table, code=(__name__,),
                        units={"n": "1", "sum_squares": "1", "squares_per_s": "1/s"})


    def register():
        catalog.register(SQUARES)
''')


@pytest.fixture
def toy(tmp_path):
    """The newcomer's folder and the environment naming its one module."""
    folder = tmp_path / "toy_bench"
    folder.mkdir()
    module = folder / "squares_bench.py"
    module.write_text(TOY)
    return module, {**os.environ, "SPBENCH_PLUGINS": str(module)}


def _spbench(spbench_cmd, env, *args):
    return subprocess.run([*spbench_cmd, *map(str, args)], capture_output=True, text=True, timeout=120, env=env)


def test_a_toy_benchmark_in_its_own_folder_runs_stores_and_profiles(toy, spbench_cmd, tmp_path):
    module, env = toy
    out = tmp_path / "bench-squares"
    res = _spbench(spbench_cmd, env, "bench", "squares", "--n", "5,1000", "--out", out)
    assert res.returncode == 0, res.stderr
    table = res.stdout.strip().splitlines()
    assert table[0] == "| n | sum of squares | seconds |"
    assert [line.split(" | ")[:2] for line in table[2:]] == [["| 5", "30"], ["| 1000", "332833500"]]
    assert "spbench bench squares: n=1000: 332833500" in res.stderr and "2 rows in" in res.stderr

    rows = load_rows(out).sort_values("item_index").to_dict("records")
    assert [(r["item"], r["n"], r["sum_squares"]) for r in rows] == [("n=5", 5, 30), ("n=1000", 1000, 332833500)]
    assert all(r["benchmark"] == "squares" and r["status"] == "ok" and r["experiment"] == "bench" for r in rows)
    assert all(r["time"] > 0 and r["squares_per_s"] > 0 for r in rows)
    assert rows[0]["units"] == {"n": "1", "sum_squares": "1", "time": "s", "squares_per_s": "1/s"}
    assert rows[0]["params"] == {"n": [5, 1000]} and len(rows[0]["code_version"]) == 16
    assert json.loads((out / "meta.json").read_text())["sweep"] == "bench-squares"

    plots = tmp_path / "plots"
    profiled = _spbench(spbench_cmd, env, "profile", out, "--out", plots)
    assert profiled.returncode == 0, profiled.stderr
    assert res.stdout.strip() in (plots / "bench-squares" / "squares.md").read_text()
    assert "squares  " in _spbench(spbench_cmd, env, "bench", "--help").stdout


def test_the_toy_s_code_version_is_its_own_file_and_it_goes_with_its_line(toy, spbench_cmd, tmp_path):
    """Editing the toy's module changes its rows' code version; without the line naming it, there is
    no such benchmark."""
    module, env = toy
    out = tmp_path / "bench-squares"
    assert _spbench(spbench_cmd, env, "bench", "squares", "--n", "3", "--out", out, "-q").returncode == 0
    module.write_text(TOY + "\n# a comment: another version of the code\n")
    assert _spbench(spbench_cmd, env, "bench", "squares", "--n", "3", "--out", out, "-q").returncode == 0
    rows = load_rows(out).sort_values("repeat").to_dict("records")
    assert [r["repeat"] for r in rows] == [0, 0] and rows[0]["code_version"] != rows[1]["code_version"]
    assert [r["sum_squares"] for r in rows] == [5, 5]

    unnamed = {k: v for k, v in env.items() if k != "SPBENCH_PLUGINS"}
    res = _spbench(spbench_cmd, unnamed, "bench", "squares", "--out", tmp_path / "none")
    assert res.returncode == 2 and "squares" in res.stderr and not (tmp_path / "none").exists()
