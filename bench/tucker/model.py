"""Cost model of one distributed HOOI (:mod:`.dist_hooi`) for ``execution: simulate`` rows.

The model is built on the EXACT per-rank loads of a distribution (:func:`rank_loads`, from
:func:`.metrics.compute_metrics`' per-rank arrays and σ_n), never on averages, and on the
costs calibrated on this machine (:func:`.calibrate.calibrate`, ``costs``). Per mode n,
with K̂ = K̂_n, L = L_n (non-empty slices), Q = Q_n queries (default 4·K_n, §4.3; the dense
fallback of ``lanczos_svd`` when ncv ≥ min(L, K̂): min(L, K̂)), ncv = max(2·K_n, 10):

TTM      max_p [ttm_elem·|E_n^p| + ttm_elem_khat·|E_n^p|·K̂ + ttm_row_khat·R_n^p·K̂
                + ttm_local_khat·(H^p − |E_n^p|)·K̂],  H^p = elements p holds for all modes
         (Σ_n |E_n^p| multi-policy, |E^p| uni-policy), calibrated on cold calls (one per mode,
         as one invocation makes) in both layouts. Here it fits ≈ 0: N identical copies run as
         fast as one, while the worker measures multi-policy TTM 1.2–1.5× slower than
         uni-policy at equal |E_n^p| (not reproduced by the calibration: a known gap)
SVD      Q/2 · max_p R_n^p·K̂ · (oracle_matvec_entry + oracle_rmatvec_entry) + Q·oracle_call
         + Q·(dist_oracle_call + dist_oracle_row·L)   (DistOracle's own Python work; 0 when
         the MPI part of the calibration was skipped)
         + Q·(lanczos_query + lanczos_word·ncv·(L + K̂))   (the bases are replicated: every
         rank does this, so it does not shrink with P)
         + the oracle communication below (the measured ``svd_time`` includes it too)
oracle   per Z·x (Q/2 of them): Alltoallv of the shared rows' partial sums, sharers → owners,
comm     A(x_send_p, x_recv_p, peers_p), then the Allgatherv of owned rows, every rank receiving
         L − own_p words: ⌈log2 P⌉·α_allgatherv + β_allgatherv·max_p(L − own_p);
         per y·Z (Q/2): the reverse Alltoallv, then an Allreduce of K̂ words:
         ⌈log2 P⌉·α_allreduce + 2(P−1)/P·β_allreduce·K̂ (Rabenseifner; at P = 2: α + β·K̂)
factor   one Alltoallv, words ×K_n: A(fm_send_p, fm_recv_p, peers_p)
core     (last mode) compute max_p R^p·K̂·K_N·gemm_madd; y·Z path with width K_N: the reverse
         Alltoallv ×K_N, Allreduce of K_N·K̂ words

A(send, recv, peers) = α_alltoallv·max(1, max_p peers_p) + β_alltoallv·max_p max(send_p, recv_p)
(an Alltoallv costs one latency per peer a rank exchanges with, the slowest rank's words;
calibrated at 2 ranks, where one peer = one latency). Every communication term is 0 at P = 1.

Outputs (seconds, × invocations): ``ttm_time`` (Σ_n TTM), ``svd_time`` (Σ_n SVD compute +
Lanczos + oracle comm, as the worker's timer), ``comm_time`` (oracle comm + factor transfer +
core comm, as the worker's clock), ``hooi_time`` = ttm + svd + factor transfer + core, and
``modes`` (per-mode breakdown). Known gaps: waiting caused by imbalance (a fast rank waits in the
first collective after TTM) is counted by the measured comm/svd timers but only implied here by
the max over ranks of each phase; the worker's ``comm_time`` at one rank is not 0 (MPI calls on
one rank, ~5 µs each: the model counts them inside ``dist_oracle_call``, i.e. in svd_time); the
worker takes the max over ranks of per-rank totals, the model the sum over phases of maxima (an
upper bound of it); invocations after the first run warm caches, the model charges each as the
first (cold) one.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from .comm import sharer_pairs
from .lanczos import default_ncv
from .tensor import unique_sorted

__all__ = ["ModeLoad", "rank_loads", "predict_from_loads", "predict_hooi", "validate", "MODEL_VERSION"]

MODEL_VERSION = 1


@dataclass
class ModeLoad:
    """Per-rank loads of one mode (arrays of length P; words are float64 counts per product)."""

    K: int
    Khat: int
    L: int                         # non-empty slices L_n
    e: np.ndarray                  # |E_n^p|
    r: np.ndarray                  # R_n^p
    x_send: np.ndarray             # partial sums p sends to owners per Z·x (= what it receives per y·Z)
    x_recv: np.ndarray             # partial sums p receives as owner per Z·x
    x_peers: np.ndarray            # distinct ranks p exchanges oracle words with
    own: np.ndarray                # rows p owns (σ_n(l) = p)
    fm_send: np.ndarray            # factor ROWS p sends (× K words)
    fm_recv: np.ndarray            # factor rows p receives
    fm_peers: np.ndarray
    Q: int | None = None           # Lanczos queries (None: 4·K, or the dense fallback's count)
    held: np.ndarray | None = None  # H^p: elements p holds for all modes (None: = e)
    extra: dict = field(default_factory=dict)

    @property
    def P(self) -> int:
        return int(self.e.shape[0])


def _peers(a: np.ndarray, b: np.ndarray, P: int) -> np.ndarray:
    """Distinct partners per rank over the directed pairs a → b (both directions count)."""
    if a.size == 0:
        return np.zeros(P, dtype=np.int64)
    keys = unique_sorted(np.concatenate([a * P + b, b * P + a]).astype(np.int64))
    return np.bincount(keys // P, minlength=P).astype(np.int64)


def rank_loads(tensor, dist, K, *, Q=None, metrics=None) -> list[ModeLoad]:
    """Exact per-rank loads of every mode of ``dist`` on ``tensor`` (``Q``: int or per mode;
    ``metrics``: a precomputed :func:`.metrics.compute_metrics` result for the same K)."""
    from .metrics import compute_metrics

    m = compute_metrics(tensor, dist, K) if metrics is None else metrics
    N, P = tensor.nmodes, int(dist.nparts)
    Qs = [None] * N if Q is None else ([int(Q)] * N if np.ndim(Q) == 0 else [int(q) for q in Q])
    if dist.multi_policy:
        held = sum(np.asarray(m.details[n]["e_per_rank"], dtype=np.int64) for n in range(N))
    else:
        held = np.asarray(m.details[0]["e_per_rank"], dtype=np.int64)
    out = []
    for n in range(N):
        d = m.details[n]
        idx = tensor.coords[:, n]
        pol = dist.policy(n)
        sigma = np.asarray(m.owners[n]).astype(np.int64)
        s, p = sharer_pairs(idx, pol, P)
        own_of = sigma[s]
        shared = own_of != p
        xs, xo = p[shared], own_of[shared]
        nonempty = np.flatnonzero(sigma >= 0)
        # factor transfer: (slice, rank) pairs of ranks needing F_n[l] for the other modes' TTMs
        if N == 1:
            keys = np.zeros(0, dtype=np.int64)
        elif dist.multi_policy:
            keys = unique_sorted(np.concatenate([idx * P + dist.policy(j) for j in range(N) if j != n]))
        else:
            keys = s * P + p
        kl, kq = keys // P, keys % P
        need = kq != sigma[kl]
        fo, fq = sigma[kl][need], kq[need]
        out.append(ModeLoad(
            K=int(d["K"]), Khat=int(d["Khat"]), L=int(m.modes[n]["slices"]),
            e=np.asarray(d["e_per_rank"], dtype=np.int64), r=np.asarray(d["r_per_rank"], dtype=np.int64),
            x_send=np.bincount(xs, minlength=P).astype(np.int64),
            x_recv=np.bincount(xo, minlength=P).astype(np.int64),
            x_peers=_peers(xs, xo, P),
            own=np.bincount(sigma[nonempty], minlength=P).astype(np.int64),
            fm_send=np.bincount(fo, minlength=P).astype(np.int64),
            fm_recv=np.bincount(fq, minlength=P).astype(np.int64),
            fm_peers=_peers(fo, fq, P), Q=Qs[n], held=held,
            extra={"r_sum": int(m.modes[n]["r_sum"]), "svd_volume_per_product": int(xs.size)}))
    return out


def _costs(costs: dict) -> dict:
    return costs.get("costs", costs)


def _need(c: dict, keys, P: int) -> None:
    missing = [k for k in keys if k not in c]
    if missing:
        raise KeyError(f"cost model: missing costs {missing}" + (
            " (the MPI micro-benchmark was skipped in calibration: the model predicts P = 1 only)"
            if P > 1 and any(k.startswith(("alpha", "beta")) for k in missing) else ""))


def _log2(P: int) -> int:
    return int(math.ceil(math.log2(P))) if P > 1 else 0


def _alltoallv(c, send, recv, peers, P, width=1) -> float:
    if P <= 1:
        return 0.0
    words = float(np.max(np.maximum(send, recv), initial=0)) * width
    return c["alpha_alltoallv"] * max(1, int(np.max(peers, initial=0))) + c["beta_alltoallv"] * words


def _allreduce(c, words, P) -> float:
    if P <= 1:
        return 0.0
    return _log2(P) * c["alpha_allreduce"] + 2.0 * (P - 1) / P * c["beta_allreduce"] * words


def _allgatherv(c, recv_max, P) -> float:
    if P <= 1:
        return 0.0
    return _log2(P) * c["alpha_allgatherv"] + c["beta_allgatherv"] * recv_max


def default_queries(K: int, L: int, Khat: int, ncv: int | None = None) -> int:
    """Q_n of one Lanczos run without restarts: 2·ncv (= 4·K_n for K_n ≥ 5), or the dense
    fallback's min(L, K̂) queries when ncv ≥ min(L, K̂) (``lanczos_svd``)."""
    ncv = default_ncv(K) if ncv is None else int(ncv)
    small = min(L, Khat)
    return int(small) if ncv >= small else 2 * ncv


