"""The SpTrSV cost model's compute rates measured directly (:data:`spbench.sptrsv.model.RATE_KEYS`),
each from matrices built to differ in that one term, so no fit can trade one rate for another
(sptrsv-elasticity §4.2's row loop; the rates' meaning: :mod:`spbench.sptrsv.model`).

The designed matrices have ``n`` rows; row i's off-diagonals sit GAP and more rows back (no row
reads the row just before it, nothing more than FAR_ROWS back) unless said otherwise:

- ``independent k``: k off-diagonals per row (k = K_LOW and K_HIGH, nnz/row 3 and 13: the range of
  the generator families).  ``t_nnz`` = the time difference per row over K_HIGH − K_LOW;
  ``t_row`` = the K_LOW matrix's time per row minus its nonzeros' share;
- ``chain``: bidiagonal, every row but the first reads the row before it: its time per chained
  row is ``t_chain``, the least time a chained row takes (the dependency through x: load,
  multiply-add, scale, store);
- ``far``: the generator family the stand-ins are made of (fem-mesh: hex8 elements, 3 unknowns a
  node, block-multicolour numbered, FAR_MESH cells a side), in its own order: ``t_far`` = its
  time beyond its rows' and nonzeros' share, per far read.  What a far read costs depends on
  where it lands: on this project's VM a designed matrix with uniformly random far reads gave
  1.0-2.7 ns a read (more for short rows), rgg-spd's spatially clustered ones 0.5-0.7 ns, and
  taking rgg-spd's value overestimated the stand-ins' serial solves by 43% (median over the
  SuiteSparse stand-ins at --scale small), whose far reads follow a mesh's colour blocks.

:func:`record` takes the seconds of one solve of each matrix, so the same matrices give the
serial kernel's rates and those of one superstep at P cores (:mod:`spbench.sptrsv.calibration.calibrate`).
"""
from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from spbench.sptrsv.model import FAR_ROWS

#: rows of every designed matrix (full, quick): the families' sizes, L in the last-level cache and
#: beyond L2 at both nonzero counts (with 16384 rows the 3-nonzero matrix fit in a 4 MB L2 and the
#: 13-nonzero one did not: t_row came out -0.24 ns against 0.61 ns at 65536 rows); quick saves repeats
ROWS = {False: 65536, True: 65536}
GAP = 64
K_LOW, K_HIGH = 2, 12
#: cells a side of the fem-mesh giving the far reads (full, quick): about 12k rows and 41
#: nonzeros a row (as many nonzeros as the other matrices), 4-cell tiles as in the shipped configs;
#: quick: 5k rows, enough for reads more than FAR_ROWS back
FAR_MESH = {False: 15, True: 11}


def designed(n: int, k: int, *, chain: bool = False) -> sp.csr_matrix:
    """Lower triangle (diagonal last, int32 CSR) of n rows: k off-diagonals GAP, GAP + 1, ... rows
    back and, with ``chain``, the row just before.  Rows too near the top to have one go without."""
    from spbench.sptrsv.execute import prepare_lower

    i = np.arange(n, dtype=np.int64)
    offsets = [GAP + j for j in range(k)] + ([1] if chain else [])
    r = np.concatenate([i for _ in offsets]) if offsets else i[:0]
    c = np.concatenate([i - o for o in offsets]) if offsets else i[:0]
    keep = c >= 0
    off = sp.coo_matrix((np.full(int(keep.sum()), -1.0 / (k + 2)), (r[keep], c[keep])), shape=(n, n))
    return prepare_lower((off + sp.identity(n) * 2.0).tocsr())


def matrices(quick: bool) -> dict[str, sp.csr_matrix]:
    """The designed matrices by name (module docstring)."""
    from spbench.datasets.synthetic import generate
    from spbench.sptrsv.execute import prepare_lower

    n = ROWS[quick]
    return {f"independent {K_LOW}": designed(n, K_LOW), f"independent {K_HIGH}": designed(n, K_HIGH),
            "chain": designed(n, 0, chain=True),
            "far": prepare_lower(generate("fem-mesh", {**dict.fromkeys(("cells_x", "cells_y", "cells_z"),
                                                                     FAR_MESH[quick]),
                                                        **dict.fromkeys(("tile_x", "tile_y", "tile_z"), 4)}))}


def rates_from(seconds: dict[str, float], features: dict[str, dict]) -> dict[str, float]:
    """The rates from each designed matrix's seconds per solve (module docstring)."""
    low, high = features[f"independent {K_LOW}"], features[f"independent {K_HIGH}"]
    t_low, t_high = seconds[f"independent {K_LOW}"], seconds[f"independent {K_HIGH}"]
    t_nnz = (t_high - t_low) / (high["nnz"] - low["nnz"])
    t_row = (t_low - low["nnz"] * t_nnz) / low["rows"]
    chain = features["chain"]  # its unchained rows (the first) hold the diagonal only
    t_chain = (seconds["chain"] - (chain["rows"] - chain["chained"]) * (t_row + t_nnz)) / chain["chained"]
    far = features["far"]
    t_far = (seconds["far"] - far["rows"] * t_row - far["nnz"] * t_nnz) / far["far"]
    return {"t_row": float(t_row), "t_nnz": float(t_nnz), "t_chain": float(t_chain), "t_far": float(t_far)}


def features_of(L: sp.csr_matrix) -> dict:
    """rows, nnz, chained and far reads of L in its own order (:func:`spbench.sptrsv.model.row_features`)."""
    from spbench.sptrsv.dag import DAG
    from spbench.sptrsv.model import row_features

    dag = DAG(L)
    chained, far = row_features(dag)
    return {"rows": dag.n, "nnz": dag.nnz, "chained": int(chained.sum()), "far": int(far.sum())}


def record(seconds: dict[str, float], designed_matrices: dict) -> dict:
    """The rates (RATE_KEYS) from the designed matrices' seconds per solve, with each matrix's
    features and seconds under ``designed``."""
    features = {name: features_of(L) for name, L in designed_matrices.items()}
    return {**rates_from(seconds, features),
            "designed": {name: {**features[name], "measured": seconds[name]} for name in designed_matrices}}
