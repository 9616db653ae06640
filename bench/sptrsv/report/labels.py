"""The paper's labels of SpTrSV curves: a scheduler and the kernel it ran on, "GrowLocal (BSP)",
"ElasticDivide (SSP)", "SpMP (P2P)" (sptrsv-elasticity Figs. 5.1, 6.1, Table 6.2)."""
from __future__ import annotations

import pandas as pd


KERNEL_NAMED = ("growlocal", "elastic_divide", "spmp")
"""Schedulers the paper's figures name with their kernel, "GrowLocal (BSP)", "ElasticDivide (SSP)",
"SpMP (P2P)" (sptrsv-elasticity Figs. 5.1, 6.1 and Table 6.2, where ElasticDivide also runs BSP);
Wavefront and HDagg run one kernel only and keep their bare names unless run on another."""


def algorithm_label(algorithm: str, kernel: str | None = None) -> str:
    """The paper's label of a scheduler run on ``kernel``: "ElasticDivide (SSP)", "GrowLocal (BSP)",
    "Wavefront", "HDagg", "SpMP (P2P)", "Serial"; an unknown name is returned as is."""
    from spbench.sptrsv.schedulers import REGISTRY, SERIAL

    known = {SERIAL.name: SERIAL, **REGISTRY}.get(str(algorithm))
    if known is None:
        return str(algorithm) + (f" ({str(kernel).upper()})" if kernel else "")
    kernel = str(kernel) if kernel and str(kernel) not in ("nan", "None", "auto") else known.kernel
    named = known.name in KERNEL_NAMED or kernel != known.kernel
    return f"{known.label} ({kernel.upper()})" if named and known.name != SERIAL.name else known.label


def curve_labels(df: pd.DataFrame, keys: pd.Series) -> dict[str, str]:
    """Curve key (``algorithm`` or ``algorithm/kernel``, as the profile's series are keyed) → the
    paper's label (:func:`algorithm_label`) from each row's ``algorithm`` and ``kernel``."""
    kernels = df["kernel"] if "kernel" in df.columns else pd.Series(None, index=df.index)
    out: dict[str, str] = {}
    for key, algorithm, kernel in zip(keys.astype(str), df["algorithm"].astype(str), kernels):
        out.setdefault(key, algorithm_label(algorithm, None if pd.isna(kernel) else kernel))
    return out