def predict_from_loads(loads: list[ModeLoad], costs: dict, *, invocations: int = 1) -> dict:
    """Modelled seconds from per-rank loads (see the module docstring for every term)."""
    c = _costs(costs)
    P = loads[0].P
    _need(c, ("ttm_elem", "ttm_elem_khat", "ttm_row_khat", "oracle_call", "oracle_matvec_entry",
              "oracle_rmatvec_entry", "gemm_madd", "lanczos_query", "lanczos_word"), P)
    if P > 1:
        _need(c, ("alpha_allreduce", "beta_allreduce", "alpha_alltoallv", "beta_alltoallv",
                  "alpha_allgatherv", "beta_allgatherv"), P)
    modes = []
    for ld in loads:
        kh = ld.Khat
        Q = int(ld.Q) if ld.Q is not None else default_queries(ld.K, ld.L, kh)
        ncv = default_ncv(ld.K)
        held = ld.e if ld.held is None else ld.held
        ttm_p = (c["ttm_elem"] * ld.e + c["ttm_elem_khat"] * ld.e * kh + c["ttm_row_khat"] * ld.r * kh
                 + c.get("ttm_local_khat", 0.0) * (held - ld.e) * kh)
        ttm_t = float(np.max(ttm_p, initial=0.0))
        rk = float(np.max(ld.r, initial=0)) * kh
        oracle_t = (Q / 2 * rk * (c["oracle_matvec_entry"] + c["oracle_rmatvec_entry"]) + Q * c["oracle_call"]
                    + Q * (c.get("dist_oracle_call", 0.0) + c.get("dist_oracle_row", 0.0) * ld.L))
        lanczos_t = Q * (c["lanczos_query"] + c["lanczos_word"] * ncv * (ld.L + kh))
        gather_recv = float(np.max(ld.L - ld.own, initial=0))
        a2a = _alltoallv(c, ld.x_send, ld.x_recv, ld.x_peers, P)        # same pattern both ways
        comm_x = a2a + _allgatherv(c, gather_recv, P)
        comm_y = a2a + _allreduce(c, kh, P)
        oracle_comm = Q / 2 * (comm_x + comm_y)
        fm_t = _alltoallv(c, ld.fm_send, ld.fm_recv, ld.fm_peers, P, width=ld.K)
        modes.append({"ttm_time": ttm_t, "oracle_time": oracle_t, "lanczos_time": lanczos_t,
                      "oracle_comm_time": oracle_comm, "fm_time": fm_t,
                      "svd_time": oracle_t + lanczos_t + oracle_comm, "queries": Q})
    last = loads[-1]
    core_compute = float(np.max(last.r, initial=0)) * last.Khat * last.K * c["gemm_madd"]
    core_comm = (_alltoallv(c, last.x_recv, last.x_send, last.x_peers, P, width=last.K)
                 + _allreduce(c, last.K * last.Khat, P))
    ttm = sum(m["ttm_time"] for m in modes)
    svd = sum(m["svd_time"] for m in modes)
    fm = sum(m["fm_time"] for m in modes)
    comm = sum(m["oracle_comm_time"] + m["fm_time"] for m in modes) + core_comm
    core = core_compute + core_comm
    inv = int(invocations)
    return {"hooi_time": inv * (ttm + svd + fm + core), "ttm_time": inv * ttm, "svd_time": inv * svd,
            "comm_time": inv * comm, "fm_time": inv * fm, "core_time": inv * core,
            "ranks": P, "invocations": inv, "model_version": MODEL_VERSION, "modes": modes}


