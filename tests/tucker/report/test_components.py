"""The Tucker report's "ours vs paper, by component" section: components and their metrics per
scheme, the paper's numbers only at the same P and K, and the component that decides the ranking."""
import pandas as pd
import pytest

from spbench.report.report import write_profile
from spbench.tucker.report.components import deciding_component, limiting_component, paper_fastest, paper_hooi

#: (ttm, svd, comm, other) seconds per (scheme, ranks); nell2 at 32 ranks: Lite loses on communication
PARTS = {("coarse", 32): (4.0, 1.0, 0.2, 0.1), ("medium", 32): (1.0, 2.0, 0.3, 0.1), ("lite", 32): (1.0, 1.0, 2.5, 0.1),
         ("coarse", 512): (2.0, 0.1, 0.05, 0.01), ("medium", 512): (0.1, 0.3, 0.05, 0.01),
         ("lite", 512): (0.06, 0.06, 0.08, 0.01)}
WORDS = {"coarse": (0, 4_000_000), "medium": (2_000_000, 1_000_000), "lite": (10_000, 30_000_000)}


def _rows(execution="simulated", with_times=True):
    rows = []
    for (alg, ranks), (ttm, svd, comm, other) in PARTS.items():
        svd_words, fm_words = WORDS[alg]
        times = {"hooi_time": ttm + svd + comm + other, "ttm_time": ttm, "svd_time": svd, "comm_time": comm,
                 "other_time": other} if with_times else {"hooi_time": None}
        rows.append({"experiment": "tucker", "config": "c", "dataset": "nell2", "dataset_source": "synthetic",
                     "algorithm": alg, "ranks": ranks, "K": 10, "status": "ok", "execution": execution,
                     "repeat": 0, "nnz": 770_000, "dist_time": 0.01, "ttm_imbalance": 3.0 if alg == "coarse" else 1.01,
                     "svd_redundancy": 2.5 if alg == "medium" else 1.02, "svd_imbalance": 1.1,
                     "svd_volume": svd_words, "fm_volume": fm_words, "mem_total_mb": 1.0, "mem_total_mb_max": 1.0,
                     "mem_tensor_mb": 0.4, "mem_penultimate_mb": 0.3, "mem_factor_mb": 0.3, **times})
    return pd.DataFrame(rows)


@pytest.mark.slow
def test_section_explains_ranking_with_paper_at_same_p_and_k(tmp_path):
    write_profile(_rows(), tmp_path)
    report = (tmp_path / "REPORT.md").read_text()
    section = report[report.index("## Ours vs paper, by component"):]
    assert "simulated (cost model), 1 stand-in at 1/100 of the paper's nonzeros" in section
    at32 = section[section.index("### P = 32"):section.index("### P = 512")]
    # Lite 4.6 s vs MediumG 3.4 s: the 1.2 s gap is +2.2 s of communication against -1.0 s of SVD
    assert "**Lite loses**: MediumG fastest (3.4 s)" in at32
    assert "Communication decides it: Lite spends 2.2 s more there, 183% of the 1.2 s gap" in at32
    assert "words/rank 93.8k (MediumG) vs 938k (Lite)" in at32 and "disagrees" in at32
    assert "(Fig. 16)" not in at32  # the paper prints HOOI seconds at 512 ranks only
    at512 = section[section.index("### P = 512"):section.index("### Fig. 15 by component")]
    assert "Lite fastest (0.21 s); MediumG 0.46 s" in at512 and "SVD (local) decides it" in at512
    assert "Paper: Lite fastest (Fig. 10(b), §7.2); agrees" in at512
    table = pd.read_csv(tmp_path / "components_P512_K10.csv").set_index("scheme")
    assert table.loc["Lite", "paper HOOI (s, same P and K)"] == "0.3 (Fig. 16)"
    assert table.loc["MediumG", "paper HOOI (s, same P and K)"] == "–"
    parts = ["TTM (s)", "SVD (local) (s)", "communication (s)", "other (s)"]
    assert (table[parts].sum(axis=1) - table["HOOI (s)"]).abs().max() < 1e-12
    scaling = pd.read_csv(tmp_path / "components_scaling_K10.csv").set_index("scheme")
    assert scaling.loc["Lite", "paper (Fig. 15(a), 32→512, K=10)"] == 12.2
    assert scaling.loc["Lite", "HOOI speed-up"] == pytest.approx(4.6 / 0.21)
    assert scaling.loc["CoarseG", "limited by"].startswith("TTM")
    assert "- nell2 (stand-in): Lite 21.9×, paper 12.2×" in section


