"""Leading singular triplets through an oracle: Golub–Kahan–Lanczos bidiagonalization
(tucker-lite-distribution §3 "SVD Component", Figures 4–5; §4.3 and §7.1 for the iteration count).

The matrix Z (m × n) is only seen through two callables, ``matvec(x) = Z·x`` and
``rmatvec(y) = y·Z = Zᵀy``; every call is one oracle query (``queries`` counts them, the paper's
Q_n). Distributed by row owners (Figure 5): the LEFT vectors (length m = L_n) live split over the
ranks by σ_n, each rank holding only the rows it owns, described by a :class:`RowLayout`
(``local`` rows here, their global ``ids``, ``sum`` = an Allreduce). ``matvec`` returns this
rank's owned rows of Z·x, ``rmatvec`` takes them and returns the whole (replicated) Zᵀy. Inner
products and norms of left vectors are local products plus one Allreduce of at most ncv + 1
numbers; the right vectors (length n = K̂_n) are replicated. No rank ever holds an m-long vector.
On one process the layout is :class:`LocalRows` (``sum`` is the identity): the same code.

Two modes (config key ``lanczos``):

* ``paper`` (default of the HOOI): ncv = 2·nsv Lanczos steps with full reorthogonalization and no
  restart, so exactly Q = 4·nsv queries ("we set the number of Lanczos iterations to be 2K",
  §7.1; Q_n = 4K_n in §4.3). The nsv leading Ritz triplets are the answer, converged or not;
  their relative residuals are reported.
* ``converged``: basis of ncv = max(2·nsv, 10) (SLEPc's default), thick-restarted as SLEPc does
  (keep nconv + max(1, (ncv − nconv)//2) Ritz vectors) until the nsv leading triplets reach
  relative residual ``tol``.

Both bases are reorthogonalized by classical Gram–Schmidt applied twice; the second pass and the
squared norm share one Allreduce (‖w − Bc‖² = ‖w‖² − ‖c‖² for orthonormal B). At one process
holding Z whole (``local_matrix``) the steps and, for ``paper``, the SVD of B and the Ritz vectors
run compiled (:mod:`spbench.kernels.tucker._lanczos`), the second pass there only when the DGKS test asks
for it: the same vectors to rounding. B = Uᵀ Z V is kept
as the Gram–Schmidt coefficients; with B = P Σ Qᵀ the residual of Ritz triplet i is β_k·|P[k−1, i]|.
Breakdowns (α or β ≈ 0) continue with a random vector orthogonal to the basis; left ones are drawn
by :func:`.counter_random.counter_normal` from the rows' global ids, so results do not depend on P.

Small or deficient matrices. When ncv ≥ min(m, n) the Krylov space cannot hold ncv vectors: Z is
formed through the oracle (min(m, n) queries) and decomposed densely — for n ≤ m by a TSQR (local
QR per rank, the small R factors gathered, QR of their stack, SVD of R), for m < n from the m
replicated rows. When nsv > min(m, n) the result is padded with σ = 0 and ZERO vectors; HOOI uses
this for K_n ≥ L_n (those columns contribute nothing to the TTMs, the core or the fit).
"""
from __future__ import annotations

import contextlib
import functools
import math
from dataclasses import dataclass, field

import numpy as np
from scipy.linalg.lapack import dgesdd

from spbench.tucker.hooi.counter_random import counter_normal
from spbench.tucker.hooi.variants import LANCZOS_MODES

__all__ = ["LanczosResult", "lanczos_svd", "default_ncv", "paper_ncv", "RowLayout", "LocalRows",
           "CommRows", "LANCZOS_MODES"]


@dataclass
class LanczosResult:
    """``U`` (local rows, nsv), ``s`` (nsv,) decreasing, ``V`` (n, nsv); diagnostics."""

    U: np.ndarray
    s: np.ndarray
    V: np.ndarray
    queries: int = 0            # oracle calls (matvec + rmatvec): the paper's Q_n
    restarts: int = 0
    converged: int = 0          # leading triplets that met the tolerance
    residuals: np.ndarray = field(default_factory=lambda: np.zeros(0))   # relative, per triplet
    dense: bool = False         # solved by the dense fallback

    @property
    def max_residual(self) -> float:
        """Largest relative residual of the nsv leading triplets (0 for the dense fallback)."""
        return float(np.max(self.residuals)) if self.residuals.size else 0.0


