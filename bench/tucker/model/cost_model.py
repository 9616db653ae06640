"""Cost model of one distributed HOOI (:mod:`.hooi`, one loop for P = 1 and MPI) for
``execution: simulate`` rows and for the paper-scale speed-ups.

Built on the EXACT per-rank loads of a distribution (:func:`.metrics.mode_counts`, one pass;
:func:`loads_from_counts`), never on averages, and on the costs calibrated on this machine
(:func:`.calibrate.calibrate`, ``costs``). Per mode n, K̂ = K̂_n, K = K_n, rank p with |E_n^p|
elements, R^p = R_n^p shared slices, own^p owned rows (σ_n(l) = p), s^p/r^p partial sums it
sends/receives per Z·x:

TTM      ``ttm: csf`` (the default; :mod:`.csf`): from the tree rank p builds of its elements
         (:func:`.csf.rank_nodes`: its level order and nodes per level, exact, without building
         it) max_p [ttm_csf_leaf·(leaf flops, ≈ 2·|E^p|·K_leaf) + ttm_csf_flop·(flops above
                the leaves) + ttm_csf_node·(internal nodes) + ttm_csf_row_khat·R^p·K̂
                + ttm_csf_row·R^p + ttm_csf_miss·(factor-row reads beyond a cache of
                ttm_cache_bytes, the factor rows p holds)]
         (:func:`.csf.tree_work`: leaf sums along fibers, one partial Kronecker product per node;
         :func:`.csf.gathers_beyond_cache`);
         ``ttm: paper`` (Appendix A's element-wise kernel):
         max_p [ttm_elem·|E^p| + ttm_elem_khat·|E^p|·K̂ + ttm_row·R^p + ttm_row_khat·R^p·K̂
                + ttm_local_khat·(H^p − |E^p|)·K̂],  H^p = elements p holds for all modes.
SVD      the Lanczos run of :func:`.lanczos.lanczos_svd` with its left vectors at the owners
         (:func:`lanczos_steps`: ``paper`` = ncv = 2K steps, no restart, Q = 4K queries;
         ``converged`` = ncv = max(2K, 10) with thick restarts, the measured Q). Step j of Q/2:
         Z·x     max_p [oracle_matvec_entry(8·R^p·K̂)·R^p·K̂ + dist_oracle_row·(R^p + r^p)   (the oracle's
                  index work on its shared rows) + own^p·(lanczos_left_word(8·own^p·ncv)·j
                  + lanczos_left_row)] (classical Gram–Schmidt twice over the OWNED rows: 4 passes over
                  own^p × j; the cost per word read at the bytes of the rank's left basis from the
                  calibration's ladder, ``lanczos_left_bytes``: a pass streams the basis from the cache
                  level it lives in)
                 + A(s, r, peers) + Allreduce(j) + Allreduce(j + 1)   (one Allreduce(1) at j = 0)
         y·Z     max_p [oracle_rmatvec_entry(8·R^p·K̂)·R^p·K̂ + dist_oracle_row·(R^p + r^p)]
                 (the products' cost per entry read at the bytes of the rank's Z from the
                 calibration's ladder, :func:`entry_cost`: a product streams Z from the cache
                 level it lives in; the cache the ranks of a node share is not modelled)
                 + lanczos_right_word·K̂·(j + 1) + lanczos_right_row·K̂   (replicated right GS)
                 + A(r, s, peers) + Allreduce(K̂)
         per query: oracle_call + dist_oracle_call + dist_query_context + lanczos_query (at P = 1
         the oracle is the products alone and the steps are compiled: lanczos_local_query instead);
         at the end: max_p own^p·ncv·K·lanczos_ritz_madd (U·P) + K̂·ncv·K·gemm_madd (V·Qᵀ);
         each restart: max_p own^p·ncv·keep·lanczos_ritz_madd.
         Dense fallback (ncv ≥ min(L, K̂)): min(L, K̂) oracle queries, then TSQR (K̂ ≤ L:
         gemm_madd·(2·own^p·K̂² + 2·P·K̂³), an Allgatherv of K̂² words per rank) or the SVD of
         the L replicated rows (gemm_madd·4·L²·K̂). Nothing is proportional to L_n per rank
         except through own^p and R^p.
factor   Alltoallvs of column blocks, words ×K: A(fm_send, fm_recv, fm_peers) with α once per block
         (:data:`.hooi.loop.TRANSFER_WORDS` words per buffer; one block at the stand-ins' sizes)
core     (last mode) max_p R^p·K̂·K·gemm_madd; the y·Z path with K columns: A(r, s, peers)×K,
         Allreduce of K·K̂ words

A(send, recv, peers) = α_alltoallv·max(1, max_p peers_p) + β_alltoallv·max_p max(send_p, recv_p);
Allreduce(w) = ⌈log2 P⌉·α_allreduce + 2(P−1)/P·β_allreduce·w (Rabenseifner; at P = 2: α + β·w).
Each α is read at the working set of the step before the message (:func:`working_set`: the largest
rank's Z, left and right Lanczos bases of the mode, in bytes; the factor transfer and the core's
messages at their mode's) from the micro-benchmark's ladder (``alpha_bytes``, :func:`alpha_cost`):
a call after a step that stayed in L2 finds MPI's own buffers there, one after a step streaming
beyond it finds them in memory; the rungs are measured, never fitted to the validation tensors.
To each α its pattern's ``alpha_*_context``: what a call costs inside HOOI beyond the micro-benchmark,
measured on the worker at 2 ranks on the calibration's own tensor (:mod:`.calibration.in_context`).
Every communication term is 0 at P = 1. Steps are synchronized by their collectives, so the SVD
is the sum over steps of the slowest rank's step. ``messages``: per message term, the calls, the
words (the largest rank's) and their α and β seconds, exactly the term's charge (the worker tallies
the same calls and words, :meth:`.hooi.loop._Clock.message`). ``wait_time`` (not in ``hooi_time``):
the largest over ranks of the seconds a rank's own work leaves it waiting for the slowest rank of
each phase (each mode's TTM, each Lanczos step, the core's product): what the measured ranks spend
inside their messages beyond the transfer (tucker-lite §7.2's load imbalance).

Outputs (seconds, × invocations), the partition of the measured rows (:data:`.hooi.PARTITION`):
``ttm_time`` (the TTM terms), ``svd_time`` (the Lanczos runs' local work: every SVD term above
but the messages), ``comm_time`` (every message: the oracle's Alltoallvs, the Lanczos
Allreduces, the dense fallback's Allgatherv, the factor transfers, the core's exchange and
Allreduce), ``other_time`` (the core's local product), and ``hooi_time``, their sum. Beside
them: ``fm_time`` (the factor transfers, within ``comm_time``), ``core_time`` (the core, product
and messages), ``modes`` (per mode) and ``terms`` (each named term summed over modes: which ones
dominate; :data:`TERM_COMPONENT` says which component each is part of). Known gaps: the waiting a
rank's own comm timer holds is here the max over ranks of each phase (and ``wait_time``; the
validation tells it apart, :func:`.calibration.model_validation.measured_components`); ranks of one
node streaming their Z at once share its memory bandwidth, which the one-process ladder does not see;
the memory a virtual machine's host takes back: on this VM (virtio-balloon free-page reporting) a Z
of gigabytes written into memory freed a second or more before costs its host's backing again
(flickr's 2.2 GB mode-1 Z, one process: 0.78 s right after the last free, 2.9 s after 1 s idle, 5.2 s
after 10 s, 0.60 s pre-touched; in the worker 3.3 s in every first invocation and 1.2 s in a second
one, none visible at 2 ranks, each rank's Z a part of it). It is not charged: it is the host's, not
HOOI's work, it depends on how long the memory sat idle, not on the work, and a per-byte charge that
fits one rank puts two ranks' TTM off by more than the term; nor is it hidden by an untimed warm-up
invocation in the validation, which leaves half of it (tucker-lite §7.2 times one invocation of
several, and the worker's second invocation still pays it).
"""
from __future__ import annotations

