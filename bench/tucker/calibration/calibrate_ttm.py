"""Calibration of the two local TTM kernels of the Tucker cost model (:mod:`.model`), split from
:mod:`.calibrate` (whose docstring gives both fits): the element-wise kernel of the paper's
Appendix A (``ttm: paper``) and the compressed-sparse-fiber kernel (``ttm: csf``, the paper's §8
future work), timed cold on generated tensors (uniform, and power-law stand-ins other than nell2,
the validation tensor) at one thread."""
from __future__ import annotations

import time
from pathlib import Path

import numpy as np

from spbench.tucker.calibration.cost_fit import nnls_relative

__all__ = ["calibrate_ttm", "calibrate_ttm_csf", "l2_cache_bytes"]


def _uniform_tensor(rng, dims, nnz):
    """Uniform coordinates, duplicates summed, elements in random order (as the worker holds
    them: in the order of the input, not sorted by any mode; sorted ones run faster)."""
    from spbench.datasets.sparse_tensor import SparseTensor
    coords = np.stack([rng.integers(0, L, size=nnz) for L in dims], axis=1)
    T = SparseTensor(coords, rng.random(nnz) + 0.5, dims)
    order = rng.permutation(T.nnz)
    return SparseTensor(T.coords[order], T.values[order], dims, sum_duplicates=False, check=False)


def _standin(name, nnz, seed):
    from spbench.datasets.tensor_registry import standin
    return standin(name, nnz=nnz, seed=seed)


# ---- cases ------------------------------------------------------------------------------------
def _ttm_cases(quick: bool) -> tuple[list, int]:
    """(generator, nnz, Ks) of the TTM fits and the rounds (every case timed once per round, the
    median kept): uniform coordinates and power-law stand-ins of FROSTT tensors other than nell2 (the
    validation tensor stays out of sample)."""
    if quick:
        cases = [((3000, 800, 60), 20_000, (5, 10, 20)), ((300, 120, 40, 12), 8_000, (5, 10)),
                 ("nell1", 30_000, (5, 10, 20))]
        reps = 2
    else:
        cases = [((20000, 3000, 150), 100_000, (5, 10, 20)), ((2000, 400, 60), 200_000, (5, 10, 20)),
                 ((2000, 300, 80, 20), 50_000, (5, 10, 20)), ((600, 100, 40, 10), 100_000, (5, 10)),
                 ("nell1", 200_000, (5, 10, 20)), ("enron", 100_000, (5, 10, 20)),
                 ("delicious", 100_000, (5, 10)), ((400_000, 300_000, 1_000_000), 2_000_000, (10,)),
                 ("nell1", 2_000_000, (10,)), ((20000, 3000, 150), 2_000_000, (10,)),
                 ((400_000, 300_000, 1_000_000), 100_000, (10,))]
        reps = 5
    return cases, reps


def _case_tensors(quick: bool, seed: int):
    """The tensors of :func:`_ttm_cases` in turn, with their K values."""
    rng = np.random.default_rng(seed)
    for dims, nnz, Ks in _ttm_cases(quick)[0]:
        yield (_standin(dims, nnz, seed) if isinstance(dims, str) else _uniform_tensor(rng, dims, nnz)), Ks


def l2_cache_bytes() -> float:
    """The per-core L2 cache of cpu0 from sysfs (1 MiB when the system does not say)."""
    units = {"K": 1024, "M": 1024 ** 2, "G": 1024 ** 3}
    try:
        text = Path("/sys/devices/system/cpu/cpu0/cache/index2/size").read_text().strip()
        return float(int(text.rstrip("KMG")) * units.get(text[-1], 1))
    except (OSError, ValueError):
        return float(2 ** 20)


def _cold_sample(tensor, plan, F, kh: int, scratch, evict: np.ndarray) -> float:
    """Seconds of one cold TTM call, as in a one-invocation HOOI: ``evict`` (8 / 32 MB) written
    before it, then the heap's free pages handed back (:func:`spbench.tucker.hooi.loop.return_free_memory`,
    as HOOI does before each TTM) and a fresh Z, so its first writes fault pages in as they do there."""
    from spbench.tucker.hooi.loop import return_free_memory
    from spbench.tucker.hooi.ttm import ttm

    evict += 1.0
    return_free_memory()
    Z = np.empty((plan.nrows, kh))
    t0 = time.perf_counter()
    ttm(tensor, plan, F, out=Z, scratch=scratch)
    return time.perf_counter() - t0


