"""Distributed HOOI under MPI: parallel schemes, the Figure-5 oracle, factor transfer, the worker.

Each MPI run is a subprocess ``<venv>/bin/mpiexec -n R python -m mpi4py ...`` with a timeout
(1, 2 and 3 ranks; an exception on any rank aborts them all). The MPI scripts under
``mpi_scripts/`` do the distributed work and write their comparisons with the single-process
code (``schemes``, ``hooi``, ``compute_metrics``) to a JSON file asserted on here.
"""
import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from spbench.tucker.hooi.loop import hooi
from spbench.datasets.sparse_tensor import SparseTensor

HERE = Path(__file__).parent
SCRIPTS = HERE / "mpi_scripts"
MPIEXEC = Path(sys.executable).parent / "mpiexec"
TIMEOUT = 120


def _mpi_available() -> str | None:
    if not MPIEXEC.exists():
        return f"no mpiexec beside {sys.executable} (pip install mpi4py mpich)"
    try:
        import mpi4py  # noqa: F401
    except Exception as exc:  # pragma: no cover
        return f"mpi4py unavailable: {exc}"
    return None


pytestmark = [pytest.mark.mpi, pytest.mark.skipif(_mpi_available() is not None, reason=str(_mpi_available()))]


def _hyper_available() -> bool:
    from spbench.tucker.schemes.hyper import available
    return available()


def mpirun(ranks: int, *args, check: bool = True) -> subprocess.CompletedProcess:
    env = {**os.environ, "OMP_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1"}
    proc = subprocess.run([str(MPIEXEC), "-n", str(ranks), sys.executable, "-m", "mpi4py", *map(str, args)],
                          capture_output=True, text=True, timeout=TIMEOUT, env=env)
    if check and proc.returncode != 0:
        raise AssertionError(f"mpiexec -n {ranks} {' '.join(map(str, args))} failed ({proc.returncode}):\n"
                             f"{proc.stdout[-3000:]}\n{proc.stderr[-5000:]}")
    return proc


@pytest.mark.slow
@pytest.mark.parametrize("ranks", [1, 2, 3])
def test_distributed_hooi_matches_serial(tmp_path, ranks):
    """Every scheme at 1/2/3 ranks on a 3- and a 4-mode tensor: parallel policies equal the serial
    schemes (Lite per §6.1 with sample sort), fit and factor subspaces equal ``hooi``'s, measured
    SVD/factor-transfer words equal ``compute_metrics``' volumes (per product R_sum − L_n)."""
    schemes = ["lite", "coarse", "medium"] + (["hyper"] if _hyper_available() else [])
    out = tmp_path / "report.json"
    mpirun(ranks, SCRIPTS / "check_dist.py", out, *schemes)
    report = json.loads(out.read_text())
    assert {(e["case"], e["scheme"]) for e in report} == {(c, s) for c in ("3mode", "4mode") for s in schemes}
    for e in report:
        where = f"{e['case']}/{e['scheme']} at {ranks} ranks"
        assert e["ranks"] == ranks
        if e["scheme"] != "hyper":
            assert e["policy_equal"], f"{where}: parallel policy differs from the serial scheme"
        assert e["own_metrics_equal"], f"{where}: the ranks' own metrics differ from compute_metrics"
        assert e["svd_gather_words"] == [0] * len(e["svd_gather_words"]), where
        assert e["per_product"] == e["r_sum_minus_l"], where
        assert e["svd_words"] == e["svd_volume"], where
        assert e["fm_words"] == e["fm_volume"], where
        assert e["fit_rel"] < 1e-10, f"{where}: fit {e['fit']} vs serial {e['serial_fit']}"
        assert e["ttm_paper_fit_rel"] < 1e-10, f"{where}: ttm csf and paper fits differ"
        assert e["max_angle"] < 1e-8, f"{where}: principal angle {e['max_angle']}"
        # lanczos: paper is the same arithmetic at every P up to reduction order (§7.1: 2K steps)
        assert e["paper_fit_rel"] < 1e-10, f"{where}: paper-mode fit differs from one process"
        assert e["paper_max_angle"] < 1e-8, f"{where}: paper-mode angle {e['paper_max_angle']}"
        if ranks == 1:
            assert e["svd_words"] == [0] * len(e["svd_words"]) and e["fm_words"] == [0] * len(e["fm_words"])