import math

import numpy as np

from spbench.tucker.hooi.loop import PARTITION
from spbench.tucker.hooi.lanczos import LANCZOS_MODES, default_ncv, paper_ncv
from spbench.tucker.hooi.variants import TTM_KINDS
from spbench.tucker.model.mode_load import ModeLoad, khat_of as _khat

__all__ = ["ModeLoad", "loads_from_counts", "csf_work", "rank_loads", "lanczos_steps", "predict_from_loads",
           "predict_hooi", "entry_cost", "alpha_cost", "working_set", "CONTEXT_COSTS",
           "MODEL_VERSION", "COMPUTE_COSTS", "TTM_COSTS", "SVD_COSTS", "MPI_COSTS",
           "TERM_COMPONENT", "COST_GROUPS", "COST_SIZES", "cost_group", "scale_costs", "model_groups"]

#: 4: svd_time is the Lanczos runs' local work (its messages are in comm_time only), other_time the
#: core's product, and the four add up to hooi_time; 5: the oracle's cost per entry by Z's size;
#: 6: each message's α by the working set of the step before it, the left Gram–Schmidt's cost per
#: word by the size of the rank's left basis; 7: each α and each query at P > 1 plus what it costs
#: inside HOOI beyond the micro-benchmarks (``*_context``), the messages timed without their packing
MODEL_VERSION = 7
#: the component of hooi_time (:data:`.hooi.PARTITION`) each named term is part of
TERM_COMPONENT = {"ttm": "ttm_time", "oracle_products": "svd_time", "oracle_index": "svd_time",
                  "lanczos_left": "svd_time", "lanczos_right": "svd_time", "query_calls": "svd_time",
                  "dense_fallback": "svd_time", "oracle_alltoallv": "comm_time", "svd_allreduce": "comm_time",
                  "dense_allgatherv": "comm_time", "factor_transfer": "comm_time", "core_comm": "comm_time",
                  "core_product": "other_time"}
