"""`spbench bench schedule-in-sweep` at a tiny size: its rows are written and well formed (the
ratio's 1.2x is a quiet machine's figure, not checked here)."""
import pytest
from click.testing import CliRunner

from spbench.cli import main
from spbench.experiment_registry import get_row_kind
from spbench.store.results import load_rows
from spbench.store.row_schema import row_problems


def test_rows_of_both_schedulers(tmp_path):
    out = tmp_path / "bench"
    res = CliRunner().invoke(main, ["bench", "schedule-in-sweep", "--grid", "6", "--cores", "2", "--repeats", "3",
                                    "--rounds", "2", "--out", str(out), "-q"])
    assert res.exit_code == 0, res.output
    assert "| spmp |" in res.output and "| growlocal |" in res.output
    rows = {r["item"]: r for r in load_rows(out).to_dict("records")}
    assert set(rows) == {"spmp", "growlocal"}
    fields = get_row_kind("bench").row_fields
    for row in rows.values():
        assert row_problems({k: v for k, v in row.items() if k in fields}, fields) == []
        assert row["status"] == "ok" and row["benchmark"] == "schedule-in-sweep" and row["cores"] == 2
        assert len(row["schedule_times"]) == len(row["standalone_times"]) == 2
        assert row["schedule_calls"] == [3, 3] and 0 <= row["noisy_rounds"] <= 2
        assert row["schedule_time"] > 0 and row["standalone_time"] > 0
        assert row["ratio"] == pytest.approx(row["schedule_time"] / row["standalone_time"])
        assert row["units"]["standalone_time"] == "s" and row["units"]["schedule_time"] == "s"
        assert row["params"] == {"grid": 6, "cores": 2, "repeats": 3, "rounds": 2}
