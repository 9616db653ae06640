"""`spbench bench sptrsv-refs` with a stand-in driver: the Matrix Market file the original code reads,
one row per matrix and core count with its counts beside ours, the table on stdout and in `spbench
profile`; a missing driver or a bad option is one line with exit code 2 and nothing written."""
import numpy as np
import pytest
import scipy.sparse as sp
from click.testing import CliRunner

from spbench.cli import main
from spbench.store.results import load_rows
from spbench.sptrsv.execute import prepare_lower
from spbench.sptrsv.benchmarks.reference_schedules import ReferenceFailed, parse_driver, write_lower_mtx


def fake_driver(tmp_path, steps=3):
    """Prints the driver's lines for the core count it is given, ``steps`` supersteps for HDagg."""
    fake = tmp_path / "hdagg_ref"
    fake.write_text(f'#!/bin/sh\necho "$@" >> {tmp_path / "calls"}\n'
                    'head -1 "$1" | grep -q "^%%MatrixMarket matrix coordinate real general$" || exit 3\n'
                    'printf "# n=1 nnz=1\\nwavefront\\t1\\t9\\t0.001\\t0\\n"\n'
                    f'for v in hdagg_tree hdagg_tree_bfs hdagg spmp spmp_solve; do printf "$v\\t$2\\t{steps}\\t0.5\\t7\\n"; '
                    'done\n')
    fake.chmod(0o755)
    return fake


def run_on_generators(tmp_path, *args, ok=True):
    """`spbench bench sptrsv-refs` with the stand-in driver on the generators at 1% of their rows
    (exit 0 asserted when ``ok``)."""
    out = tmp_path / "r"
    res = CliRunner().invoke(main, ["bench", "sptrsv-refs", "--hdagg", str(fake_driver(tmp_path)), "--sets",
                                    "generators", "--scale", "0.01", *args, "--out", str(out), "-q"])
    if ok:
        assert res.exit_code == 0, res.output
    return res, load_rows(out)


def test_matrix_market_file_is_column_major_with_rows_ascending(tmp_path):
    L = prepare_lower(sp.csr_matrix(np.array([[4.0, 0, 0], [1, 4, 0], [1, 1, 4]])))
    lines = write_lower_mtx(L, tmp_path / "m.mtx").read_text().splitlines()
    assert lines[:2] == ["%%MatrixMarket matrix coordinate real general", "3 3 6"]
    assert lines[2:] == ["1 1 1", "2 1 1", "3 1 1", "2 2 1", "3 2 1", "3 3 1"]


def test_matrix_market_file_with_values_holds_them_exactly(tmp_path):
    import scipy.io

    L = prepare_lower(sp.csr_matrix(np.array([[4.0, 0, 0], [1 / 3, 4, 0], [-2e-300, np.pi, 4]])))
    back = scipy.io.mmread(write_lower_mtx(L, tmp_path / "m.mtx", values=True)).tocsr()
    assert (back != L).nnz == 0


def test_solve_times_at_the_core_counts_this_machine_has(tmp_path):
    res, df = run_on_generators(tmp_path, "--cores", "1,128", "--solve-repeats", "3")
    one, many = df[df["cores"] == 1], df[df["cores"] == 128]
    assert (one["ref_spmp_solve_time"] == 0.5).all() and (one["ref_spmp_solve_wrong"] == 7).all()
    assert (one["spmp_solve_time"] > 0).all() and (one["spmp_residual"] < 1e-12).all()
    assert many["spmp_solve_time"].isna().all() and many["ref_spmp_solve_time"].isna().all()
    assert "solve ms orig / ours" in res.stdout and "| 500.000 / " in res.stdout
    # the original's solve ran in 3 rounds per matrix, interleaved with ours
    assert (tmp_path / "calls").read_text().count("spmp_solve") == 3 * len(one)


def test_driver_lines_parsed_and_a_bad_line_refused():
    assert parse_driver("# n=3\nhdagg_tree\t16\t5\t0.25\t40\n") == {("hdagg_tree", 16): (5, 0.25, 40)}
    with pytest.raises(ReferenceFailed, match="unexpected driver line"):
        parse_driver("hdagg_tree 16 5\n")


def test_rows_beside_ours_table_and_profile(tmp_path):
    res, df = run_on_generators(tmp_path, "--cores", "2,128")
    out = tmp_path / "r"
    assert len(df) == 16 and set(df["cores"]) == {2, 128} and (df["ref_supersteps"] == 3).all()
    assert (df["ref_wavefronts"] == 9).all() and (df["ref_schedule_time"] == 0.5).all()
    assert (df["equal"] == ((df["supersteps"] == 3) & (df["supersteps_flat"] == 3))).all()
    assert (df["supersteps"] <= df["wavefronts"]).all()
    # SpMP's original runs only at core counts this machine has (its barriers spin)
    assert df.loc[df["cores"] == 128, "ref_spmp_p2p"].isna().all()
    assert df["units"].iloc[0]["ref_schedule_time"] == "s"
    assert "| lap2d-5pt[grid=" in res.stdout and "| 3 / " in res.stdout
    plots = tmp_path / "p"
    assert CliRunner().invoke(main, ["profile", str(out), "--out", str(plots)]).exit_code == 0
    assert res.stdout.strip() in (plots / "r" / "sptrsv-refs.md").read_text()


def test_a_wrong_solve_of_ours_makes_the_row_invalid(tmp_path, monkeypatch):
    from spbench.sptrsv import execute

    real = execute.solve_point
    monkeypatch.setattr(execute, "solve_point", lambda *a, **k: {**real(*a, **k), "residual": 1.0})
    res, df = run_on_generators(tmp_path, "--cores", "1", "--solve-repeats", "2", ok=False)
    assert set(df["status"]) == {"invalid"} and df["error"].str.contains("backward error 1.0e+00", regex=False).all()
    assert res.exit_code != 0


def test_schedule_repeats_reach_the_driver(tmp_path):
    _, df = run_on_generators(tmp_path, "--cores", "2", "--schedule-repeats", "3")
    schedule_calls = [c for c in (tmp_path / "calls").read_text().splitlines() if "hdagg_tree" in c]
    assert len(schedule_calls) == 8 and all(c.endswith("--schedule-repeats 3") for c in schedule_calls)
    assert (df["spmp_schedule_time"] > 0).all()


def test_failing_driver_is_an_error_row(tmp_path):
    fake = tmp_path / "hdagg_ref"
    fake.write_text("#!/bin/sh\necho boom >&2\nexit 1\n")
    fake.chmod(0o755)
    res = CliRunner().invoke(main, ["bench", "sptrsv-refs", "--hdagg", str(fake), "--sets", "generators", "--scale",
                                    "0.01", "--cores", "2", "--out", str(tmp_path / "r"), "-q"])
    assert res.exit_code == 1
    df = load_rows(tmp_path / "r")
    assert set(df["status"]) == {"error"} and df["error"].str.contains("boom").all()


@pytest.mark.parametrize("args, named", [(["--hdagg", "/no/such/hdagg_ref"], "/no/such/hdagg_ref"),
                                         (["--cores", "0"], "--cores"), (["--sets", "spd"], "--sets")])
def test_missing_driver_or_bad_option_is_one_line_exit_2(args, named, tmp_path):
    out = tmp_path / "r"
    res = CliRunner().invoke(main, ["bench", "sptrsv-refs", "--hdagg", str(fake_driver(tmp_path)), *args,
                                    "--out", str(out)])
    assert res.exit_code == 2, res.output
    assert len(res.output.strip().splitlines()) == 1 and named in res.output
    assert not out.exists()