class RowLayout:
    """Where the rows of left vectors live: ``m`` global rows, ``ids`` the global ids of the
    ``local`` rows held here, ``sum`` an elementwise sum over ranks, ``allgather`` a list over ranks."""

    m: int
    ids: np.ndarray

    @property
    def local(self) -> int:
        return int(self.ids.shape[0])

    def sum(self, a: np.ndarray) -> np.ndarray:
        raise NotImplementedError

    def allgather(self, obj) -> list:
        raise NotImplementedError

    def count_sums(self, words: int) -> None:
        """Account sums of ``words`` words made without :meth:`sum` (compiled steps)."""


class LocalRows(RowLayout):
    """All m rows on this process."""

    def __init__(self, m: int):
        self.m = int(m)
        self.ids = np.arange(self.m, dtype=np.int64)

    def sum(self, a):
        return np.asarray(a, dtype=np.float64)

    def allgather(self, obj):
        return [obj]


class CommRows(RowLayout):
    """Rows ``ids`` (increasing global ids) of an m-row vector on this rank of ``comm``;
    ``clock``: a context manager timing every message (HOOI's ``comm_time``)."""

    def __init__(self, comm, ids: np.ndarray, m: int, clock=None):
        self.comm, self.m = comm, int(m)
        self.ids = np.ascontiguousarray(ids, dtype=np.int64)
        self.words = 0          # words this rank sent + received in Allreduces (words per rank; 0 alone)
        self.alone = comm.size == 1
        self.clock = contextlib.nullcontext() if clock is None else clock

    def sum(self, a):
        a = np.ascontiguousarray(a, dtype=np.float64)
        if self.alone:          # one process: the sum is its own contribution, no message
            return a
        out = np.empty_like(a)
        with _message(self.clock, "svd_allreduce", a.size):
            self.comm.Allreduce(a, out)
        self.words += 2 * int(a.size)
        return out

    def allgather(self, obj):
        if self.alone:
            return [obj]
        with _message(self.clock, "dense_allgatherv", int(getattr(obj, "size", 1)) * (self.comm.size - 1)):
            return self.comm.allgather(obj)

    def count_sums(self, words: int) -> None:
        if not self.alone:
            self.words += 2 * int(words)


def _message(clock, term: str, words: int):
    """``clock`` as the context of one message of ``term`` carrying ``words`` words, tallied when
    it tallies messages (HOOI's clock: :meth:`spbench.tucker.hooi.loop._Clock.message`)."""
    tag = getattr(clock, "message", None)
    return clock if tag is None else tag(term, words)


def default_ncv(nsv: int) -> int:
    """SLEPc's default basis size max(2·nsv, 10) (``lanczos: converged``)."""
    return max(2 * int(nsv), 10)


def paper_ncv(nsv: int) -> int:
    """The paper's 2K Lanczos iterations (§7.1), ``lanczos: paper``."""
    return 2 * int(nsv)


def _orth(basis: np.ndarray, k: int, w: np.ndarray, total) -> tuple[np.ndarray, np.ndarray, float]:
    """Orthogonalize ``w`` against ``basis[:, :k]`` (CGS twice); returns (w, coefficients, ‖w‖).
    ``total`` sums over ranks (left vectors) or is the identity (replicated right vectors)."""
    if k == 0:
        return w, np.zeros(0), math.sqrt(max(float(total(np.array([w @ w]))[0]), 0.0))
    B = basis[:, :k]
    c = total(B.T @ w)
    w = w - B @ c
    red = np.empty(k + 1)
    np.dot(B.T, w, out=red[:k])
    red[k] = w @ w
    red = total(red)
    c2 = red[:k]
    w -= B @ c2
    return w, c + c2, math.sqrt(max(float(red[k] - c2 @ c2), 0.0))


def _pad(U, s, V, nsv):
    """Exactly ``nsv`` triplets: extra ones are σ = 0 with zero vectors."""
    k = s.shape[0]
    if k >= nsv:
        return U[:, :nsv], s[:nsv], V[:, :nsv]
    Up = np.zeros((U.shape[0], nsv))
    Vp = np.zeros((V.shape[0], nsv))
    sp = np.zeros(nsv)
    Up[:, :k], Vp[:, :k], sp[:k] = U, V, s
    return Up, sp, Vp