@pytest.mark.slow
def test_measured_and_simulated_rows_get_tables_of_their_own(tmp_path):
    rows = pd.concat([_rows("simulated"), _rows("measured").assign(oversubscribed=True)], ignore_index=True)
    names = {p.name for p in write_profile(rows, tmp_path)}
    assert {"components_P32_K10_measured.md", "components_P32_K10_simulated.md"} <= names
    report = (tmp_path / "REPORT.md").read_text()
    assert "6 rows measured oversubscribed" in report


@pytest.mark.slow
def test_rows_without_times_show_the_metrics_alone(tmp_path):
    write_profile(_rows(with_times=False), tmp_path)
    report = (tmp_path / "REPORT.md").read_text()
    assert "## Ours vs paper, by component" in report and "No HOOI times in these rows" in report
    assert "E_max/(\\|E\\|/P)" in (tmp_path / "components_P32_K10.md").read_text()


def test_deciding_and_limiting_components():
    fast = pd.Series({"hooi_time": 3.0, "ttm_time": 1.0, "svd_time": 1.0, "comm_time": 0.5, "other_time": 0.5})
    slow = pd.Series({"hooi_time": 4.0, "ttm_time": 1.2, "svd_time": 1.7, "comm_time": 0.6, "other_time": 0.5})
    d = deciding_component(fast, slow)
    assert d["component"] == "svd_time" and d["gap"] == pytest.approx(1.0) and not d["alone"]
    # from 2 to 4 ranks: ideal halves every part; svd stays at 1.0 s, 0.5 s above ideal of 0.6 s total
    at4 = pd.Series({"hooi_time": 1.6, "ttm_time": 0.5, "svd_time": 1.0, "comm_time": 0.1, "other_time": 0.0})
    assert limiting_component(fast, at4, 2, 4) == ("svd_time", pytest.approx(0.5 / 0.1))


def test_paper_values_only_at_their_p_and_k():
    assert paper_hooi("nell2", "lite", 512, 10) == (0.3, "Fig. 16")
    assert paper_hooi("amazon", "coarse", 512, 10) == (89.0, "Fig. 14")
    assert paper_hooi("nell2", "lite", 32, 10) is None and paper_hooi("nell2", "lite", 512, 20) is None
    assert paper_hooi("nell2", "medium", 512, 10) is None
    assert paper_fastest("enron", 512, 20) == "Lite fastest (Fig. 10(c), §7.2)"
    assert paper_fastest("amazon", 32, 10) is None and paper_fastest("enron", 64, 10) is None


def test_equal_words_point_at_messages(tmp_path):
    """Lite losing on communication with the winner's words per rank: the text says the difference is
    the number of messages, not the words."""
    from spbench.tucker.report.components import components_section

    rows = _rows()
    rows = rows[(rows["ranks"] == 32) & (rows["algorithm"] != "medium")]
    rows.loc[rows["algorithm"] == "lite", "fm_volume"] = 4_000_000
    rows.loc[rows["algorithm"] == "coarse", "ttm_time"] = 1.0
    rows.loc[rows["algorithm"] == "coarse", "hooi_time"] = 2.3
    files, lines = components_section(rows, tmp_path)
    text = "\n".join(lines)
    assert "**Lite loses**: CoarseG fastest (2.3 s)" in text and "Communication decides it" in text
    assert "the number of messages, not the words" in text
    assert [p.name for p in files] == ["components_P32_K10.md", "components_P32_K10.csv"]