def _cold_medians(samples: list, rounds: int) -> np.ndarray:
    """Median seconds of each (tensor, plan, F, kh, scratch, evict) case over ``rounds`` rounds
    visiting every case in turn (:func:`spbench.machine.timing.interleaved_medians`)."""
    from functools import partial

    from spbench.machine.timing import interleaved_medians

    return np.array(interleaved_medians([partial(_cold_sample, *case) for case in samples], rounds, warmup=0))


def calibrate_ttm(quick: bool = False, seed: int = 0) -> dict:
    """Fit of the element-wise TTM kernel (``ttm: paper``) per mode on generated tensors (see
    the module docstring)."""
    from threadpoolctl import threadpool_limits

    from spbench.tucker.hooi.factor_start import init_factors
    from spbench.tucker.hooi.ttm import TTMPlan, khat, ttm_scratch_len
    from spbench.datasets.sparse_tensor import SparseTensor

    reps = _ttm_cases(quick)[1]
    evict = np.ones((8 if quick else 32) * 2 ** 17)
    rows, samples = [], []
    with threadpool_limits(limits=1):
        for T0, Ks in _case_tensors(quick, seed):
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
                        kh, R = khat(K, n), plans[n].nrows
                        rows.append([E, E * kh, R * kh, (T.nnz - E) * kh, R])
                        samples.append((T, plans[n], F, kh, scratch, evict))
        t = _cold_medians(samples, reps)
    X = np.array(rows, dtype=float)
    coef, err = nnls_relative(X, t)
    return {"ttm_elem": float(coef[0]), "ttm_elem_khat": float(coef[1]), "ttm_row_khat": float(coef[2]),
            "ttm_local_khat": float(coef[3]), "ttm_row": float(coef[4]),
            "_fit": {"samples": len(t), "median_rel_error": err,
                     "max_rel_error": float(np.max(np.abs(X @ coef - t) / t)),
                     "large_rel_errors": [float(v) for v in ((X @ coef - t) / t)[X[:, 0] >= 1e6]]}}


def calibrate_ttm_csf(quick: bool = False, seed: int = 0) -> dict:
    """Fit of the CSF TTM kernel (``ttm: csf``) per mode on the tensors of :func:`calibrate_ttm`,
    trees built per K as the worker builds them (module docstring)."""
    from threadpoolctl import threadpool_limits

    from spbench.tucker.hooi.csf import CSFPlan, gathers_beyond_cache, tree_work
    from spbench.tucker.hooi.factor_start import init_factors
    from spbench.tucker.hooi.ttm import khat, ttm_scratch_len
    from spbench.datasets.sparse_tensor import unique_sorted

    reps = _ttm_cases(quick)[1]
    evict = np.ones((8 if quick else 32) * 2 ** 17)
    cache = l2_cache_bytes()
    rows, samples = [], []
    with threadpool_limits(limits=1):
        for T, Ks in _case_tensors(quick, seed):
            N = T.nmodes
            held = [unique_sorted(T.coords[:, j]).size for j in range(N)]     # rows read at random
            for k in Ks:
                K = [k] * N
                F = init_factors(T, K, "random", seed)
                scratch = np.empty((1, max(ttm_scratch_len(K, n) for n in range(N))))
                for n in range(N):
                    plan = CSFPlan.build(T, n, K=K)
                    kh, R = khat(K, n), plan.nrows
                    rows.append([*tree_work(plan.order, plan.nodes, K), R * kh, R,
                                 gathers_beyond_cache(plan.order, plan.nodes, K, held, cache)])
                    samples.append((None, plan, F, kh, scratch, evict))
        t = _cold_medians(samples, reps)
    X = np.array(rows, dtype=float)
    coef, err = nnls_relative(X, t)
    names = ("ttm_csf_leaf", "ttm_csf_flop", "ttm_csf_node", "ttm_csf_row_khat", "ttm_csf_row", "ttm_csf_miss")
    rel = (X @ coef - t) / t
    return {**{name: float(v) for name, v in zip(names, coef)}, "ttm_cache_bytes": cache,
            "_fit": {"samples": len(t), "median_rel_error": err, "max_rel_error": float(np.max(np.abs(rel))),
                     "large_rel_errors": [float(v) for v in rel[X[:, 0] >= 1e7]]}}