@pytest.mark.parametrize("ranks", [1, 2, 3])
def test_lite_sample_sort_edge_cases(tmp_path, ranks):
    """Sample sort; Lite/CoarseG/MediumG policies and HOOI fits on a giant slice, tied sizes,
    many empty slices and a 5-element tensor (ranks without elements)."""
    out = tmp_path / "report.json"
    mpirun(ranks, SCRIPTS / "check_lite.py", out)
    report = json.loads(out.read_text())
    assert len(report) >= 20
    bad = [e for e in report if not e["ok"]]
    assert not bad, bad


def _write_tensor_dir(d: Path, t: SparseTensor) -> Path:
    from spbench.datasets.tensor_store import write_store
    write_store(d, t.coords, t.values, t.dims, checksum="test", source={"kind": "test"})
    return d


def _tensor(seed=4, dims=(40, 30, 25), nnz=1500):
    rng = np.random.default_rng(seed)
    cols = [rng.permutation(L)[rng.choice(L, size=nnz, p=(w := np.arange(1, L + 1) ** -1.1) / w.sum())]
            for L in dims]
    return SparseTensor(np.stack(cols, axis=1), rng.random(nnz) + 0.5, dims)


REQUIRED = ("run_id", "status", "ranks", "K", "dist_time", "dist_time_kind", "hooi_time", "ttm_time",
            "svd_time", "comm_time", "fit", "svd_words", "fm_words", "queries", "peak_rss_mb_max",
            "peak_rss_mb_mean", "lanczos", "restarts", "lanczos_residual_max", "words_per_rank_max",
            "svd_gather_words", "held_nonzeros_max", "mode_metrics", "e_max", "r_sum", "mem_tensor_mb")


def test_worker_contract(tmp_path):
    """``mpiexec -n 2 python -m mpi4py -m spbench.tucker.mpi.worker SPEC.json`` writes one fragment per
    task with the base row, the measured fields and status ok; the fit is hooi's."""
    from spbench.tucker.metrics import compute_metrics
    from spbench.tucker.schemes import get_scheme

    t = _tensor()
    tdir = _write_tensor_dir(tmp_path / "tensor", t)
    runs = tmp_path / "runs"
    schemes = ["lite", "coarse", "medium"] + (["hyper"] if _hyper_available() else [])
    tasks = [{"row": {"run_id": f"run-{s}", "dataset": "toy", "algorithm": s, "schema_version": 1},
              "scheme": s, "K": 4, "params": {"preset": "deterministic"} if s == "hyper" else {},
              "seed": 5, "invocations": 1, "init": "random", "save_factors": s == "lite"} for s in schemes]
    spec = tmp_path / "spec.json"
    spec.write_text(json.dumps({"tensor_dir": str(tdir), "results": str(runs.parent), "scratch": True, "threads": 1,
                                "tasks": tasks}))
    mpirun(2, "-m", "spbench.tucker.mpi.worker", spec)
    serial = hooi(t, 4, invocations=1, init="random", seed=5, lanczos="paper")
    assert not list(runs.glob("*.part*")), "temporary files left behind"
    for s in schemes:
        row = json.loads((runs / f"run-{s}.json").read_text())
        missing = [k for k in REQUIRED if k not in row]
        assert not missing, f"{s}: missing {missing}"
        assert row["status"] == "ok" and row["dataset"] == "toy" and row["schema_version"] == 1
        assert row["ranks"] == 2 and row["nnz"] == t.nnz and row["dims"] == list(t.dims)
        assert abs(row["fit"] - serial.fit) <= 1e-10 * abs(serial.fit)
        for k in ("dist_time", "hooi_time", "ttm_time", "svd_time", "comm_time"):
            assert row[k] >= 0
        assert row["hooi_time"] >= row["ttm_time"]
        assert len(row["peak_rss_mb"]) == 2 and row["peak_rss_mb_max"] > 0
        if s == "hyper":
            assert "hypergraph" in row["dist_time_kind"]
        else:
            dist = get_scheme(s)(t, 2, seed=5)
            met = compute_metrics(t, dist, 4, Q=row["queries"])
            assert row["svd_words"] == [m["svd_volume"] for m in met.modes]
            assert row["fm_words"] == [m["fm_volume"] for m in met.modes]
            assert row["mode_metrics"] == met.modes            # the ranks' own metrics
        assert row["lanczos"] == "paper" and row["queries"] == [16, 16, 16] and row["restarts"] == [0, 0, 0]
        assert row["svd_gather_words"] == [0, 0, 0] and row["words_per_rank_max"] > 0
    with np.load(runs / "run-lite.factors.npz") as z:
        assert z["core"].shape == (4, 4, 4)
        for n in range(3):
            F = z[f"F{n}"]
            assert F.shape == (t.dims[n], 4)
            # same subspace as the serial factor
            s = np.linalg.svd(F.T @ serial.factors[n], compute_uv=False)
            assert np.allclose(s, 1.0, atol=1e-8)


