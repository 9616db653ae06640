"""Calibration of the Tucker cost model (:mod:`.model`) on this machine.

:func:`calibrate` times the real code paths of one distributed HOOI, one process, one thread
(the worker's setting: ``OMP_NUM_THREADS=1``, BLAS held at one thread), and fits:

* TTM (the Cython kernel :func:`.ttm.ttm` over a :class:`.ttm.TTMPlan`) on generated tensors
  of N = 3 and 4 modes (uniform coordinates, and the power-law stand-ins of nell1, enron,
  delicious: never nell2, the validation tensor), K = 5, 10, 20 (quick: fewer and smaller),
  every mode, each call cold as in a one-invocation HOOI (caches evicted, a fresh Z), in both
  layouts of the worker: one copy (uni-policy) and N copies with mode n's plan over copy n
  (multi-policy; the worker measures those 1.2–1.5× slower, the copies here do not show it):
  t = ttm_elem·|E| + ttm_elem_khat·|E|·K̂ + ttm_row_khat·R·K̂ + ttm_local_khat·(local − |E|)·K̂,
  local = the elements the rank holds for all modes (non-negative least squares, relative
  error weighting);
* the oracle on compact matrices Z (R × K̂): Z·x and Zᵀ·y, t = oracle_call + c·R·K̂ with
  c = oracle_matvec_entry / oracle_rmatvec_entry;
* the core's GEMM Zᵀ·Y (Y: R × K), seconds per multiply–add (``gemm_madd``);
* the Lanczos work outside the oracle (:func:`.lanczos.lanczos_svd`: the replicated bases, full
  reorthogonalization, restarts), per query: lanczos_query + lanczos_word·ncv·(L + K̂);
* the distributed oracle's own work per query (DistOracle at one rank minus Z·x / Zᵀ·y):
  dist_oracle_call + dist_oracle_row·L (measured inside the MPI micro-benchmark);
* MPI α/β of ping-pong, Allreduce, Alltoallv, Allgatherv from :mod:`.mpi_microbench` run as
  ``mpiexec -n 2 python -m mpi4py -m spbench.tucker.mpi_microbench OUT.json`` (the mpiexec
  beside this Python). Two ranks on two cores only: with more ranks than cores the numbers are
  time slices, not latencies, and are refused. No mpiexec: the MPI part is skipped with a
  reason (``mpi.skipped``) and the model then predicts P = 1 only.

The result is a JSON-serialisable dict: ``{"schema_version", "timestamp", "quick", "machine",
"costs": {name: seconds}, "fits": {diagnostics}, "mpi": {...}}``; :func:`save` / :func:`load`.
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import time
from datetime import datetime, timezone
from pathlib import Path

import numpy as np

__all__ = ["calibrate", "save", "load", "calibrate_ttm", "calibrate_oracle", "calibrate_lanczos",
           "calibrate_mpi", "COMPUTE_KEYS", "MPI_KEYS", "SCHEMA_VERSION"]

SCHEMA_VERSION = 1
COMPUTE_KEYS = ("ttm_elem", "ttm_elem_khat", "ttm_row_khat", "ttm_local_khat", "oracle_call",
                "oracle_matvec_entry", "oracle_rmatvec_entry", "gemm_madd", "lanczos_query", "lanczos_word")
MPI_KEYS = ("dist_oracle_call", "dist_oracle_row", "alpha_p2p", "beta_p2p", "alpha_allreduce", "beta_allreduce",
            "alpha_alltoallv", "beta_alltoallv", "alpha_allgatherv", "beta_allgatherv")


def _median_time(fn, reps: int) -> float:
    fn()                                   # warm-up (page faults, plan caches)
    ts = []
    for _ in range(reps):
        t0 = time.perf_counter()
        fn()
        ts.append(time.perf_counter() - t0)
    return float(np.median(ts))


def _nnls_rel(X: np.ndarray, t: np.ndarray) -> tuple[np.ndarray, float]:
    """Non-negative least squares on relative errors; returns (coefficients, median |rel err|)."""
    from scipy.optimize import nnls
    w = 1.0 / np.maximum(t, 1e-12)
    coef, _ = nnls(X * w[:, None], t * w)
    pred = X @ coef
    return coef, float(np.median(np.abs(pred - t) / t))


def _uniform_tensor(rng, dims, nnz):
    from .tensor import SparseTensor
    coords = np.stack([rng.integers(0, L, size=nnz) for L in dims], axis=1)
    return SparseTensor(coords, rng.random(nnz) + 0.5, dims)


def _standin(name, nnz, seed):
    from spbench.datasets.tensor_registry import standin
    return standin(name, nnz=nnz, seed=seed)


# ---- TTM ------------------------------------------------------------------------------------
def calibrate_ttm(quick: bool = False, seed: int = 0) -> dict:
    """Fit of the TTM kernel's time per mode on generated tensors (see the module docstring)."""
    from threadpoolctl import threadpool_limits

    from .hooi import init_factors
    from .ttm import TTMPlan, khat, ttm, ttm_scratch_len
    from .tensor import SparseTensor

    rng = np.random.default_rng(seed)
    # (generator, nnz, Ks): uniform coordinates and power-law stand-ins of FROSTT tensors other
    # than nell2 (the validation tensor stays out of sample)
    if quick:
        cases = [((3000, 800, 60), 20_000, (5, 10, 20)), ((300, 120, 40, 12), 8_000, (5, 10)),
                 ("nell1", 30_000, (5, 10, 20))]
        reps = 2
    else:
        cases = [((20000, 3000, 150), 100_000, (5, 10, 20)), ((2000, 400, 60), 200_000, (5, 10, 20)),
                 ((2000, 300, 80, 20), 50_000, (5, 10, 20)), ((600, 100, 40, 10), 100_000, (5, 10)),
                 ("nell1", 200_000, (5, 10, 20)), ("enron", 100_000, (5, 10, 20)),
                 ("delicious", 100_000, (5, 10))]
        reps = 3
    evict = np.ones((8 if quick else 32) * 2 ** 17)          # 8 / 32 MB written before each call
    rows, samples = [], []
    with threadpool_limits(limits=1):
        for dims, nnz, Ks in cases:
            T0 = _standin(dims, nnz, seed) if isinstance(dims, str) else _uniform_tensor(rng, dims, nnz)
            N, E = T0.nmodes, T0.nnz
            # uni-policy layout (one copy, plan over all of it) and the multi-policy worker's
            # layout (N copies concatenated, mode n's plan over the n-th copy: dist_hooi)
            TN = SparseTensor(np.concatenate([T0.coords] * N), np.concatenate([T0.values] * N), T0.dims,
                              sum_duplicates=False, check=False)
            layouts = [(T0, [TTMPlan.build(T0, n) for n in range(N)]),
                       (TN, [TTMPlan.build(TN, n, np.arange(n * E, (n + 1) * E)) for n in range(N)])]
            for T, plans in layouts:
                for k in Ks:
                    K = [k] * N
                    F = init_factors(T, K, "random", seed)
                    scratch = np.empty((1, max(ttm_scratch_len(K, n) for n in range(N))))
                    for n in range(N):
                        kh = khat(K, n)
                        ts = []
                        for _ in range(reps):                # cold: one call per mode per invocation
                            evict += 1.0
                            Z = np.empty((plans[n].nrows, kh))
                            t0 = time.perf_counter()
                            ttm(T, plans[n], F, out=Z, scratch=scratch)
                            ts.append(time.perf_counter() - t0)
                        R = plans[n].nrows
                        rows.append([E, E * kh, R * kh, (T.nnz - E) * kh])
                        samples.append(float(np.median(ts)))
    X, t = np.array(rows, dtype=float), np.array(samples)
    coef, err = _nnls_rel(X, t)
    return {"ttm_elem": float(coef[0]), "ttm_elem_khat": float(coef[1]), "ttm_row_khat": float(coef[2]),
            "ttm_local_khat": float(coef[3]),
            "_fit": {"samples": len(t), "median_rel_error": err,
                     "max_rel_error": float(np.max(np.abs(X @ coef - t) / t))}}