def predict_hooi(tensor, dist, K, costs: dict, *, queries=None, invocations: int = 1, metrics=None) -> dict:
    """Modelled ``hooi_time``, ``ttm_time``, ``svd_time``, ``comm_time`` (seconds) of
    ``invocations`` HOOI invocations of ``dist`` on ``tensor`` with core sizes ``K``;
    ``queries``: measured Lanczos queries per mode (per invocation), default 4·K_n."""
    return predict_from_loads(rank_loads(tensor, dist, K, Q=queries, metrics=metrics), costs,
                              invocations=invocations)


# ---- validation against the measured MPI worker -------------------------------------------
TIME_KEYS = ("hooi_time", "ttm_time", "svd_time", "comm_time")


def _measure(tensor, checksum: str, schemes, ranks: int, K, *, seed: int, invocations: int,
             timeout: float, repeats: int) -> dict:
    """Run the real worker (launch.export_tensor + a SPEC.json as launch._launch writes) at
    ``ranks``; returns {(scheme, repeat): row}."""
    import json
    import os
    import subprocess
    import sys
    import tempfile
    from pathlib import Path

    from .launch import default_launcher, export_tensor, launcher_command

    tdir = export_tensor(tensor, checksum)
    with tempfile.TemporaryDirectory(prefix="spbench-validate-") as d:
        tasks = [{"row": {"run_id": f"{s}-{ranks}-{i}"}, "scheme": s, "K": K, "params": {}, "seed": seed,
                  "invocations": invocations, "init": "random"} for s in schemes for i in range(repeats)]
        spec = Path(d) / "spec.json"
        spec.write_text(json.dumps({"tensor_dir": str(tdir), "results_dir": d, "threads": 1, "tasks": tasks}))
        cmd = launcher_command(default_launcher(), ranks) + [sys.executable, "-m", "mpi4py", "-m",
                                                             "spbench.tucker.worker", str(spec)]
        env = dict(os.environ, OMP_NUM_THREADS="1", OPENBLAS_NUM_THREADS="1")
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, env=env)
        if proc.returncode != 0:
            raise RuntimeError(f"worker at {ranks} ranks failed ({proc.returncode}): {proc.stderr[-2000:]}")
        return {(t["scheme"], i % repeats): json.loads((Path(d) / f"{t['row']['run_id']}.json").read_text())
                for i, t in enumerate(tasks)}


