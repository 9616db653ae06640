"""How far a Tucker data set of a sweep is from the paper's tensor, at the sweep's rank counts
(tucker-lite-distribution Fig. 9, §7; issue "paper-size tensors through the suite", item 5).

Per data set, rank count P and mode n, beside each other for the data set used (stand-in or real)
and the paper's FROSTT tensor: nonzeros per rank, L_n/P (non-empty slices per rank), the largest
slice over nnz/P (>1: one slice outweighs a rank's share, so whole-slice schemes cannot balance
the TTM) and nnz/(Q_n·L_n) with Q_n = 4K_n (TTM work per element against SVD work per slice row:
the TTM costs |E|·K̂_n, the SVD Q_n·K̂_n·R_n; when this ratio is small the SVD dominates and a
scheme's R_sum/R_max decide the figure). The used data set's numbers come from its rows'
``tensor_stats`` (counted over the store). For the real tensors dims and nnz are FROSTT's; their
non-empty slices are taken as L_n = the mode length (FROSTT modes are compact), and their largest
slices are the stand-in recipe's shares (an assumption, except enron's ~10% reported in the paper),
so those two columns are marked "≈".
"""
from __future__ import annotations

import pandas as pd

__all__ = ["representativeness_table", "representativeness_section"]


def _real(name: str):
    from spbench.datasets.paper_tensors import TENSORS
    return TENSORS.get(name)


def representativeness_table(df: pd.DataFrame) -> pd.DataFrame:
    """One row per (data set, P, K, mode) with the used and the real tensor's statistics."""
    out = []
    if "tensor_stats" not in df.columns:
        return pd.DataFrame()
    rows = df[df["tensor_stats"].notna()]
    for (dataset, ranks, K), grp in rows.groupby(["dataset", "ranks", "K"]):
        st = grp["tensor_stats"].iloc[0]
        source = str(grp["dataset_source"].iloc[0]) if "dataset_source" in grp else ""
        real = _real(str(dataset).split("+")[0])
        P, Q = int(ranks), 4 * int(K)
        for n, (L, big) in enumerate(zip(st["slices"], st["largest_slice"])):
            rec = {"dataset": dataset, "source": source, "ranks": P, "K": int(K), "mode": n + 1,
                   "nnz/P": st["nnz"] / P, "L_n/P": L / P,
                   "largest slice/(nnz/P)": big / (st["nnz"] / P) if st["nnz"] else 0.0,
                   "nnz/(Q_n L_n)": st["nnz"] / (Q * L) if L else 0.0}
            if real is not None and n < len(real.dims):
                Lr = int(real.dims[n])
                rec.update({"real nnz/P": real.nnz / P, "real L_n/P ≈": Lr / P,
                            "real largest slice/(nnz/P) ≈": real.max_share[n] * P,
                            "real nnz/(Q_n L_n) ≈": real.nnz / (Q * Lr)})
            out.append(rec)
    return pd.DataFrame(out)


def _fmt(v) -> str:
    if isinstance(v, float):
        if v == 0:
            return "0"
        return f"{v:,.0f}" if abs(v) >= 100 else f"{v:.3g}"
    return str(v)


def representativeness_section(df: pd.DataFrame) -> list[str]:
    """Markdown lines for the report (empty when the rows carry no tensor statistics)."""
    table = representativeness_table(df)
    if table.empty:
        return []
    cols = list(table.columns)
    lines = ["## Representativeness: this sweep's tensors against the paper's", "",
             "What a stand-in can reproduce depends on these ratios at the run's rank count, not on "
             "its name (tucker-lite §7): nonzeros per rank, slices per rank, the largest slice against a "
             "rank's share, and TTM work against SVD work (nnz/(Q_n·L_n), Q_n = 4K_n). \"≈\": the real "
             "tensor's non-empty slices are taken as its mode length and its largest slices as the "
             "stand-in recipe's shares (assumptions; the FROSTT files are not on this machine).", "",
             "| " + " | ".join(cols) + " |", "|" + "---|" * len(cols)]
    for _, r in table.iterrows():
        lines.append("| " + " | ".join(_fmt(r[c]) if pd.notna(r[c]) else "–" for c in cols) + " |")
    return lines + [""]
