"""Figure 6.2's and Table 6.3's sections say how many of their scheduling times were noisy."""
import pandas as pd

from spbench.sptrsv.report import fig6_2_scheduling_time as fig62, table6_3_amortisation as table63

KERNELS = {"serial": "serial", "growlocal": "bsp", "spmp": "p2p"}


def _row(dataset, algorithm, cores, nnz, noisy, **extra):
    return {"experiment": "sptrsv", "config": "toy", "dataset": dataset, "algorithm": algorithm,
            "kernel": KERNELS[algorithm], "cores": cores, "status": "ok", "execution": "measured",
            "solve_time": 1.0 if algorithm == "serial" else 0.5, "solve_times": [1.0, 1.0],
            "schedule_time": 0.0 if algorithm == "serial" else 1e-7 * nnz, "supersteps": 3, "wavefronts": 9,
            "n": nnz // 4, "nnz": nnz, "repeat": 0, "schedule_noisy": noisy, **extra}


def _rows(noisy_flags):
    """Serial and two schedulers on four matrices; the schedulers' rows flagged from ``noisy_flags``."""
    sizes = [1_000, 10_000, 100_000, 1_000_000]
    rows = [_row(f"M{i}", "serial", 1, n, None) for i, n in enumerate(sizes)]
    flags = iter(noisy_flags)
    rows += [_row(f"M{i}", a, 2, n, next(flags)) for a in ("growlocal", "spmp") for i, n in enumerate(sizes)]
    return pd.DataFrame(rows)


def test_both_sections_count_the_noisy_points(tmp_path):
    df = _rows([True, False, False, False, True, False, None, False])
    for section in (fig62, table63):
        _, lines, notes = section.write_section(df, tmp_path)
        text = "\n".join(lines)
        assert "2 of 8 scheduling times noisy" in text and "1 from fewer than 3 calls" in text
        assert any("2 of 8 scheduling times noisy" in n for n in notes)


def test_quiet_points_and_rows_recorded_before_the_calls_were_repeated(tmp_path):
    _, lines, notes = fig62.write_section(_rows([False] * 8), tmp_path)
    assert "0 of 8 scheduling times noisy" in "\n".join(lines) and not any("noisy" in n for n in notes)
    _, lines, _ = table63.write_section(_rows([False] * 8).drop(columns="schedule_noisy"), tmp_path)
    assert "8 from fewer than 3 calls" in "\n".join(lines)
