"""The cost model in the SpTrSV report: error table (and its 30% call-out) and the barrier sweep."""
import pandas as pd

from spbench.report.model_report import model_error
from spbench.sptrsv.report.model_sections import barrier_sweep_table, write_model_sections


def _row(dataset, execution, t, **extra):
    return {"dataset": dataset, "algorithm": "elastic_divide", "kernel": "ssp", "cores": 2, "status": "ok",
            "execution": execution, "solve_time": t, **extra}


def test_model_error_and_callout(tmp_path):
    sweep = [{"latency": 0.0, "ratio": 1.0}, {"latency": 1e-7, "ratio": 1.5}]
    df = pd.DataFrame([_row("a", "measured", 2.0), _row("a", "simulated", 1.0, barrier_sweep=sweep),
                       _row("b", "measured", 1.0), _row("b", "simulated", 1.1, barrier_sweep=sweep),
                       _row("c", "measured", 1.0)])
    err = model_error(df).set_index("dataset")
    assert list(err.index) == ["a", "b"]
    assert err.loc["a", "rel_error"] == -0.5 and round(err.loc["b", "rel_error"], 12) == 0.1
    table = barrier_sweep_table(df)
    assert list(table["ratio_geomean"]) == [1.0, 1.5] and list(table["datasets"]) == [2, 2]
    paths, lines, notes = write_model_sections(df, tmp_path)
    text = "\n".join(lines)
    assert "exceeds 30% on 1 points" in text and "from 100 ns on" in text
    assert (tmp_path / "model_error.csv").exists() and (tmp_path / "barrier_sweep.png").exists()


def test_only_simulated_rows_get_a_note(tmp_path):
    df = pd.DataFrame([_row("a", "simulated", 1.0)])
    paths, lines, notes = write_model_sections(df, tmp_path)
    assert not lines and "--execution measured" in notes[0]


def test_barrier_sweep_title_says_simulated_scale_cores_and_matrices(tmp_path, monkeypatch):
    from spbench.sptrsv.report import model_sections

    titles = []

    def keep(fig, out_dir, stem, points):
        titles.append(fig.axes[0].get_title().replace("\n", " "))
        return []

    monkeypatch.setattr(model_sections, "save_figure", keep)
    sweep = [{"latency": 0.0, "ratio": 1.0}, {"latency": 1e-7, "ratio": 1.5}]
    df = pd.DataFrame([_row(d, "simulated", 1.0, barrier_sweep=sweep, cores=c, config="smoke_small",
                            dataset_source="synthetic")
                       for d in ("Flan_1565", "ldoor") for c in (2, 8)])
    write_model_sections(df, tmp_path)
    (title,) = titles
    assert "simulated (cost model)" in title and "--scale small" in title and "cores 2, 8" in title
    assert "2 stand-ins (synthetic, not the paper's matrices)" in title