#: the costs of each local TTM kernel (config key ``ttm``)
TTM_COSTS = {"csf": ("ttm_csf_leaf", "ttm_csf_flop", "ttm_csf_node", "ttm_csf_row_khat", "ttm_csf_row",
                     "ttm_csf_miss", "ttm_cache_bytes"),
             "paper": ("ttm_elem", "ttm_elem_khat", "ttm_row", "ttm_row_khat")}
assert tuple(TTM_COSTS) == TTM_KINDS, "every local TTM kernel has its costs"
COMPUTE_COSTS = TTM_COSTS["csf"] + TTM_COSTS["paper"] + (
    "oracle_call", "oracle_matvec_entry", "oracle_rmatvec_entry", "gemm_madd", "lanczos_query", "lanczos_left_word",
    "lanczos_left_row", "lanczos_ritz_madd", "lanczos_right_word", "lanczos_right_row", "lanczos_local_query",
    "dist_oracle_call", "dist_oracle_row")
SVD_COSTS = COMPUTE_COSTS[len(TTM_COSTS["csf"]) + len(TTM_COSTS["paper"]):]
MPI_COSTS = ("alpha_allreduce", "beta_allreduce", "alpha_alltoallv", "beta_alltoallv",
             "alpha_allgatherv", "beta_allgatherv")
#: what a message and a query cost inside the distributed HOOI beyond the micro-benchmarks, measured
#: on the worker at 2 ranks (:mod:`.calibration.in_context`); needed at P > 1 only
CONTEXT_COSTS = ("alpha_allreduce_context", "alpha_alltoallv_context", "dist_query_context")


def csf_work(count: dict, mode: int, Ks) -> tuple[np.ndarray, list] | tuple[None, None]:
    """(P, 3) :func:`.csf.tree_work` of the tree each rank builds for ``mode`` and those trees
    (level order, nodes per level), from :func:`.metrics.mode_counts`' dict made with
    ``csf=True`` ((None, None) without its prefixes)."""
    from spbench.tucker.hooi.csf import rank_nodes, tree_work

    prefix = count.get("csf_prefix_p")
    if prefix is None:
        return None, None
    trees = rank_nodes(mode, len(Ks), prefix, count["r_p"], count["e_p"], Ks)
    return np.array([tree_work(order, nodes, Ks) for order, nodes in trees], dtype=float).reshape(-1, 3), trees


def loads_from_counts(counts: list, K, *, Q=None, multi_policy: bool) -> list[ModeLoad]:
    """ModeLoads from :func:`.metrics.mode_counts`' per-mode dicts (``Q``: int or per mode); with
    ``csf=True`` counts they also carry every rank's CSF tree work."""
    N = len(counts)
    Ks = [int(K)] * N if np.ndim(K) == 0 else [int(k) for k in K]
    Qs = [None] * N if Q is None else ([int(Q)] * N if np.ndim(Q) == 0 else [int(q) for q in Q])
    held = (sum(np.asarray(c["e_p"], dtype=np.int64) for c in counts) if multi_policy
            else np.asarray(counts[0]["e_p"], dtype=np.int64))
    rows = np.stack([np.asarray(c["held_p"], dtype=np.int64) for c in counts], axis=1)
    out = []
    for n, c in enumerate(counts):
        r = np.asarray(c["r_p"], dtype=np.int64)
        work, trees = csf_work(c, n, Ks)
        out.append(ModeLoad(K=Ks[n], Khat=_khat(Ks, n), L=int(c["slices"]), e=np.asarray(c["e_p"], dtype=np.int64),
                            r=r, x_send=c["x_send_p"], x_recv=c["x_recv_p"], x_peers=c["x_peers_p"], own=c["own_p"],
                            fm_send=c["fm_send_p"], fm_recv=c["fm_recv_p"], fm_peers=c["fm_peers_p"], Q=Qs[n],
                            held=held, csf=work, csf_trees=trees, factor_rows=rows, Ks=tuple(Ks),
                            extra={"r_sum": int(r.sum()), "svd_volume_per_product": int(r.sum()) - int(c["slices"])}))
    return out


