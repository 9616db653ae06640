"""The claims page (`make claims`): every claim of both papers yields a verdict on no rows ("not
measurable", saying what is missing) and on fabricated rows, the page's counts add up, rows of several
results folders are combined, bad input is one line and exit status 2."""
import json

import pandas as pd
import pytest

from spbench.report import claims as engine
from spbench.report.claims import VERDICTS, evaluate, judge_cases, judge_cells, judge_range, judge_value
from spbench.store.row_schema import SCHEMA_VERSION
from spbench.sptrsv.report import claims as sptrsv_claims
from spbench.tucker.report import claims as tucker_claims

MODULES = (tucker_claims, sptrsv_claims)
ALL = [c for m in MODULES for c in m.CLAIMS]


def sptrsv_rows() -> pd.DataFrame:
    """Stand-ins of two groups at 16, 48 and 64 cores: every scheduler on its paper kernel,
    ElasticDivide on BSP too, and a serial baseline."""
    rows = []
    for name, nnz in (("bcsstk01", 10_000), ("bcsstk01+metis", 12_000), ("nd3k", 1_000_000), ("nd3k+metis", 900_000)):
        rows.append(dict(dataset=name, algorithm="serial", kernel="serial", cores=1, solve_time=1.0, nnz=nnz))
        for cores in (16, 48, 64):
            for alg, kernel, t, steps in (("hdagg", "bsp", 0.5, 50), ("growlocal", "bsp", 0.3, 10),
                                          ("elastic_divide", "ssp", 0.25, 5), ("elastic_divide", "bsp", 0.4, 5),
                                          ("spmp", "p2p", 0.35, 0)):
                rows.append(dict(dataset=name, algorithm=alg, kernel=kernel, cores=cores, solve_time=t * 16 / cores,
                                 nnz=nnz, supersteps=steps or None, wavefronts=100,
                                 schedule_time={"spmp": 1e-4, "hdagg": 1e-3}.get(alg, 5e-4) * nnz / 1e4))
    base = {"experiment": "sptrsv", "config": "c", "dataset_source": "synthetic", "status": "ok",
            "execution": "measured", "repeat": 0}
    return pd.DataFrame([{**base, **r, "solve_times": [r["solve_time"]] * 3} for r in rows])


def tucker_rows() -> pd.DataFrame:
    from tests.tucker.report.test_claims import tucker_rows as rows

    return rows()


def test_every_claim_is_not_measurable_on_no_rows_saying_what_is_missing():
    results = evaluate(ALL, pd.DataFrame())
    assert len(results) == len(ALL) and len({c.id for c in ALL}) == len(ALL)
    for r in results:
        assert r.outcome.verdict == "not measurable", r.claim.id
        assert r.outcome.reason and "could not compute" not in r.outcome.reason, (r.claim.id, r.outcome.reason)


@pytest.mark.parametrize("module", MODULES, ids=lambda m: m.EXPERIMENT)
def test_every_claim_yields_a_verdict_from_fabricated_rows(module):
    rows = tucker_rows() if module is tucker_claims else sptrsv_rows()
    results = evaluate(module.CLAIMS, rows)
    for r in results:
        assert r.outcome.verdict in VERDICTS
        assert "could not compute" not in r.outcome.reason, (r.claim.id, r.outcome.reason)
    judged = [r for r in results if r.outcome.verdict != "not measurable"]
    assert len(judged) >= len(results) // 2, [(r.claim.id, r.outcome.reason) for r in results]


def test_claims_carry_location_paper_value_and_conditions():
    for c in ALL:
        assert c.where and c.quantity and c.paper and c.conditions and callable(c.compute), c.id


def test_judges():
    assert judge_value(11.0, 12.0, 0.25).verdict == "reproduced"
    assert judge_value(6.0, 12.0, 0.25).verdict == "partly"
    out = judge_value(0.8, 3.0, 0.25)
    assert out.verdict == "not reproduced" and "−73%" in out.reason
    assert judge_range(8.0, 15.0, 8.6, 15.5, 0.25).verdict == "reproduced"
    assert judge_range(2.0, 9.0, 8.6, 15.5, 0.25).verdict == "partly"
    assert judge_range(1.0, 2.0, 8.6, 15.5, 0.25).verdict == "not reproduced"
    assert judge_cases({"a": (True, ""), "b": (False, "why")}).verdict == "partly"
    assert judge_cases({}).verdict == "not measurable"
    assert judge_cells([("x", 1.0, 1.1), ("y", 5.0, 1.0)], 0.25).ours == "1 of 2 cells within ±25%"


