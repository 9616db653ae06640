"""The SPLATT side by side: rounds interleaved, its timers read."""
import numpy as np
import pytest


def test_splatt_rounds_interleave_and_read_its_timers(tmp_path):
    """The SPLATT side by side: its TTM and SVD timer lines read per round (a stand-in binary that
    prints them and logs its arguments), ours measured between, medians per thread count;
    a binary without the timer lines is one clear error."""
    from spbench.tucker.benchmarks.splatt_side import splatt_rounds, splatt_timers

    fake = tmp_path / "splatt"
    log = tmp_path / "calls"
    fake.write_text(f'#!/bin/sh\necho "$OMP_NUM_THREADS $*" >> {log}\n'
                    'printf "Timing information\\n  TTM                 0.036s\\n  SVD                 0.012s\\n'
                    '  CSF                 0.500s\\n"\n')
    fake.chmod(0o755)
    items = splatt_rounds(str(fake), ["3way"], [1, 2], 2, 0, 0, tmp_path)
    assert [(i["threads"], i["splatt_ttm"], i["splatt_svd"]) for i in items] == [(1, 0.036, 0.012), (2, 0.036, 0.012)]
    assert items[0]["csf_ttm"] > 0 and items[0]["spbench_svd"] > 0 and items[1]["spbench_svd"] is None
    assert all(i["splatt_csf"] == 0.5 and i["csf_build"] > 0 for i in items)       # its trees' build beside ours
    from spbench.tucker.benchmarks.tables import splatt_table
    table = splatt_table([{**i, "params": {"binary": str(fake), "iterations": 1, "reps": 2}} for i in items])
    assert "| 0.500 | " in table and "ours / SPLATT" in table
    calls = log.read_text().splitlines()
    assert len(calls) == 4 and calls[0].startswith("1 tucker -i 1 --tol 0 -r 10 -t 1 -v --nowrite -c 3 --seed 1 ")
    assert calls[2].startswith("2 tucker -i 1 --tol 0 -r 10 -t 2 ")
    tns = np.loadtxt(tmp_path / "3way.tns")
    assert tns.shape[1] == 4 and tns[:, :3].min() == 1 and f"{tns.shape[0]} nnz" in items[0]["dataset"]
    fake.write_text("#!/bin/sh\necho nothing\n")
    with pytest.raises(RuntimeError, match="no 'TTM' timer"):
        splatt_timers(str(fake), tmp_path / "3way.tns", 3, 10, 1)