def rank_loads(tensor, dist, K, *, Q=None, metrics=None, ttm: str = "csf") -> list[ModeLoad]:
    """Exact per-rank loads of every mode of ``dist`` on ``tensor`` (``metrics``: a
    :func:`.metrics.compute_metrics` result of the same distribution: its counts are reused
    unless ``ttm`` is "csf" and they lack the trees' prefixes)."""
    from spbench.tucker.metrics import mode_counts

    csf = ttm == "csf"
    counts = metrics.counts if metrics is not None and metrics.counts else None
    if counts is None or (csf and "csf_prefix_p" not in counts[0]):
        counts = mode_counts(tensor, dist, csf=csf)[0]
    return loads_from_counts(counts, K, Q=Q, multi_policy=bool(dist.multi_policy))


def _costs(costs: dict) -> dict:
    return costs.get("costs", costs)


def _need(c: dict, keys, P: int) -> None:
    missing = [k for k in keys if k not in c]
    if missing:
        raise KeyError(f"cost model: missing costs {missing}" + (
            " (the MPI micro-benchmark was skipped in calibration: the model predicts P = 1 only)"
            if P > 1 and any(k.startswith(("alpha", "beta")) for k in missing) else
            " (a calibration of an older model: rerun `spbench calibrate --experiment tucker`)"))


def _log2(P: int) -> int:
    return int(math.ceil(math.log2(P))) if P > 1 else 0


def _messages(calls=0.0, words=0.0, alpha=0.0, beta=0.0) -> dict:
    """One message term's count: ``calls`` collective calls carrying ``words`` words in all (the
    largest rank's), ``alpha`` and ``beta`` their per-message and per-word seconds."""
    return {"calls": float(calls), "words": float(words), "alpha": float(alpha), "beta": float(beta)}


def _add(total: dict, term: str, part: dict) -> None:
    acc = total.setdefault(term, _messages())
    for k, v in part.items():
        acc[k] += v


def alpha_cost(c: dict, key: str, working_bytes: float) -> float:
    """Seconds per message of a pattern (``alpha_allreduce``, ...) called after a step whose working
    set was ``working_bytes`` per rank: the micro-benchmark's ladder (``alpha_bytes``, :func:`entry_cost`),
    or the one figure of a calibration without it, plus what a call costs inside HOOI beyond the
    micro-benchmark (``alpha_allreduce_context``, ``alpha_alltoallv_context``: measured on the worker,
    :mod:`.calibration.in_context`); never below 0."""
    ladder = float(entry_cost(c, key, float(working_bytes), "alpha_bytes"))
    return max(ladder + float(c.get(key + "_context", 0.0)), 0.0)


def _alltoallv_msgs(c, send, recv, peers, P, width=1, calls=1, ws=0.0) -> dict:
    """``calls`` Alltoallvs of a pattern (per rank: words sent and received, peers), ``width`` words
    per item, after steps of working set ``ws`` bytes: α_alltoallv(ws)·max(1, max_p peers_p) per call,
    β_alltoallv per word of the largest rank."""
    if P <= 1:
        return _messages()
    words = calls * float(np.max(np.maximum(send, recv), initial=0)) * width
    alpha = alpha_cost(c, "alpha_alltoallv", ws) * max(1, int(np.max(peers, initial=0)))
    return _messages(calls, words, calls * alpha, c["beta_alltoallv"] * words)


def _allreduce_msgs(c, words, P, ws=0.0) -> dict:
    """Allreduces of the sizes ``words`` (one call each) after steps of working set ``ws`` bytes:
    ⌈log2 P⌉·α_allreduce(ws) + 2(P−1)/P·β per word."""
    w = np.atleast_1d(np.asarray(words, dtype=float))
    if P <= 1:
        return _messages()
    return _messages(w.size, w.sum(), w.size * _log2(P) * alpha_cost(c, "alpha_allreduce", ws),
                     2.0 * (P - 1) / P * c["beta_allreduce"] * w.sum())


