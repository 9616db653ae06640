"""What the Tucker cost model (:mod:`.model`) charges each rank for one mode: its loads, exact
counts of a distribution, tucker-lite §4 and §7.3. A leaf the model imports."""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

__all__ = ["ModeLoad", "khat_of"]


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
    Q: int | None = None           # Lanczos queries (None: those of the Lanczos mode)
    held: np.ndarray | None = None  # H^p: elements p holds for all modes (None: = e)
    restarts: int | None = None    # measured restarts (``converged``; None: from Q)
    csf: np.ndarray | None = None  # (P, 3) per rank :func:`.csf.tree_work` of its tree (``ttm: csf``)
    csf_trees: list | None = None  # per rank (level order, nodes per level) of that tree
    factor_rows: np.ndarray | None = None   # (P, N) factor rows each rank holds per mode
    Ks: tuple = ()                 # K of every mode
    extra: dict = field(default_factory=dict)

    @property
    def P(self) -> int:
        return int(self.e.shape[0])


def khat_of(Ks, n) -> int:
    """K̂_n: the product of the other modes' K (the columns of mode n's TTM result)."""
    return int(np.prod([Ks[j] for j in range(len(Ks)) if j != n], dtype=np.int64))
