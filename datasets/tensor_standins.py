"""Deterministic synthetic stand-ins of the FROSTT tensors, drawn chunk by chunk.

The model (tucker-lite Fig. 9 tensors; recipe per tensor in ``tensor_registry.TENSORS``): the
same number of modes, every mode length scaled by ``dim_scale`` (kept at least min(L_n, 64)),
``nnz`` distinct nonzeros, each mode's index drawn independently from a power law
p_i ∝ i^−α_n over a random relabelling of the indices, α_n tuned (bisection) so the expected
largest slice holds ``max_share[n]`` of the nonzeros; values uniform in (0, 1].

Drawing: rounds of up to 2**23 coordinates; in a round each mode's indices are a multinomial
count per index (the power law) spread in random order by a shuffle (the same law as drawing them
one by one, several times faster than inverting the CDF per draw). A coordinate already drawn
is dropped, keeping the first in draw order, against a set of 64-bit hashes of the accepted
coordinates (a hash collision drops a coordinate too: still distinct, still deterministic), so
memory is ~11 bytes per nonzero plus two rounds (one drawn while the other is written), and a
full-size stand-in streams straight into a tensor store (``tensor_registry.standin_store``)
without text. Everything follows from the seed.

The draws and the set are compiled (``spbench.kernels.tucker._standin_draw``: numpy's multinomial,
shuffle and permutation replayed on the same bit stream; an open-addressing table of the hashes),
and the bisection sums with numpy only near its root (``_ShareTest``): every stand-in is the one
the all-numpy version of this module drew, coordinate for coordinate.
"""
from __future__ import annotations

import math
import threading

import numpy as np

from spbench.kernels.tucker import _standin_draw as _kernel

from .errors import DatasetError
from .store_duplicates import key_plan
from .tensor_store import index_dtype

__all__ = ["powerlaw_exponent", "scaled_dims", "standin_chunks", "standin_columns", "collect_chunks",
           "STANDIN_VERSION"]

STANDIN_VERSION = 2            # 2: chunked multinomial draws (version 1 inverted the CDF per draw)
_ROUND = 1 << 23
_HEAD = 4096                   # power-law terms summed one by one before Euler-Maclaurin takes over
_HEAD_I = np.arange(1, _HEAD + 1, dtype=float)
_MARGIN = 1e-13                # relative gap to ``share`` beyond which the estimated sum decides
_LOAD = 0.75                   # final load of the table of accepted hashes
_SPLIT = 1 << 20               # powers of longer laws are taken in two threads


def powerlaw_exponent(length: int, share: float) -> float:
    """α with 1/Σ_{i=1..length} i^−α = share (the largest of ``length`` power-law slices holds
    ``share`` of the mass); 0 when share <= 1/length."""
    return _exponent(length, share)[0]


def _exponent(length: int, share: float):
    """``(α, i ** -α)``: the bisection on numpy's sum (60 halvings), and the powers when its last
    exact sum was at α (else None)."""
    if length <= 1 or share <= 1.0 / length:
        return 0.0, None
    if share >= 1.0:
        raise ValueError("share must be < 1")
    test = _ShareTest(length, share)
    lo, hi = 0.0, 1.0
    while test.below(hi):
        hi *= 2
    for _ in range(60):
        mid = 0.5 * (lo + hi)
        if test.below(mid):
            lo = mid
        else:
            hi = mid
    alpha = 0.5 * (lo + hi)
    return alpha, test.powers_at(alpha)


class _ShareTest:
    """The bisection's test ``1.0 / np.sum(i ** -a) < share`` (i = 1..length), decided by an
    estimate of the sum (relative error ~1e-15; numpy's own sum is within ~4e-15 of the true one)
    while 1/estimate is more than ``_MARGIN`` away from ``share``, else by numpy's sum itself
    (about the last ten halvings); each ``a`` is decided once."""

    def __init__(self, length: int, share: float):
        self.length, self.share = int(length), share
        self.answers: dict = {}
        self.i = self.powers = self.at = None

    def below(self, a: float) -> bool:
        if a not in self.answers:
            estimate = 1.0 / _powerlaw_sum(self.length, a) if self.length > 2 * _HEAD else None
            if estimate is not None and abs(estimate - self.share) > _MARGIN * self.share:
                self.answers[a] = estimate < self.share
            else:
                self.answers[a] = bool(1.0 / np.sum(self._powers(a)) < self.share)
        return self.answers[a]

    def _powers(self, a: float) -> np.ndarray:
        if self.i is None:
            self.i = np.arange(1, self.length + 1, dtype=float)
            self.powers = np.empty(self.length)
        self.at = a
        return _power(self.i, -a, self.powers)

    def powers_at(self, a: float):
        return self.powers if self.at == a else None


