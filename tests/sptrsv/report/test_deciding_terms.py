"""The simulated SpTrSV report's section naming the cost-model term that decides Fig. 6.1's order
and Table 6.2's ratio, on rows simulated from small generated matrices at 48 cores."""
import pandas as pd
import pytest

from spbench.datasets.synthetic import generate
from spbench.sptrsv.report.deciding_terms import TITLE, decide, term_rows, write_section
from spbench.sptrsv.report.report import write_sptrsv_profile
from spbench.sptrsv.dag import DAG
from spbench.sptrsv.execute import prepare_lower
from spbench.sptrsv.model import TERMS, predict_point

CORES = 48
#: (algorithm, kernel) simulated at CORES, serial at 1
RUNS = (("wavefront", "auto"), ("growlocal", "auto"), ("elastic_divide", "auto"), ("elastic_divide", "bsp"),
        ("spmp", "auto"))


def _rows(costs: dict) -> pd.DataFrame:
    """Simulated rows of two small generated matrices named like SuiteSparse ones (the group the
    paper's values are printed for)."""
    rows = []
    for name, grid in (("thermal2", 24), ("ecology2", 30)):
        L = prepare_lower(generate("lap2d-5pt", {"grid": grid}))
        dag = DAG(L)
        points = [("serial", "auto", 1), *((a, k, CORES) for a, k in RUNS)]
        for algorithm, kernel, cores in points:
            r = predict_point(L, algorithm, cores, costs, kernel=kernel, dag=dag)
            rows.append({"experiment": "sptrsv", "config": "toy", "dataset": name, "algorithm": algorithm,
                         "cores": cores, "status": "ok", "execution": "simulated", "repeat": 0,
                         "model_extrapolated": False, "dataset_source": "synthetic", **r})
    return pd.DataFrame(rows)


def _costs(latency: float) -> dict:
    return {"t_row": 2e-9, "t_nnz": 1e-9, "barrier": latency, "barrier_omp": latency, "weak_barrier": latency,
            "p2p_dep": latency / 4}


def test_terms_add_up_to_the_modelled_time():
    df = _rows(_costs(1e-6))
    terms = term_rows(df)
    assert len(terms) == len(df)
    assert (terms[list(TERMS)].sum(axis=1) - terms["solve_time"]).abs().max() < 1e-12
    assert (terms["imbalance"] >= -1e-15).all() and (terms["synchronisation"] >= -1e-15).all()


def test_expensive_barriers_decide_the_order_and_table_62(tmp_path):
    """With a 20 µs barrier wavefront's many barriers lose to GrowLocal on synchronisation, and
    the SSP kernel beats the BSP kernel on ElasticDivide's schedule by overlapping them."""
    df = _rows(_costs(2e-5))
    written, lines, notes = write_section(df, tmp_path)
    text = "\n".join(lines)
    assert lines[0] == f"## {TITLE}" and not notes
    assert {p.name for p in written} == {"deciding_terms_fig61.csv", "deciding_terms_table62.csv"}
    order = text[text.index("### Fig. 6.1"):text.index("### Table 6.2")]
    assert "SuiteSparse, 48 cores:" in order
    assert "over Wavefront: **synchronisation** decides it" in order
    # the paper quotes ElasticDivide over SpMP on x86 EPYC at 48 cores, SuiteSparse (§1)
    assert "ElasticDivide (SSP): 1.19 (x86 EPYC" in order
    t62 = text[text.index("### Table 6.2"):]
    assert "(SSP kernel faster); **synchronisation** decides it" in t62
    assert "x86 EPYC 1.47 at 48" in t62
    table = pd.read_csv(tmp_path / "deciding_terms_table62.csv")
    assert table["t_bsp / t_ssp"].iloc[0] > 1


def test_free_synchronisation_never_decides():
    df = _rows(_costs(0.0))
    terms = term_rows(df)
    assert terms["synchronisation"].abs().max() < 1e-15
    med = terms.set_index("dataset")
    wave = med[med["algorithm"] == "wavefront"]
    grow = med[med["algorithm"] == "growlocal"]
    fast, slow = (wave, grow) if wave["solve_time"].sum() < grow["solve_time"].sum() else (grow, wave)
    d = decide(fast, slow)
    assert d["term"] != "synchronisation"
    assert sum(d["shares"].values()) == pytest.approx(d["gap"])


def test_report_has_the_section_only_for_simulated_rows(tmp_path):
    df = _rows(_costs(1e-6))
    write_sptrsv_profile(df, tmp_path / "sim")
    assert f"## {TITLE}" in (tmp_path / "sim" / "REPORT.md").read_text()
    measured = df.assign(execution="measured")
    written, lines, notes = write_section(measured, tmp_path)
    assert (written, lines, notes) == ([], [], [])
    old = df.assign(model=[{"kind": "discrete-event"}] * len(df))
    assert "rerun the sweep" in write_section(old, tmp_path)[2][0]