def _transfer_calls(ld: ModeLoad) -> int:
    """Calls of the factor transfer of :func:`.hooi.loop._transfer`: blocks of columns of about
    ``TRANSFER_WORDS`` words per buffer of the largest rank."""
    from spbench.tucker.hooi.loop import TRANSFER_WORDS

    items = int(np.max(np.maximum(ld.fm_send, ld.fm_recv), initial=0))
    step = max(1, min(ld.K, TRANSFER_WORDS // max(items, 1)))
    return -(-ld.K // step)


def lanczos_steps(K: int, L: int, Khat: int, mode: str = "paper", Q: int | None = None,
                  restarts: int | None = None) -> dict:
    """The Lanczos run :func:`.lanczos.lanczos_svd` makes for an L × K̂ matrix and K triplets:
    ``dense`` (the fallback, ``Q`` = min(L, K̂) queries), else ``ncv``, ``left_j`` (the basis
    size j of the left Gram–Schmidt at each Z·x step), ``restarts``, ``keep`` and ``Q``.
    ``paper``: j = 0..2K−1, Q = 4K. ``converged``: Q measured (default 2·ncv, no restart);
    after the first ncv steps each restart keeps max(K, ncv/2) vectors (no triplet converged
    yet: SLEPc's rule in lanczos_svd) and runs j = keep..ncv−1 again."""
    if mode not in LANCZOS_MODES:
        raise ValueError(f"lanczos mode must be one of {', '.join(LANCZOS_MODES)}, got {mode!r}")
    ncv = paper_ncv(K) if mode == "paper" else default_ncv(K)
    small = min(int(L), int(Khat))
    if ncv >= small:
        return {"dense": True, "Q": int(small) if Q is None else int(Q), "ncv": ncv, "left_j": np.zeros(0),
                "restarts": 0, "keep": 0}
    keep = min(ncv - 1, max(K, ncv // 2))
    steps = ncv if mode == "paper" or Q is None else max(int(Q) // 2, ncv)
    js = list(range(ncv))
    while len(js) < steps:
        js.extend(range(keep, ncv))
    js = np.array(js[:steps], dtype=float)
    nrest = int(np.count_nonzero(js[1:] < js[:-1])) if restarts is None else int(restarts)
    return {"dense": False, "Q": 2 * steps, "ncv": ncv, "left_j": js, "restarts": nrest, "keep": keep}


def entry_cost(c: dict, key: str, nbytes, sizes_key: str = "oracle_bytes") -> np.ndarray:
    """The cost ``key`` of work whose data is ``nbytes`` (per rank): the calibration's ladder over
    sizes (``sizes_key``: ``oracle_bytes`` for a product streaming its Z, ``lanczos_left_bytes`` for the
    left Gram–Schmidt's basis, ``alpha_bytes`` for a message after a step's working set) interpolated
    linearly in log size and held flat beyond its ends, or one cost for every size when ``key`` is a number."""
    value = c[key]
    if np.ndim(value) == 0:
        return np.full(np.shape(nbytes), float(value))
    sizes = np.log(np.asarray(c[sizes_key], dtype=float))
    return np.interp(np.log(np.maximum(np.asarray(nbytes, dtype=float), 1.0)), sizes, np.asarray(value, dtype=float))


def working_set(ld: ModeLoad, ncv: int) -> float:
    """Bytes one Lanczos step of mode ``ld`` streams on its largest rank between two messages: its Z
    (R^p × K̂), its left basis (own^p × ncv) and the replicated right one (K̂ × ncv), float64 — what
    decides where MPI's own data sits when the step's messages start (:func:`alpha_cost`)."""
    per_rank = 8.0 * (ld.r.astype(float) * ld.Khat + ld.own.astype(float) * ncv + ld.Khat * ncv)
    return float(np.max(per_rank, initial=0.0))


def _svd_mode(ld: ModeLoad, c: dict, mode: str) -> dict:
    """Named SVD terms of one mode (seconds; see the module docstring), its messages per term
    (:func:`_messages`), ``idle``: per rank, the seconds its local work leaves it waiting for
    the slowest rank of each step, and ``ws``: the step's working set (:func:`working_set`)."""
    P, kh, K = ld.P, ld.Khat, ld.K
    plan = lanczos_steps(K, ld.L, kh, mode, ld.Q, ld.restarts)
    Q = plan["Q"]
    ws = working_set(ld, plan["ncv"])
    r, own, xr = ld.r.astype(float), ld.own.astype(float), ld.x_recv.astype(float)
    index = c["dist_oracle_row"] * (r + xr) * (P > 1)             # per query, per rank (none alone)
    mv = entry_cost(c, "oracle_matvec_entry", 8.0 * r * kh) * r * kh
    rmv = entry_cost(c, "oracle_rmatvec_entry", 8.0 * r * kh) * r * kh
    terms = dict.fromkeys(("oracle_products", "oracle_index", "lanczos_left", "lanczos_right", "query_calls",
                           "oracle_alltoallv", "svd_allreduce", "dense_fallback", "dense_allgatherv"), 0.0)
    msgs: dict = {}
    idle = np.zeros(P)
    distributed = c["dist_oracle_call"] + c["dist_query_context"] if P > 1 else 0.0
    terms["query_calls"] = Q * max(c["oracle_call"] + c["lanczos_query"] + distributed, 0.0)
    if P == 1 and not plan["dense"]:              # HOOI's one-process Lanczos: compiled steps
        terms["query_calls"] = Q * c["lanczos_local_query"]
    if plan["dense"]:
        by_cols = kh <= ld.L                                       # Z formed by K̂ matvecs, else L rmatvecs
        prod = mv if by_cols else rmv
        i = int(np.argmax(prod + index))
        terms["oracle_products"], terms["oracle_index"] = Q * prod[i], Q * index[i]
        idle += Q * (prod[i] + index[i] - prod - index)
        _add(msgs, "oracle_alltoallv", _alltoallv_msgs(c, ld.x_send, ld.x_recv, ld.x_peers, P, calls=Q, ws=ws))
        if by_cols:
            terms["dense_fallback"] = c["gemm_madd"] * (2 * float(own.max(initial=0)) * kh ** 2 + 2 * P * kh ** 3)
            if P > 1:
                _add(msgs, "dense_allgatherv", _messages(1, (P - 1) * kh ** 2,
                                                         _log2(P) * alpha_cost(c, "alpha_allgatherv", ws),
                                                         c["beta_allgatherv"] * (P - 1) * kh ** 2))
        else:
            _add(msgs, "svd_allreduce", _allreduce_msgs(c, np.full(Q, kh), P, ws))
            terms["dense_fallback"] = c["gemm_madd"] * 4.0 * ld.L ** 2 * kh
    else:
        js = plan["left_j"]
        steps = js.size
        # Z·x steps: the slowest rank of each step (its products, index work and left Gram–Schmidt)
        word = entry_cost(c, "lanczos_left_word", 8.0 * own * plan["ncv"], "lanczos_left_bytes")  # by basis size
        left = js[:, None] * (own * word)[None, :] + c["lanczos_left_row"] * own[None, :]
        step = (mv + index)[None, :] + left
        arg = np.argmax(step, axis=1)
        terms["oracle_products"] = float(mv[arg].sum())
        terms["oracle_index"] = float(index[arg].sum())
        terms["lanczos_left"] = float(left[np.arange(steps), arg].sum())
        idle += np.sum(step.max(axis=1)[:, None] - step, axis=0)
        # y·Z steps: products and index work of the slowest rank; the right Gram–Schmidt is replicated
        i = int(np.argmax(rmv + index))
        terms["oracle_products"] += steps * float(rmv[i])
        terms["oracle_index"] += steps * float(index[i])
        idle += steps * (rmv[i] + index[i] - rmv - index)
        terms["lanczos_right"] = float(np.sum(c["lanczos_right_word"] * kh * (js + 1) + c["lanczos_right_row"] * kh))
        # Ritz vectors at the end (and at each restart): U·P on the owned rows, V·Qᵀ replicated
        ncv, own_max = plan["ncv"], float(own.max(initial=0))
        ritz = ncv * (K + plan["restarts"] * plan["keep"]) * c["lanczos_ritz_madd"]
        terms["lanczos_left"] += own_max * ritz
        idle += (own_max - own) * ritz
        terms["lanczos_right"] += kh * ncv * (K + plan["restarts"] * plan["keep"]) * c["gemm_madd"]
        # per Z·x step an Allreduce of 1 word (j = 0) or of j and j + 1 words (the two Gram–Schmidt
        # passes); per y·Z step one of K̂ words; two Alltoallvs per step
        sizes = np.concatenate([[1.0] * int(np.count_nonzero(js == 0)), js[js > 0], js[js > 0] + 1,
                                np.full(steps, float(kh))])
        _add(msgs, "svd_allreduce", _allreduce_msgs(c, sizes, P, ws))
        _add(msgs, "oracle_alltoallv", _alltoallv_msgs(c, ld.x_send, ld.x_recv, ld.x_peers, P, calls=2 * steps, ws=ws))
    for term, m in msgs.items():
        terms[term] = m["alpha"] + m["beta"]
    comm = terms["oracle_alltoallv"] + terms["svd_allreduce"] + terms["dense_allgatherv"]
    return {"terms": terms, "svd_time": float(sum(terms.values()) - comm), "comm_time": float(comm),
            "queries": int(Q), "restarts": int(plan["restarts"]), "dense": bool(plan["dense"]),
            "messages": msgs, "idle": idle, "ws": ws}


def _ttm_rank(ld: ModeLoad, c: dict, ttm: str) -> np.ndarray:
    """Seconds of the local TTM of every rank (module docstring)."""
    kh = ld.Khat
    if ttm == "csf":
        if ld.csf is None:
            raise ValueError("cost model: ttm: csf needs the ranks' tree shapes (mode_counts(..., csf=True))")
        from spbench.tucker.hooi.csf import gathers_beyond_cache

        leaf, upper, nodes = ld.csf.T
        misses = np.zeros(ld.P) if ld.csf_trees is None else np.array(
            [gathers_beyond_cache(order, tree, ld.Ks, ld.factor_rows[p], c["ttm_cache_bytes"])
             for p, (order, tree) in enumerate(ld.csf_trees)])
        return (c["ttm_csf_leaf"] * leaf + c["ttm_csf_flop"] * upper + c["ttm_csf_node"] * nodes
                + c["ttm_csf_row_khat"] * ld.r * kh + c["ttm_csf_row"] * ld.r + c["ttm_csf_miss"] * misses)
    held = ld.e if ld.held is None else ld.held
    return (c["ttm_elem"] * ld.e + c["ttm_elem_khat"] * ld.e * kh + c["ttm_row"] * ld.r + c["ttm_row_khat"] * ld.r * kh
            + c.get("ttm_local_khat", 0.0) * (held - ld.e) * kh)


def predict_from_loads(loads: list[ModeLoad], costs: dict, *, invocations: int = 1, lanczos: str = "paper",
                       ttm: str = "csf") -> dict:
    """Modelled seconds from per-rank loads (see the module docstring for every term); ``ttm``:
    the local TTM kernel modelled, "csf" or "paper"."""
    if ttm not in TTM_COSTS:
        raise ValueError(f"ttm must be one of {', '.join(TTM_COSTS)}, got {ttm!r}")
    c = _costs(costs)
    P = loads[0].P
    _need(c, TTM_COSTS[ttm] + SVD_COSTS, P)
    if P > 1:
        _need(c, MPI_COSTS + CONTEXT_COSTS, P)
    modes, total_terms, messages = [], {}, {}
    idle = np.zeros(P)
    ws = 0.0
    for ld in loads:
        ttm_p = _ttm_rank(ld, c, ttm)
        svd = _svd_mode(ld, c, lanczos)
        fm = _alltoallv_msgs(c, ld.fm_send, ld.fm_recv, ld.fm_peers, P, width=ld.K, calls=_transfer_calls(ld),
                             ws=svd["ws"])
        fm_t = fm["alpha"] + fm["beta"]
        _add(messages, "factor_transfer", fm)
        for term, m in svd["messages"].items():
            _add(messages, term, m)
        idle += float(np.max(ttm_p, initial=0.0)) - ttm_p + svd["idle"]
        ws = svd["ws"]
        terms = {"ttm": float(np.max(ttm_p, initial=0.0)), **svd["terms"], "factor_transfer": fm_t}
        for k, v in terms.items():
            total_terms[k] = total_terms.get(k, 0.0) + v
        modes.append({"ttm_time": terms["ttm"], "svd_time": svd["svd_time"], "oracle_comm_time": svd["comm_time"],
                      "fm_time": fm_t, "queries": svd["queries"], "restarts": svd["restarts"], "dense": svd["dense"],
                      "terms": terms})
    last = loads[-1]
    core_p = last.r.astype(float) * last.Khat * last.K * c["gemm_madd"]
    total_terms["core_product"] = float(np.max(core_p, initial=0))
    idle += total_terms["core_product"] - core_p
    core = _alltoallv_msgs(c, last.x_recv, last.x_send, last.x_peers, P, width=last.K, ws=ws)
    for m in (core, _allreduce_msgs(c, last.K * last.Khat, P, ws)):
        _add(messages, "core_comm", m)
    total_terms["core_comm"] = messages["core_comm"]["alpha"] + messages["core_comm"]["beta"]
    inv = int(invocations)
    parts = dict.fromkeys(PARTITION, 0.0)
    for k, v in total_terms.items():
        parts[TERM_COMPONENT[k]] += inv * v
    return {"hooi_time": sum(parts.values()), **parts, "fm_time": inv * total_terms["factor_transfer"],
            "core_time": inv * (total_terms["core_product"] + total_terms["core_comm"]),
            "wait_time": inv * float(np.max(idle, initial=0.0)) if P > 1 else 0.0,
            "ranks": P, "invocations": inv, "lanczos": lanczos, "ttm": ttm, "model_version": MODEL_VERSION,
            "modes": modes,
            "terms": {k: inv * v for k, v in total_terms.items()},
            "messages": {k: {f: inv * v for f, v in m.items()} for k, m in messages.items()}}


def predict_hooi(tensor, dist, K, costs: dict, *, queries=None, invocations: int = 1, metrics=None,
                 lanczos: str = "paper", ttm: str = "csf") -> dict:
    """Modelled ``hooi_time``, ``ttm_time``, ``svd_time``, ``comm_time`` (seconds) of
    ``invocations`` HOOI invocations of ``dist`` on ``tensor`` with core sizes ``K``;
    ``queries``: measured Lanczos queries per mode (per invocation), default the mode's own."""
    return predict_from_loads(rank_loads(tensor, dist, K, Q=queries, metrics=metrics, ttm=ttm), costs,
                              invocations=invocations, lanczos=lanczos, ttm=ttm)



# -- the time split by cost group: compute, latency, bandwidth ---------------------------------------
#: the cost groups :func:`model_groups` splits the modelled HOOI time into: every compute cost, the
#: per-message latencies (``alpha_*``) and the per-word costs (``beta_*``)
COST_GROUPS = ("compute", "latency", "bandwidth")
#: calibration entries that are sizes, not seconds (the TTM's cache, the ladders' sizes):
#: never scaled with a group
COST_SIZES = ("ttm_cache_bytes", "oracle_bytes", "alpha_bytes", "lanczos_left_bytes")


def cost_group(name: str) -> str | None:
    """The group of a calibration entry: "latency" (``alpha_*``), "bandwidth" (``beta_*``), None
    for a size (:data:`COST_SIZES`), else "compute"."""
    if name in COST_SIZES:
        return None
    return "latency" if name.startswith("alpha_") else "bandwidth" if name.startswith("beta_") else "compute"


def scale_costs(costs: dict, compute: float = 1.0, latency: float = 1.0, bandwidth: float = 1.0) -> dict:
    """The costs with every entry of each group (:func:`cost_group`) multiplied by that group's
    scale (a ladder of per-entry costs entry by entry); sizes unchanged. The envelope's other keys
    are dropped: the result is a plain ``{name: seconds}``."""
    scale = {"compute": float(compute), "latency": float(latency), "bandwidth": float(bandwidth)}
    out = {}
    for name, value in _costs(costs).items():
        group = cost_group(name)
        if group is None or isinstance(value, (str, bool)) or value is None:
            out[name] = value
        elif np.ndim(value):
            out[name] = [scale[group] * float(v) for v in value]
        else:
            out[name] = scale[group] * float(value)
    return out


def model_groups(loads: list[ModeLoad], costs: dict, *, invocations: int = 1, lanczos: str = "paper",
                 ttm: str = "csf", predicted: dict | None = None) -> dict:
    """``{"compute": C, "latency": A, "bandwidth": B}`` (seconds): the modelled HOOI time split by
    cost group, so that ``hooi_time`` = C + A + B and, with every compute cost scaled by s_c, every
    ``alpha_*`` by s_α and every ``beta_*`` by s_β (:func:`scale_costs`), the model predicts
    s_c·C + s_α·A + s_β·B. That is exact, not a linearization: every max over ranks of the model
    (the TTM, each Lanczos step's slowest rank, the oracle's products, the core's product) is taken
    over compute terms alone, and every message term is α·(a max of messages) + β·(a max of words),
    two maxes of load counts, never a max over a sum of groups; the oracle's per-entry ladder is
    interpolated linearly in its costs. It is what lets one calibration be re-scaled to another
    machine: tucker-lite's cluster (§7.1) against this one, fitted to the paper's printed HOOI times
    (Figs. 14 and 16) in :mod:`spbench.tucker.report.paper_profile`.

    C is ``ttm_time`` + ``svd_time`` + ``other_time`` of the prediction (``predicted``, the same
    loads and options, is reused when given); A and B are the ``comm_time`` of the model with only
    the latencies, or only the per-word costs, left (every compute cost zero, so the local TTM is
    evaluated in its cheap element-wise form: the messages do not depend on the TTM kernel)."""
    if predicted is None:
        predicted = predict_from_loads(loads, costs, invocations=invocations, lanczos=lanczos, ttm=ttm)
    compute = float(predicted["ttm_time"] + predicted["svd_time"] + predicted["other_time"])

    def messages(latency: float, bandwidth: float) -> float:
        if loads[0].P <= 1:
            return 0.0
        only = scale_costs(costs, 0.0, latency, bandwidth)
        only.update({k: 0.0 for k in COMPUTE_COSTS if k not in only and cost_group(k) == "compute"})
        return float(predict_from_loads(loads, only, invocations=invocations, lanczos=lanczos,
                                        ttm="paper")["comm_time"])

    return {"compute": compute, "latency": messages(1.0, 0.0), "bandwidth": messages(0.0, 1.0)}