@pytest.mark.slow
@pytest.mark.mpi
@pytest.mark.parametrize("ranks", [1, 2, 3])
def test_measured_components_partition_hooi_time(tmp_path, ranks):
    """A measured row's ttm + svd + comm + other (the slowest rank's timers) = its hooi_time, the
    same rank's partition span (Fig. 11's bars); at one rank nothing is sent: no message time, 0 words per rank."""
    from spbench.tucker.hooi.loop import PARTITION

    tdir = _write_tensor_dir(tmp_path / "tensor", _tensor(dims=(300, 200, 150), nnz=30000))
    runs = tmp_path / "runs"
    tasks = [{"row": {"run_id": s}, "scheme": s, "K": 6, "seed": 0, "invocations": 2}
             for s in ("lite", "coarse", "medium")]
    spec = tmp_path / "spec.json"
    spec.write_text(json.dumps({"tensor_dir": str(tdir), "results": str(runs.parent), "scratch": True, "threads": 1,
                                "tasks": tasks}))
    mpirun(ranks, "-m", "spbench.tucker.mpi.worker", spec)
    for t in tasks:
        row = json.loads((runs / f"{t['scheme']}.json").read_text())
        parts = [row[k] for k in PARTITION]
        assert min(parts) >= 0 and row["ttm_time"] > 0 and row["svd_time"] > 0, row
        assert sum(parts) == pytest.approx(row["hooi_time"], rel=1e-9), (t["scheme"], parts, row["hooi_time"])
        assert row["fm_time"] <= row["comm_time"] and "slowest rank" in row["hooi_time_kind"]
        if ranks == 1:
            assert row["comm_time"] == 0.0 and row["words_per_rank_max"] == 0 and row["core_words"] == 0
        else:
            assert row["comm_time"] > 0 and row["words_per_rank_max"] > 0


def test_worker_failed_task_is_its_own_error_row(tmp_path):
    """A failing task is that task's error row (every rank agrees, no hang); the tasks before and
    after it still run and store their rows."""
    tdir = _write_tensor_dir(tmp_path / "tensor", _tensor(nnz=300))
    runs = tmp_path / "runs"
    tasks = [{"row": {"run_id": "good"}, "scheme": "coarse", "K": 2, "seed": 0},
             {"row": {"run_id": "bad"}, "scheme": "no-such-scheme", "K": 2, "seed": 0},
             {"row": {"run_id": "after"}, "scheme": "lite", "K": 2, "seed": 0}]
    spec = tmp_path / "spec.json"
    spec.write_text(json.dumps({"tensor_dir": str(tdir), "results": str(runs.parent), "scratch": True, "threads": 1,
                                "tasks": tasks}))
    mpirun(2, "-m", "spbench.tucker.mpi.worker", spec)
    rows = {r: json.loads((runs / f"{r}.json").read_text()) for r in ("good", "bad", "after")}
    assert rows["good"]["status"] == "ok" and rows["after"]["status"] == "ok"
    assert rows["bad"]["status"] == "error" and "no-such-scheme" in rows["bad"]["error"]