def _store(folder, rows: pd.DataFrame):
    (folder / "runs").mkdir(parents=True)
    for i, row in enumerate(rows.to_dict("records")):
        row.update(run_id=f"r{i}", schema_version=SCHEMA_VERSION)
        (folder / "runs" / f"r{i}.json").write_text(json.dumps(row))


def test_page_counts_add_up_over_combined_folders(tmp_path, capsys):
    rows = tucker_rows()
    _store(tmp_path / "results" / "tucker_32", rows[rows["ranks"] == 32])
    _store(tmp_path / "results" / "tucker_512", rows[rows["ranks"] == 512])
    _store(tmp_path / "results" / "sptrsv", sptrsv_rows())
    assert engine.main([str(tmp_path / "results"), "--out", str(tmp_path / "plots" / "claims")]) == 0
    page = (tmp_path / "plots" / "claims" / "REPORT.md").read_text()
    found = {v: int(page.split(f" {v}")[0].rsplit(" ", 1)[-1].strip("*:")) for v in VERDICTS}
    assert f"**{len(ALL)} claims: " in page and sum(found.values()) == len(ALL)
    assert page.count("| `T-") == len(tucker_claims.CLAIMS) and page.count("| `S-") == len(sptrsv_claims.CLAIMS)
    fig15 = next(line for line in page.splitlines() if line.startswith("| `T-fig15-best`"))
    assert "**reproduced**" in fig15 and "tucker_32" in fig15 and "tucker_512" in fig15
    assert "stand-in" in next(line for line in page.splitlines() if line.startswith("| `S-t6.1`"))
    assert f"{len(ALL)} claims" in capsys.readouterr().out
    assert not list((tmp_path / "plots" / "claims").glob(".*"))  # no temporary file left


def test_a_missing_folder_is_one_line_and_exit_2(tmp_path, capsys):
    assert engine.main([str(tmp_path / "nowhere"), "--out", str(tmp_path / "out")]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "no results folder" in err
    assert not (tmp_path / "out").exists()


def test_an_empty_results_folder_gives_a_page_of_not_measurable(tmp_path):
    (tmp_path / "results").mkdir()
    assert engine.main([str(tmp_path / "results"), "--out", str(tmp_path / "out")]) == 0
    page = (tmp_path / "out" / "REPORT.md").read_text()
    assert f"0 reproduced, 0 partly, 0 not reproduced, {len(ALL)} not measurable" in page
    assert "no sweep folder" in page


def test_the_engine_finds_both_papers_through_the_registry():
    assert {m.EXPERIMENT for m in engine.paper_modules()} == {"tucker", "sptrsv"}


def test_rows_of_two_scales_are_never_pooled():
    """A `--scale small` folder beside a full one (the same data sets, smaller): each claim is judged on
    the full rows, the small rows' differing verdict noted; small rows alone are judged and named so."""
    full = sptrsv_rows().assign(settings=[{"scale": "full"}] * len(sptrsv_rows()))
    small = sptrsv_rows().assign(settings=[{"scale": "small"}] * len(full))
    small.loc[small["algorithm"] == "elastic_divide", "solve_time"] *= 50        # ElasticDivide loses here
    claims = [c for c in sptrsv_claims.CLAIMS if c.id == "S-6.2-ed-gl"]
    alone = evaluate(claims, full)[0]
    both = evaluate(claims, pd.concat([full, small], ignore_index=True))[0]
    assert both.execution == "measured" and both.outcome.ours == alone.outcome.ours, both.outcome
    assert "measured, --scale small rows:" in both.outcome.reason
    only_small = evaluate(claims, small)[0]
    assert only_small.execution == "measured @ small" and only_small.outcome.ours != alone.outcome.ours
    assert engine.execution_name(only_small.execution) == "measured, --scale small"
