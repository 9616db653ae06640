"""The representativeness table: the sweep's tensor against the paper's at the run's rank counts."""
import pandas as pd
import pytest

from spbench.tucker.report.representativeness import representativeness_section, representativeness_table


def test_table_ratios_for_a_standin_and_the_real_tensor():
    stats = {"dims": [100, 80, 60], "nnz": 12000, "slices": [100, 80, 50], "largest_slice": [600, 300, 40]}
    df = pd.DataFrame([{"dataset": "nell2", "dataset_source": "synthetic", "ranks": 4, "K": 10,
                        "tensor_stats": stats, "status": "ok"}])
    t = representativeness_table(df)
    assert len(t) == 3
    m1 = t[t["mode"] == 1].iloc[0]
    assert m1["nnz/P"] == 3000 and m1["L_n/P"] == 25
    assert m1["largest slice/(nnz/P)"] == pytest.approx(0.2)
    assert m1["nnz/(Q_n L_n)"] == pytest.approx(12000 / (40 * 100))
    assert m1["real nnz/P"] == pytest.approx(76879419 / 4)
    assert m1["real L_n/P ≈"] == pytest.approx(12092 / 4)
    lines = representativeness_section(df)
    assert lines[0].startswith("## Representativeness") and any("nell2" in l for l in lines)


def test_no_stats_no_section():
    assert representativeness_section(pd.DataFrame([{"dataset": "x", "ranks": 1, "K": 2}])) == []