def validate(tensor_specs, schemes, ranks_list, costs: dict, *, K=10, seed: int = 0, invocations: int = 1,
             repeats: int = 3, timeout: float = 600):
    """Measured (the MPI worker) vs modelled times, one row per (tensor, scheme, ranks).

    ``tensor_specs``: ``{label: SparseTensor}`` or ``[(label, SparseTensor), ...]``. Measured
    times are the medians over ``repeats`` runs in one MPI job; the model gets the measured
    Lanczos queries. ``rel_error_X`` = (predicted − measured) / measured."""
    import hashlib

    import pandas as pd

    from .schemes import get_scheme

    items = tensor_specs.items() if isinstance(tensor_specs, dict) else tensor_specs
    rows = []
    for label, tensor in items:
        h = hashlib.sha256()
        h.update(np.ascontiguousarray(tensor.coords).tobytes())
        h.update(np.ascontiguousarray(tensor.values).tobytes())
        checksum = "validate-" + h.hexdigest()[:24]
        for P in ranks_list:
            measured = _measure(tensor, checksum, schemes, P, K, seed=seed, invocations=invocations,
                                timeout=timeout, repeats=repeats)
            for s in schemes:
                runs = [measured[(s, i)] for i in range(repeats)]
                dist = get_scheme(s)(tensor, P, seed=seed)
                queries = [int(q) // invocations for q in runs[0]["queries"]]
                pred = predict_hooi(tensor, dist, K, costs, queries=queries, invocations=invocations)
                row = {"tensor": label, "scheme": s, "ranks": P, "K": K, "queries": queries}
                for k in TIME_KEYS:
                    meas = float(np.median([r[k] for r in runs]))
                    row[f"measured_{k}"] = meas
                    row[f"predicted_{k}"] = pred[k]
                    row[f"rel_error_{k}"] = (pred[k] - meas) / meas if meas > 0 else (0.0 if pred[k] == 0 else np.inf)
                row["rel_error"] = row["rel_error_hooi_time"]
                rows.append(row)
    return pd.DataFrame(rows)


def main(argv=None) -> int:
    """``python -m spbench.tucker.model CAL.json [--tensor nell2] [--nnz 200000] [--ranks 1,2]
    [--schemes coarse,medium,lite] [-K 10] [--repeats 3] [--csv OUT.csv]``: the validation
    table of a calibration (``python -m spbench.tucker.calibrate [--quick] CAL.json``) on a
    stand-in tensor."""
    import argparse
    import json

    import pandas as pd

    from spbench.datasets.tensor_registry import standin, standin_label

    ap = argparse.ArgumentParser(prog="python -m spbench.tucker.model")
    ap.add_argument("calibration")
    ap.add_argument("--tensor", default="nell2")
    ap.add_argument("--nnz", type=int, default=200_000)
    ap.add_argument("--ranks", default="1,2")
    ap.add_argument("--schemes", default="coarse,medium,lite")
    ap.add_argument("-K", type=int, default=10)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--csv")
    a = ap.parse_args(argv)
    cal = json.loads(open(a.calibration).read())
    T = standin(a.tensor, nnz=a.nnz)
    df = validate({standin_label(a.tensor, nnz=a.nnz): T}, a.schemes.split(","),
                  [int(r) for r in a.ranks.split(",")], cal, K=a.K, repeats=a.repeats)
    if a.csv:
        df.to_csv(a.csv, index=False)
    with pd.option_context("display.width", 250, "display.max_columns", 40):
        cols = ["scheme", "ranks"] + [f"{w}_{k}" for k in TIME_KEYS for w in ("measured", "predicted")]
        print(df[cols].to_string(index=False, float_format=lambda x: f"{x:.4f}"))
        print(df[["scheme", "ranks", "queries"] + [f"rel_error_{k}" for k in TIME_KEYS]]
              .to_string(index=False, float_format=lambda x: f"{x:+.2f}"))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
