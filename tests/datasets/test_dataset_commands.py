"""``spbench datasets`` via click's CliRunner: list, show, generate, fetch, and one-line errors."""
import pytest
from click.testing import CliRunner

from spbench.cli.datasets import datasets
from spbench.datasets.matrix_market import read_matrix
from spbench.datasets import synthetic


@pytest.fixture
def cli():
    return lambda *args: CliRunner().invoke(datasets, list(args))


def test_list(cli, monkeypatch):
    from spbench.datasets import standin_stats
    monkeypatch.setattr(standin_stats, "standin_statistics",
                        lambda family, params: {"n": 109395, "nnz": 4181530, "avg_wavefront": 200.4})
    res = cli("list")
    assert res.exit_code == 0, res.output
    lines = [line for line in res.output.splitlines() if not line.startswith("measuring stand-in")]
    assert lines[0].split()[:4] == ["name", "kind", "n", "nnz"]
    flan = next(line for line in lines if line.startswith("Flan_1565 "))
    assert "1,564,794" in flan and "59,485,419" in flan and " no " in flan
    assert "109,395" in flan and "4,181,530" in flan and " 200 " in flan  # the stand-in's, beside the paper's
    assert any(line.startswith("lap2d-5pt ") for line in lines)


def test_show_generator(cli):
    res = cli("show", "lap2d-5pt", "-p", "grid=20")
    assert res.exit_code == 0, res.output
    assert "lap2d-5pt[grid=20]" in res.output
    assert "nnz (lower)      1,160" in res.output


def test_show_unavailable_suitesparse_and_standin(cli, tiny_entry):
    res = cli("show", "Tiny_8", "--no-fetch")
    assert res.exit_code != 0
    assert res.output.startswith("Error: Tiny_8: not cached") and res.output.count("\n") == 1
    res = cli("show", "Tiny_8", "--no-fetch", "--standin")
    assert res.exit_code == 0 and "stand-in" in res.output and "lap2d-5pt[grid=3]" in res.output


def test_show_errors(cli):
    res = cli("show", "lap2d-5pt", "-p", "gird=3")
    assert res.exit_code != 0 and "unknown parameter 'gird'" in res.output
    res = cli("show", "lap2d-5pt", "-p", "grid")
    assert res.exit_code != 0 and "expected key=value" in res.output


@pytest.mark.parametrize("name", ["out.mtx", "out.mtx.gz"])
def test_generate_and_show_file(cli, tmp_path, name):
    out = tmp_path / name
    res = cli("generate", "elasticity3d", "-p", "grid=3", "-p", "seed=5", "-o", str(out))
    assert res.exit_code == 0, res.output
    A = read_matrix(out)
    assert abs(A - synthetic.generate("elasticity3d", {"grid": 3, "seed": 5})).max() < 1e-12
    assert sorted(p.name for p in tmp_path.iterdir()) == [name]
    res = cli("show", str(out))
    assert res.exit_code == 0 and "kind             file" in res.output


def test_generate_standin_and_errors(cli, tmp_path):
    res = cli("generate", "Dubcova3", "-o", str(tmp_path / "d.mtx"))
    assert res.exit_code == 0 and "stand-in" in res.output
    res = cli("generate", "lap2d-5pt", "-o", str(tmp_path / "d.txt"))
    assert res.exit_code != 0 and "must end in .mtx or .mtx.gz" in res.output
    res = cli("generate", "nope", "-o", str(tmp_path / "n.mtx"))
    assert res.exit_code != 0 and "unknown name 'nope'" in res.output


def test_fetch(cli, tiny_server, private_cache, monkeypatch):
    monkeypatch.setenv("SPBENCH_SUITESPARSE_URL", "http://127.0.0.1:9/MM")
    res = cli("fetch", "Tiny_8", "--url-base", f"{tiny_server.url}/MM")
    assert res.exit_code == 0, res.output
    assert "\rTiny_8: 0.0/0.0 MB (100%)" in res.output
    assert "sha256" in res.output
    assert (private_cache / "suitesparse" / "Tiny_8.npz").is_file()
    res = cli("fetch", "Tiny_8")
    assert res.exit_code == 0 and "MB" not in res.output


def test_fetch_errors(cli, http_server, tiny_entry):
    res = cli("fetch", "Tiny_8", "lap2d-5pt", "--url-base", f"{http_server.url}/MM")
    assert res.exit_code == 2 and "lap2d-5pt is a generator" in res.output   # refused before any download
    assert not http_server.hits
    res = cli("fetch", "Tiny_8", "--url-base", f"{http_server.url}/MM")
    assert res.exit_code == 1 and "HTTP 404" in res.output
    assert res.output.splitlines()[-1] == "Error: could not fetch 1 of 1: Tiny_8"
