"""`spbench bench splatt` with a stand-in binary: rows per case and thread count (SPLATT's timers per
iteration, ours beside them), its table on stdout and in `spbench profile`, a missing binary or a bad
option one line with exit code 2 and nothing written."""
import pytest
from click.testing import CliRunner

from spbench.cli import main
from spbench.store.results import load_rows


def fake_splatt(tmp_path):
    """Logs its thread count and arguments; prints SPLATT's timer lines (sums over its iterations)."""
    fake, log = tmp_path / "splatt", tmp_path / "calls"
    fake.write_text(f'#!/bin/sh\necho "$OMP_NUM_THREADS $*" >> {log}\n'
                    'printf "Timing information\\n  TTM                 0.036s\\n  SVD                 0.012s\\n"\n')
    fake.chmod(0o755)
    return fake, log


def test_splatt_rows_per_iteration_table_and_profile(tmp_path):
    fake, log = fake_splatt(tmp_path)
    out = tmp_path / "r"
    res = CliRunner().invoke(main, ["bench", "splatt", "--binary", str(fake), "--cases", "3way", "--threads", "1,2",
                                    "--iterations", "3", "--reps", "2", "--out", str(out), "-q"])
    assert res.exit_code == 0, res.output
    df = load_rows(out).sort_values("threads")
    assert list(df["item"]) == ["splatt K=10 threads=1", "splatt K=10 threads=2"]
    assert df["splatt_ttm"].tolist() == pytest.approx([0.012, 0.012]) and df["splatt_svd"].tolist() == pytest.approx(
        [0.004, 0.004])
    assert (df["csf_ttm"] > 0).all() and df["spbench_svd"].iloc[0] > 0 and df["spbench_svd"].isna().iloc[1]
    assert set(df["iterations"]) == {3} and df["units"].iloc[0]["spbench_svd"] == "s"
    calls = log.read_text().splitlines()
    assert len(calls) == 4 and calls[0].startswith("1 tucker -i 3 --tol 0 -r 10 -t 1 ")
    assert "| 3way 2000×1500×1000" in res.stdout and "| 0.0120 |" in res.stdout and "| 0.00400 |" in res.stdout
    plots = tmp_path / "p"
    assert CliRunner().invoke(main, ["profile", str(out), "--out", str(plots)]).exit_code == 0
    assert res.stdout.strip() in (plots / "r" / "splatt.md").read_text()


@pytest.mark.parametrize("args, named", [(["--binary", "/no/such/splatt"], "/no/such/splatt"),
                                         (["--threads", "0"], "--threads"), (["--cases", "5way"], "--cases")])
def test_missing_binary_or_bad_option_is_one_line_exit_2(args, named, tmp_path):
    fake, _ = fake_splatt(tmp_path)
    out = tmp_path / "r"
    res = CliRunner().invoke(main, ["bench", "splatt", "--binary", str(fake), *args, "--out", str(out)])
    assert res.exit_code == 2, res.output
    assert len(res.output.strip().splitlines()) == 1 and named in res.output
    assert not out.exists()
