"""`spbench datasets standin-search NAME`: the search that chose a fem-mesh stand-in, as a subcommand."""
from click.testing import CliRunner

from spbench.cli import main


def test_search_prints_the_best_candidates():
    res = CliRunner().invoke(main, ["datasets", "standin-search", "boneS01", "--top", "2"])
    assert res.exit_code == 0, res.output
    lines = res.output.splitlines()
    assert lines[0].startswith("boneS01: hex8, 3 dofs, rows 10000, nnz/row 26.9, average wavefront")
    scores = [float(line.strip()[1:].split(",")[0]) for line in lines[1:]]
    assert len(scores) == 2 and scores == sorted(scores)


def test_a_matrix_without_a_fem_mesh_stand_in_is_one_line():
    for args in (["nope"], ["boneS01", "nope"]):
        res = CliRunner().invoke(main, ["datasets", "standin-search", *args])
        assert res.exit_code == 2 and res.output.strip().splitlines() == [
            "Error: spbench datasets standin-search: nope: no fem-mesh stand-in to search; expected a paper "
            "matrix whose stand-in is a fem mesh"]
    res = CliRunner().invoke(main, ["datasets", "standin-search"])
    assert res.exit_code == 2 and len(res.output.strip().splitlines()) == 1, res.output


def test_paper_size_search_finds_the_recorded_recipe():
    from spbench.datasets.paper_matrices import PAPER_SIZE

    res = CliRunner().invoke(main, ["datasets", "standin-search", "s3dkt3m2", "--paper-size", "--top", "1"])
    assert res.exit_code == 0, res.output
    lines = res.output.splitlines()
    assert lines[0].startswith("s3dkt3m2: quad4, 5 dofs, rows 90449, nnz/row 21.2, average wavefront 60")
    cells, tiles = PAPER_SIZE["s3dkt3m2"]
    assert f"{tuple(cells)}, {tuple(tiles)}" in lines[1]


def test_paper_size_search_refuses_a_metis_only_matrix():
    res = CliRunner().invoke(main, ["datasets", "standin-search", "cant", "--paper-size"])
    assert res.exit_code == 2 and len(res.output.strip().splitlines()) == 1 and "Table A.1" in res.output