def _powerlaw_sum(length: int, a: float) -> float:
    """Σ_{i=1..length} i^−a to ~1e-15 relative: the first ``_HEAD`` terms summed exactly
    (``math.fsum``), the rest by Euler-Maclaurin with the integral, the end points and the first
    and third derivative terms (the remainder is below 1e-18 past 4096 terms)."""
    head = math.fsum((_HEAD_I ** -a).tolist())
    lo, hi, t = float(_HEAD + 1), float(length), 1.0 - a
    ell = math.log(hi / lo)
    integral = ell if t == 0 else lo ** t * math.expm1(t * ell) / t

    def d1(x):
        return -a * x ** (-a - 1)

    def d3(x):
        return -a * (a + 1) * (a + 2) * x ** (-a - 3)

    return head + (integral + (lo ** -a + hi ** -a) / 2 + (d1(hi) - d1(lo)) / 12 - (d3(hi) - d3(lo)) / 720)


def _power(base: np.ndarray, exponent: float, out: np.ndarray) -> np.ndarray:
    """``out[:] = base ** exponent`` by numpy's power (the same value element for element), the
    second half in another thread for long arrays (numpy releases the GIL)."""
    cut = (base.size // 2) & ~4095 if base.size >= _SPLIT else 0
    if not cut:
        return np.power(base, exponent, out=out)
    other = threading.Thread(target=np.power, args=(base[cut:], exponent, out[cut:]))
    other.start()
    np.power(base[:cut], exponent, out=out[:cut])
    other.join()
    return out


def _law(length: int, share: float) -> np.ndarray:
    """p_i ∝ i^−α, i = 1..length, α = powerlaw_exponent(length, share), as ``w / w.sum()``."""
    alpha, w = _exponent(length, share)
    if w is None:
        w = _power(np.arange(1, length + 1, dtype=float), -alpha, np.empty(length))
    return np.divide(w, w.sum(), out=w)


def scaled_dims(dims, dim_scale: float) -> tuple:
    """Mode lengths ``dims * dim_scale``, each kept at least min(L_n, 64)."""
    return tuple(max(int(round(L * float(dim_scale))), min(L, 64)) for L in dims)


def standin_columns(dims, shares, nnz: int, seed: int, *, label: str = "stand-in"):
    """Yield ``(columns, values, ranges)`` chunks of the stand-in whose mode lengths are ``dims``
    (``nnz`` distinct coordinates in total): 0-based index columns in the smallest dtype holding
    every mode and float64 values, views of buffers that a later chunk overwrites; each mode's
    (min, max) index in the chunk. The next round is drawn in a thread meanwhile."""
    target = int(nnz)
    if target < 1:
        raise DatasetError(f"{label}: stand-in nnz must be >= 1, got {target}")
    cells = float(np.prod([float(d) for d in dims]))
    if target > 0.5 * cells:
        raise DatasetError(f"{label}: stand-in nnz {target} too large for dims {tuple(dims)}")
    rng = np.random.default_rng([int(seed), 0x7E5])
    value_rng = np.random.default_rng([int(seed), 0x7E5, 1])
    accepted = _kernel.SeenHashes(int(target / _LOAD) + 64)
    touching = threading.Thread(target=accepted.touch, name="standin-table", daemon=True)
    touching.start()                          # its page faults while the laws are computed
    dtype = index_dtype(max(int(d) for d in dims))
    laws, labels = [], []
    for L, share in zip(dims, shares):
        laws.append(_kernel.law_terms(_law(int(L), min(float(share), 0.999))))
        labels.append(np.empty(int(L), dtype=dtype))
        _kernel.permutation(rng, labels[-1])
    lengths = np.array([int(d) for d in dims], dtype=np.int64)
    starts = np.zeros(len(dims), dtype=np.int64)
    starts[[group[0] for group in key_plan(dims)]] = 1
    ranges = np.empty((len(dims), 2), dtype=np.int64)
    width = min(_ROUND, int(target * 1.1) + 16)
    values = np.empty(width)
    touching.join()

    def draw(m, cols):
        for n in range(len(dims)):
            _kernel.draw_mode(rng, m, laws[n], labels[n], cols[n])

    rounds = _Rounds(draw, target, (len(dims), width), dtype)
    try:
        done, idle = 0, 0
        while done < target:
            m, cols = rounds.take()
            took = accepted.accept(cols, m, lengths, starts, target - done, ranges)
            done += took
            rounds.accepted(done)
            if took:
                drawn = value_rng.random(out=values[:took])           # 1 - U: values in (0, 1]
                yield (list(cols[:, :took]), np.subtract(1.0, drawn, out=drawn),
                       [(int(lo), int(hi)) for lo, hi in ranges])
            else:
                idle += 1
                if idle > 64:
                    raise DatasetError(f"{label}: could not draw {target} distinct coordinates in {tuple(dims)}")
            rounds.release(cols)
    finally:
        rounds.close()


class _Rounds:
    """The rounds of draws, made by a thread into two buffers while the caller dedups and writes
    the previous round. A round's size follows from the nonzeros accepted before it: the thread
    draws round r while round r-1 is being accepted only when r's size is certain to be the full
    ``_ROUND`` whatever r-1 accepts, else it waits for the count (the last rounds)."""

    def __init__(self, draw, target: int, shape, dtype):
        self.draw, self.target = draw, target
        self.cond = threading.Condition()
        self.free = [np.empty(shape, dtype=dtype) for _ in range(2)]
        self.ready: list = []
        self.consumed, self.done, self.sizes = 0, 0, []
        self.stopped, self.error = False, None
        self.thread = threading.Thread(target=self._run, name="standin-draws", daemon=True)
        self.thread.start()

    def _size(self):
        """Round r's size when known (r = len(sizes)), None while round r-1 is pending, 0 when done."""
        r = len(self.sizes)
        if self.consumed < r - 1:
            return None
        if self.consumed == r:
            return 0 if self.done >= self.target else min(_ROUND, int((self.target - self.done) * 1.1) + 16)
        least = self.target - self.done - self.sizes[r - 1]     # round r-1 accepting all it drew
        return _ROUND if min(_ROUND, int(least * 1.1) + 16) == _ROUND else None

    def _run(self):
        try:
            while True:
                with self.cond:
                    while not self.stopped and (not self.free or self._size() is None):
                        self.cond.wait()
                    m = 0 if self.stopped else self._size()
                    if not m:
                        return
                    cols = self.free.pop()
                    self.sizes.append(m)
                self.draw(m, cols)
                with self.cond:
                    self.ready.append((m, cols))
                    self.cond.notify_all()
        except BaseException as exc:             # handed to the caller by take()
            with self.cond:
                self.error = exc
                self.cond.notify_all()

    def take(self):
        """The next round drawn: ``(m, buffer)``."""
        with self.cond:
            while not self.ready and self.error is None:
                self.cond.wait()
            if self.error is not None:
                raise self.error
            return self.ready.pop(0)

    def accepted(self, done: int) -> None:
        """The round just taken is accepted: ``done`` nonzeros in all."""
        with self.cond:
            self.consumed += 1
            self.done = done
            self.cond.notify_all()

    def release(self, cols) -> None:
        with self.cond:
            self.free.append(cols)
            self.cond.notify_all()

    def close(self) -> None:
        with self.cond:
            self.stopped = True
            self.cond.notify_all()
        self.thread.join()


def standin_chunks(dims, shares, nnz: int, seed: int, *, label: str = "stand-in"):
    """Yield ``(columns, values)`` chunks (0-based int64 columns, float64) of the stand-in whose
    mode lengths are ``dims``: ``nnz`` distinct coordinates in total."""
    for cols, values, _ in standin_columns(dims, shares, nnz, seed, label=label):
        yield [c.astype(np.int64) for c in cols], values.copy()


def collect_chunks(chunks, nmodes: int) -> tuple[np.ndarray, np.ndarray]:
    """Concatenate ``standin_chunks`` output into ``(coords (nnz, N) int64, values)`` (small stand-ins)."""
    parts = list(chunks)
    coords = np.empty((sum(v.size for _, v in parts), nmodes), dtype=np.int64)
    at = 0
    for cols, values in parts:
        for n, c in enumerate(cols):
            coords[at:at + values.size, n] = c
        at += values.size
    values = np.concatenate([v for _, v in parts]) if parts else np.zeros(0)
    return coords, values
