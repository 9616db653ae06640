"""Every row is one run's point joined with its measurement, and each process writes rows at one
call site (docs/design.md, "One row builder")."""
import ast
from pathlib import Path

import pytest

import spbench
from spbench.store.row_builder import build_row, failure, invalid

BENCH = Path(spbench.__file__).resolve().parent


def test_a_row_is_the_point_then_the_measurement_in_the_points_order():
    point = {"run_id": "r", "params": {}, "status": "ok", "error": None}
    row = build_row(point, {"time": 1.0, "params": {"L": 2}})
    assert row == {"run_id": "r", "params": {"L": 2}, "status": "ok", "error": None, "time": 1.0}
    assert list(row) == ["run_id", "params", "status", "error", "time"]
    assert point == {"run_id": "r", "params": {}, "status": "ok", "error": None}  # left as it was


def test_failed_and_invalid_measurements_say_why():
    assert failure("boom") == {"status": "error", "error": "boom"}
    assert failure("past 60 s", "timeout") == {"status": "timeout", "error": "past 60 s"}
    measured = {"fit": float("nan"), "status": "ok"}
    assert invalid(measured, None) == measured
    assert invalid(measured, "non-finite fit") == {"fit": measured["fit"], "status": "invalid",
                                                   "error": "non-finite fit"}


def _write_row_calls(path: Path) -> int:
    tree = ast.parse(path.read_text())
    return sum(isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "write_row"
               for node in ast.walk(tree))


@pytest.mark.parametrize("module, calls", [("pipeline/runner.py", 1), ("tucker/mpi/worker.py", 1),
                                           ("harness/rows.py", 1), ("tucker/mpi/launch.py", 0),
                                           ("tucker/mpi/task_loop.py", 0)])
def test_each_process_writes_rows_at_one_call_site(module, calls):
    """The sweep runner, the MPI worker and `spbench bench` each call the store's write_row once; the
    launcher yields its rows to the runner and the task loop hands them to the worker's one call."""
    assert _write_row_calls(BENCH / module) == calls


def test_no_other_module_writes_rows():
    writers = {p.relative_to(BENCH).as_posix() for p in BENCH.rglob("*.py") if _write_row_calls(p)}
    assert writers == {"pipeline/runner.py", "tucker/mpi/worker.py", "harness/rows.py"}