def _dense(matvec, rmatvec, rows: RowLayout, n: int, nsv: int) -> LanczosResult:
    """Form Z through the oracle (min(m, n) queries) and decompose it densely."""
    m, loc = rows.m, rows.local
    if m == 0 or n == 0:
        U, s, V = _pad(np.zeros((loc, 0)), np.zeros(0), np.zeros((n, 0)), nsv)
        return LanczosResult(U, s, V, dense=True, converged=nsv)
    if n <= m:
        Z = np.empty((loc, n))
        e = np.zeros(n)
        for i in range(n):
            e[i] = 1.0
            Z[:, i] = matvec(e)
            e[i] = 0.0
        q = n
        # TSQR: local QR, the small R factors of every rank stacked, QR of the stack, SVD of R
        Q1, R1 = np.linalg.qr(Z)
        Rs = rows.allgather(R1)
        Q2, R = np.linalg.qr(np.vstack(Rs))
        me = sum(r.shape[0] for r in Rs[:_my_index(rows)])
        Pr, s, Vt = np.linalg.svd(R, full_matrices=False)
        U = Q1 @ (Q2[me:me + R1.shape[0]] @ Pr)
        V = Vt.T
    else:
        all_ids = np.sort(np.concatenate(rows.allgather(rows.ids)))   # m ≤ ncv ids
        Zr = np.empty((m, n))
        e = np.zeros(loc)
        mine = np.searchsorted(rows.ids, all_ids)
        mine = np.where((mine < loc) & (rows.ids[np.minimum(mine, max(loc - 1, 0))] == all_ids)
                        if loc else False, mine, -1)
        for i in range(m):
            if mine[i] >= 0:
                e[mine[i]] = 1.0
            Zr[i, :] = rmatvec(e)
            if mine[i] >= 0:
                e[mine[i]] = 0.0
        q = m
        Uf, s, Vt = np.linalg.svd(Zr, full_matrices=False)
        U, V = Uf[np.searchsorted(all_ids, rows.ids)], Vt.T
    rank = int(np.sum(s > s[0] * max(m, n) * np.finfo(float).eps)) if s.size and s[0] > 0 else 0
    U, s, V = _pad(U[:, :rank], s[:rank], V[:, :rank], nsv)
    return LanczosResult(np.ascontiguousarray(U), s, np.ascontiguousarray(V), queries=q,
                         dense=True, converged=nsv, residuals=np.zeros(nsv))


def _my_index(rows: RowLayout) -> int:
    """This rank's position in ``allgather`` order (the communicator rank; 0 on one process)."""
    comm = getattr(rows, "comm", None)
    return 0 if comm is None else int(comm.rank)


def _random_left(rows: RowLayout, U, k, seed, stream) -> np.ndarray:
    """A random unit left vector orthogonal to U[:, :k], drawn from the rows' global ids."""
    for t in range(5):
        w = counter_normal(seed, (stream << 3) + t, rows.ids, 1)[:, 0]
        w, _, nrm = _orth(U, k, w, rows.sum)
        if nrm > 1e-8:
            return w / nrm
    raise RuntimeError("could not extend the left Lanczos basis (is the space exhausted?)")


def _random_right(V, k, rng) -> np.ndarray:
    for _ in range(5):
        w, _, nrm = _orth(V, k, rng.standard_normal(V.shape[0]), _identity)
        if nrm > 1e-8:
            return w / nrm
    raise RuntimeError("could not extend the right Lanczos basis (is the space exhausted?)")


def _identity(a):
    return np.asarray(a, dtype=np.float64)


@functools.lru_cache(maxsize=64)
def _first_normals(seed: int, n: int) -> tuple[np.ndarray, np.ndarray]:
    """``v = np.random.default_rng(seed).standard_normal(n)`` and ``v / ‖v‖``, read-only, kept per
    (seed, n); a draw of n normals is never 0."""
    v = np.random.default_rng(seed).standard_normal(n)
    unit = v / np.linalg.norm(v)
    v.flags.writeable = unit.flags.writeable = False
    return v, unit


class _SeededNormals:
    """The normal draws of ``np.random.default_rng(seed)``: the first from :func:`_first_normals`,
    the generator made (replaying it) only for a later draw. A generator made right after a TTM
    costs ~0.3 ms at one process, as much as a 3-mode HOOI's Lanczos steps on a 1000-row mode."""

    def __init__(self, seed):
        self.seed, self.first = seed, None
        self.rng = None if isinstance(seed, (int, np.integer)) else np.random.default_rng(seed)

    def first_unit(self, n: int) -> np.ndarray:
        """The first draw (n normals) normalized, as the start vector."""
        self.first = int(n)
        return _first_normals(self.seed, self.first)[1]

    def standard_normal(self, n: int) -> np.ndarray:
        if self.rng is None and self.first is None:
            self.first = int(n)
            return _first_normals(self.seed, self.first)[0].copy()
        if self.rng is None:
            self.rng = np.random.default_rng(self.seed)
            if self.first is not None:
                self.rng.standard_normal(self.first)
        return self.rng.standard_normal(n)