# ---- oracle and GEMM ------------------------------------------------------------------------
def calibrate_oracle(quick: bool = False, seed: int = 0) -> dict:
    """Z·x, Zᵀ·y (one query each) and Zᵀ·Y (core GEMM) on compact matrices."""
    from threadpoolctl import threadpool_limits

    rng = np.random.default_rng(seed)
    shapes = ([(2000, 100), (500, 400), (10000, 25), (300, 2000)] if quick else
              [(2000, 100), (20000, 100), (500, 400), (5000, 400), (10000, 25), (300, 2000), (2000, 8000)])
    reps = 10 if quick else 30
    mv, rmv, gm, feats = [], [], [], []
    with threadpool_limits(limits=1):
        for m, n in shapes:
            Z = rng.standard_normal((m, n))
            x, y = rng.standard_normal(n), rng.standard_normal(m)
            Y = rng.standard_normal((m, 10))
            mv.append(_median_time(lambda: Z @ x, reps))
            rmv.append(_median_time(lambda: Z.T @ y, reps))
            gm.append(_median_time(lambda: Z.T @ Y, max(3, reps // 3)))
            feats.append(m * n)
    X = np.stack([np.ones(len(feats)), np.array(feats, dtype=float)], axis=1)
    c_mv, e_mv = _nnls_rel(X, np.array(mv))
    c_rmv, e_rmv = _nnls_rel(X, np.array(rmv))
    Xg = np.stack([np.ones(len(feats)), 10.0 * np.array(feats, dtype=float)], axis=1)
    c_g, e_g = _nnls_rel(Xg, np.array(gm))
    return {"oracle_call": float(0.5 * (c_mv[0] + c_rmv[0])), "oracle_matvec_entry": float(c_mv[1]),
            "oracle_rmatvec_entry": float(c_rmv[1]), "gemm_madd": float(c_g[1]),
            "_fit": {"shapes": shapes, "median_rel_error": {"matvec": e_mv, "rmatvec": e_rmv, "gemm": e_g}}}


# ---- Lanczos --------------------------------------------------------------------------------
def _decaying(rng, m, n, rank):
    """An m × n matrix with a geometrically decaying spectrum plus small noise (HOOI-like)."""
    A = rng.standard_normal((m, rank)) * (0.8 ** np.arange(rank))
    return A @ rng.standard_normal((rank, n)) + 1e-3 * rng.standard_normal((m, n))


def calibrate_lanczos(quick: bool = False, seed: int = 0) -> dict:
    """Seconds per query of :func:`.lanczos.lanczos_svd` outside the oracle (time in the oracle
    subtracted), fitted as lanczos_query + lanczos_word·ncv·(m + n)."""
    from threadpoolctl import threadpool_limits

    from .lanczos import default_ncv, lanczos_svd

    rng = np.random.default_rng(seed)
    cases = ([(3000, 100, 5), (3000, 100, 10), (20000, 100, 10), (2000, 400, 20)] if quick else
             [(3000, 100, 5), (3000, 100, 10), (20000, 100, 10), (50000, 100, 10), (2000, 400, 20),
              (20000, 400, 20), (5000, 25, 5), (1000, 8000, 20)])
    feats, per_q, info = [], [], []
    with threadpool_limits(limits=1):
        for m, n, k in cases:
            Z = _decaying(rng, m, n, min(m, n, 4 * k))
            spent = [0.0]

            def mv(x):
                t0 = time.perf_counter()
                r = Z @ x
                spent[0] += time.perf_counter() - t0
                return r

            def rmv(y):
                t0 = time.perf_counter()
                r = Z.T @ y
                spent[0] += time.perf_counter() - t0
                return r

            best = None
            for _ in range(2 if quick else 3):
                spent[0] = 0.0
                t0 = time.perf_counter()
                res = lanczos_svd(mv, rmv, Z.shape, k, seed=seed)
                total = time.perf_counter() - t0
                over = (total - spent[0]) / res.queries
                best = over if best is None else min(best, over)
            ncv = default_ncv(k)
            feats.append(ncv * (m + n))
            per_q.append(best)
            info.append({"m": m, "n": n, "K": k, "queries": res.queries, "restarts": res.restarts})
    X = np.stack([np.ones(len(feats)), np.array(feats, dtype=float)], axis=1)
    coef, err = _nnls_rel(X, np.array(per_q))
    return {"lanczos_query": float(coef[0]), "lanczos_word": float(coef[1]),
            "_fit": {"cases": info, "median_rel_error": err}}


# ---- MPI ------------------------------------------------------------------------------------
def _mpiexec() -> Path | None:
    beside = Path(sys.executable).with_name("mpiexec")
    return beside if beside.exists() else None


def calibrate_mpi(quick: bool = False, ranks: int = 2, timeout: float = 120) -> dict:
    """α/β per pattern from :mod:`.mpi_microbench` at ``ranks`` ranks, as ``{"costs": {...},
    "raw": ...}``, or ``{"skipped": reason}`` (no mpiexec, a failed job, or oversubscription)."""
    mpiexec = _mpiexec()
    if mpiexec is None:
        return {"skipped": f"no mpiexec beside {sys.executable} (pip install mpi4py mpich)"}
    try:
        import mpi4py  # noqa: F401
    except Exception as exc:  # pragma: no cover
        return {"skipped": f"mpi4py unavailable: {exc}"}
    with tempfile.TemporaryDirectory(prefix="spbench-mb-") as d:
        out = Path(d) / "mb.json"
        cmd = [str(mpiexec), "-n", str(ranks), sys.executable, "-m", "mpi4py", "-m",
               "spbench.tucker.mpi_microbench", str(out)] + (["--quick"] if quick else [])
        env = dict(os.environ, OMP_NUM_THREADS="1", OPENBLAS_NUM_THREADS="1")
        try:
            proc = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, env=env)
        except subprocess.TimeoutExpired:
            return {"skipped": f"MPI micro-benchmark timed out after {timeout:.0f} s"}
        if proc.returncode != 0 or not out.exists():
            tail = (proc.stderr.strip().splitlines() or [""])[-1]
            return {"skipped": f"MPI micro-benchmark failed ({proc.returncode}): {tail}"}
        raw = json.loads(out.read_text())
    if raw.get("oversubscribed"):
        return {"skipped": f"{raw['ranks']} ranks on {raw['cores']} cores (oversubscribed): "
                           f"latencies are time slices, meaningless", "raw": raw}
    pat = raw["patterns"]
    costs = {"alpha_p2p": pat["pingpong"]["alpha"], "beta_p2p": pat["pingpong"]["beta"]}
    for name in ("allreduce", "alltoallv", "allgatherv"):
        costs[f"alpha_{name}"] = pat[name]["alpha"]
        costs[f"beta_{name}"] = pat[name]["beta"]
    oh = raw.get("oracle_overhead") or []
    if len(oh) >= 2:
        (l0, t0), (l1, t1) = (oh[0]["L"], oh[0]["seconds"]), (oh[-1]["L"], oh[-1]["seconds"])
        row = max((t1 - t0) / (l1 - l0), 0.0) if l1 != l0 else 0.0
        costs["dist_oracle_call"] = max(t0 - row * l0, 0.0)
        costs["dist_oracle_row"] = row
    return {"costs": costs, "ranks": raw["ranks"], "cores": raw["cores"], "library": raw.get("library"),
            "command": f"mpiexec -n {ranks} python -m mpi4py -m spbench.tucker.mpi_microbench OUT.json"
                       + (" --quick" if quick else ""),
            "raw": raw}


# ---- all ------------------------------------------------------------------------------------
def calibrate(quick: bool = False, *, mpi: bool = True, seed: int = 0) -> dict:
    """Every cost of :mod:`.model` on this machine (quick: ≈ 10–30 s, full: a few minutes)."""
    from spbench.machine import machine_facts

    t0 = time.perf_counter()
    costs, fits = {}, {}
    for name, fn in (("ttm", calibrate_ttm), ("oracle", calibrate_oracle), ("lanczos", calibrate_lanczos)):
        part = fn(quick=quick, seed=seed)
        fits[name] = part.pop("_fit")
        costs.update(part)
    mpi_part = calibrate_mpi(quick=quick) if mpi else {"skipped": "mpi=False"}
    if "costs" in mpi_part:
        costs.update(mpi_part["costs"])
    facts = machine_facts(with_mpi=False)
    return {
        "schema_version": SCHEMA_VERSION,
        "timestamp": datetime.now(timezone.utc).isoformat(timespec="seconds"),
        "quick": bool(quick),
        "threads": 1,
        "machine": facts,
        "costs": costs,
        "fits": fits,
        "mpi": {k: v for k, v in mpi_part.items() if k != "costs"},
        "calibration_seconds": time.perf_counter() - t0,
    }


def default_calibration_path() -> Path:
    """Where `spbench calibrate --experiment tucker` keeps this machine's costs."""
    import os
    import socket
    root = Path(os.environ.get("SPBENCH_DATA") or "~/.cache/spbench").expanduser()
    return root / "calibration" / f"tucker-{socket.gethostname()}.json"


def save(cal: dict, path) -> Path:
    """Write a calibration as JSON, atomically."""
    from spbench.results import atomic_write_text
    path = Path(path)
    atomic_write_text(path, json.dumps(cal, indent=1, sort_keys=True, default=str))
    return path


def load(path) -> dict:
    cal = json.loads(Path(path).read_text())
    if cal.get("schema_version") != SCHEMA_VERSION:
        raise ValueError(f"{path}: calibration schema {cal.get('schema_version')}, expected {SCHEMA_VERSION}")
    return cal


if __name__ == "__main__":   # python -m spbench.tucker.calibrate [--quick] [OUT.json]
    args = sys.argv[1:]
    quick = "--quick" in args
    rest = [a for a in args if a != "--quick"]
    result = calibrate(quick=quick)
    if rest:
        save(result, rest[0])
    print(json.dumps({"costs": result["costs"], "fits": result["fits"],
                      "mpi": {k: v for k, v in result["mpi"].items() if k != "raw"},
                      "seconds": result["calibration_seconds"]}, indent=1, default=str))