def _compiled_steps(Z, rows: RowLayout, n: int, ncv: int):
    """(the compiled step function, its work array, its right-breakdown status) when ``Z`` is
    given and holds every row of the layout, else Nones."""
    if Z is None:
        return None, None, None
    from spbench.kernels.tucker import _lanczos

    Z = np.asarray(Z)
    if Z.shape != (rows.local, n) or rows.local != rows.m or Z.dtype != np.float64 or not Z.flags.c_contiguous:
        raise ValueError(f"local_matrix must be the whole C-contiguous float64 ({rows.m}, {n}) matrix")
    return _lanczos.gkl_steps, np.empty(Z.shape[0] + n + 2 * (ncv + 1)), _lanczos.RIGHT_BREAKDOWN


def _compiled_ritz(U, V, B, beta: float, tol: float, nsv: int, queries: int) -> LanczosResult:
    """The end of a ``paper`` run whose steps ran compiled: the SVD of B and the Ritz vectors in
    one compiled call too (``_lanczos.ritz_vectors``: the same dgesdd and products as below). At one
    process each numpy call right after a TTM that emptied the caches costs tens of µs; this
    end made ~20 of them per SVD."""
    from spbench.kernels.tucker import _lanczos

    nd, ni = _lanczos.ritz_work(U.shape[1])
    Uk, Vk = np.empty((U.shape[0], nsv)), np.empty((V.shape[0], nsv))
    s, rel = np.empty(nsv), np.empty(nsv)
    info, nconv = _lanczos.ritz_vectors(U, V, B, beta, tol, Uk, Vk, s, rel, np.empty(nd), np.empty(ni, np.intc))
    if info:
        raise np.linalg.LinAlgError(f"Lanczos: the SVD of B failed (LAPACK dgesdd info {info})")
    return LanczosResult(Uk, s, Vk, queries=queries, converged=min(nconv, nsv), residuals=rel)


def lanczos_svd(matvec, rmatvec, shape, nsv: int, *, mode: str = "converged", ncv: int | None = None,
                tol: float = 1e-8, max_restarts: int | None = None, seed: int = 0,
                v0: np.ndarray | None = None, rows: RowLayout | None = None,
                local_matrix: np.ndarray | None = None) -> LanczosResult:
    """The ``nsv`` leading singular triplets of the m × n matrix seen through the oracle.

    ``shape`` = (m, n); ``mode`` "paper" (2·nsv steps, no restart) or "converged" (restart to
    relative residual ``tol``; RuntimeError after ``max_restarts``, default SLEPc's
    max(100, min(m, n)/ncv)); ``ncv`` overrides the basis size; ``v0`` the starting right vector
    (default: seeded normal, the same on every rank); ``rows`` the left vectors' layout (default:
    all m rows here). ``U`` holds this rank's rows of the left vectors. ``local_matrix``: Z itself
    (C-contiguous float64, all m rows, in the layout's row order) when one process holds it whole
    and the oracle is its plain product: the steps then run compiled (``spbench.kernels.tucker._lanczos``,
    the same steps; a breakdown is handled here), the oracle is not called, ``queries`` counts them.
    """
    m, n = int(shape[0]), int(shape[1])
    nsv = int(nsv)
    if mode not in LANCZOS_MODES:
        raise ValueError(f"lanczos mode must be one of {', '.join(LANCZOS_MODES)}, got {mode!r}")
    if nsv < 1:
        raise ValueError(f"nsv must be >= 1, got {nsv}")
    rows = LocalRows(m) if rows is None else rows
    if rows.m != m:
        raise ValueError(f"row layout has {rows.m} rows for a {m}-row matrix")
    ncv = (paper_ncv(nsv) if mode == "paper" else default_ncv(nsv)) if ncv is None else int(ncv)
    if ncv <= nsv:
        raise ValueError(f"ncv = {ncv} must exceed nsv = {nsv}")
    if ncv >= min(m, n):
        return _dense(matvec, rmatvec, rows, n, nsv)
    if max_restarts is None:
        max_restarts = 0 if mode == "paper" else max(100, min(m, n) // ncv)
    rng = _SeededNormals(seed)
    U = np.zeros((rows.local, ncv), order="F")
    V = np.zeros((n, ncv + 1), order="F")
    B = np.zeros((ncv, ncv))
    if v0 is None and rng.rng is None:
        V[:, 0] = rng.first_unit(n)
    else:
        v = rng.standard_normal(n) if v0 is None else np.asarray(v0, dtype=float).copy()
        nrm = np.linalg.norm(v)
        if nrm == 0:
            v = rng.standard_normal(n)
            nrm = np.linalg.norm(v)
        V[:, 0] = v / nrm
    queries = restarts = breakdowns = 0
    l = 0            # vectors kept from the last restart: U[:, :l], V[:, :l+1] valid
    anorm = 0.0      # running estimate of ‖Z‖ for breakdown tests
    steps, work, right_breakdown = _compiled_steps(local_matrix, rows, n, ncv)
    while True:
        beta = 0.0
        j = l
        while j < ncv:
            if steps is not None:
                j0 = j
                j, status, anorm, beta, done = steps(local_matrix, U, V, B, j, anorm, beta, work)
                queries += 2 * done
                rows.count_sums(sum(2 * i + 1 if i else 1 for i in range(j0, j0 + done)))   # as _orth's
                if status == right_breakdown:
                    V[:, j + 1] = _random_right(V, j + 1, rng)
                    beta = 0.0
                    j += 1
                    continue
                if j >= ncv:
                    break
            # u_j = Z v_j − U B[:, j]   (this rank's owned rows)
            w = np.asarray(matvec(V[:, j]), dtype=float)
            queries += 1
            w, c, alpha = _orth(U, j, w, rows.sum)
            B[:j, j] = c
            anorm = max(anorm, alpha, math.sqrt(float(c @ c)))
            if alpha <= 1e-13 * max(anorm, 1e-300):
                breakdowns += 1
                U[:, j] = _random_left(rows, U, j, seed, breakdowns)
                B[j, j] = 0.0
            else:
                U[:, j] = w / alpha
                B[j, j] = alpha
            # v_{j+1} = Zᵀ u_j − V (·)   (replicated)
            w = np.asarray(rmatvec(U[:, j]), dtype=float)
            queries += 1
            w, _, beta = _orth(V, j + 1, w, _identity)
            anorm = max(anorm, beta)
            if beta <= 1e-13 * max(anorm, 1e-300):
                V[:, j + 1] = _random_right(V, j + 1, rng)
                beta = 0.0
            else:
                V[:, j + 1] = w / beta
            j += 1
        if steps is not None and mode == "paper":
            return _compiled_ritz(U, V, B, beta, tol, nsv, queries)
        P, s, Qt, info = dgesdd(B)
        if info:
            raise np.linalg.LinAlgError(f"Lanczos: the SVD of B failed (LAPACK dgesdd info {info})")
        res = beta * np.abs(P[ncv - 1, :])
        rel = res / np.maximum(s, 1e-300)
        ok = rel <= tol
        nconv = ncv if ok.all() else int(np.argmin(ok))
        if mode == "paper" or nconv >= nsv or restarts >= max_restarts:
            if mode != "paper" and nconv < nsv:
                raise RuntimeError(f"Lanczos: {nconv} of {nsv} triplets converged after "
                                   f"{restarts} restarts (tol {tol})")
            Uk = U @ P[:, :nsv]
            Vk = V[:, :ncv] @ Qt[:nsv, :].T
            return LanczosResult(np.ascontiguousarray(Uk), s[:nsv].copy(), np.ascontiguousarray(Vk),
                                 queries=queries, restarts=restarts, converged=min(nconv, nsv),
                                 residuals=np.where(s[:nsv] > 0, rel[:nsv], 0.0))
        # thick restart: keep the leading Ritz vectors and the last right vector
        keep = min(ncv - 1, max(nsv, nconv + max(1, (ncv - nconv) // 2)))
        Unew = U @ P[:, :keep]
        Vnew = V[:, :ncv] @ Qt[:keep, :].T
        vlast = V[:, ncv].copy()
        U[:, :keep] = Unew
        U[:, keep:] = 0.0
        V[:, :keep] = Vnew
        V[:, keep] = vlast
        V[:, keep + 1:] = 0.0
        B[:] = 0.0
        B[np.arange(keep), np.arange(keep)] = s[:keep]
        B[:keep, keep] = beta * P[ncv - 1, :keep]   # recomputed by the next Gram–Schmidt
        l = keep
        restarts += 1
