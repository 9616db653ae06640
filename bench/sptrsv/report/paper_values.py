"""The numbers paper 2 (SpTrSV elasticity, ``/work/shared/papers/sptrsv-elasticity.txt``) prints.

Transcribed by hand from the text of §1 and §6 so that ``spbench profile`` can show them beside
this machine's values. Keys use spbench's own names: algorithms as in the result rows
(``hdagg``, ``spmp``, ``growlocal``, ``elastic_divide``) and data set groups as
:func:`spbench.report.labels.dataset_group` names them (``SuiteSparse``, ``iChol``,
``METIS``; the paper's tables print "Suite", "iChol", "Metis"). ``None`` is a cell the paper
leaves empty ("—"). Nothing here is computed (the algorithms' names are the labels the schedulers
declare); cross-checks against the paper's prose are noted
beside each table and pinned down by ``tests/report/test_sptrsv_tables.py``.
"""
from __future__ import annotations

import pandas as pd

from spbench.sptrsv.schedulers import REGISTRY, SERIAL

ARCHITECTURES = ("ARM Kunpeng", "x86 EPYC", "x86 Xeon")
"""The paper's machines (§5.3): Kunpeng 920 2×48 cores, EPYC 7763 2×64, Xeon 6238T 2×22."""

SINGLE_SOCKET = {"ARM Kunpeng": 48, "x86 EPYC": 64, "x86 Xeon": 22}
"""Cores of one full socket: the core count of Table 6.3."""

GROUPS = ("SuiteSparse", "iChol", "METIS")
"""Data set groups in the order of the paper's tables (§5.2.1–5.2.3)."""

PAPER_GROUP_LABELS = {"SuiteSparse": "Suite", "iChol": "iChol", "METIS": "Metis"}

ALGORITHM_NAMES = {SERIAL.name: SERIAL.label, **{name: algorithm.label for name, algorithm in REGISTRY.items()}}
"""How the paper spells each algorithm of the result rows: the label each scheduler declares, in the
order of the paper's tables."""

PAPER_KERNELS = {"hdagg": "bsp", "growlocal": "bsp", "elastic_divide": "ssp", "spmp": "p2p"}
"""The kernel each scheduler's schedule runs with in the paper's Tables 6.3 and Figures 5.1/6.1
(ElasticDivide with its SSP kernel; its BSP run appears only in Table 6.2)."""

STALENESS = 2
"""ElasticDivide's staleness in the paper (§2.2, §6.3): its barriers are weak, count them ×2."""

# Table 6.1: geometric-mean reduction of synchronisation barriers, wavefronts / supersteps.
# No architecture: a schedule's superstep count depends on the matrix and core count only.
# Prose check (§1): GrowLocal / (2 × ElasticDivide) spans 0.85 (METIS, 128) to 1.28 (Suite, 128).
TABLE_6_1: dict[tuple[str, int], dict[str, float]] = {
    ("SuiteSparse", 16): {"hdagg": 1.34, "growlocal": 16.02, "elastic_divide": 6.74},
    ("SuiteSparse", 32): {"hdagg": 1.15, "growlocal": 12.78, "elastic_divide": 5.10},
    ("SuiteSparse", 64): {"hdagg": 1.06, "growlocal": 11.35, "elastic_divide": 4.48},
    ("SuiteSparse", 128): {"hdagg": 1.07, "growlocal": 10.69, "elastic_divide": 4.17},
    ("iChol", 16): {"hdagg": 1.64, "growlocal": 20.74, "elastic_divide": 10.33},
    ("iChol", 32): {"hdagg": 1.52, "growlocal": 17.35, "elastic_divide": 8.62},
    ("iChol", 64): {"hdagg": 1.44, "growlocal": 14.58, "elastic_divide": 7.76},
    ("iChol", 128): {"hdagg": 1.37, "growlocal": 13.30, "elastic_divide": 7.01},
    ("METIS", 16): {"hdagg": 2.57, "growlocal": 16.73, "elastic_divide": 8.59},
    ("METIS", 32): {"hdagg": 2.10, "growlocal": 14.54, "elastic_divide": 8.15},
    ("METIS", 64): {"hdagg": 1.87, "growlocal": 12.70, "elastic_divide": 7.22},
    ("METIS", 128): {"hdagg": 1.74, "growlocal": 11.38, "elastic_divide": 6.73},
}

# Table 6.2: geometric-mean speed-up of the SSP kernel over the BSP kernel, both running
# ElasticDivide's schedule: t_bsp / t_ssp. Prose checks: "up to 4.5×" (ARM, Suite, 96 cores);
# x86 EPYC on METIS is the exception that falls with the core count (1.07 → 0.96/0.99).
TABLE_6_2: dict[tuple[str, int], dict[str, float]] = {
    ("ARM Kunpeng", 16): {"SuiteSparse": 1.57, "iChol": 1.07, "METIS": 1.06},
    ("ARM Kunpeng", 32): {"SuiteSparse": 1.95, "iChol": 1.15, "METIS": 1.13},
    ("ARM Kunpeng", 48): {"SuiteSparse": 2.17, "iChol": 1.35, "METIS": 1.21},
    ("ARM Kunpeng", 64): {"SuiteSparse": 2.82, "iChol": 1.37, "METIS": 1.34},
    ("ARM Kunpeng", 80): {"SuiteSparse": 3.23, "iChol": 1.76, "METIS": 1.48},
    ("ARM Kunpeng", 96): {"SuiteSparse": 4.51, "iChol": 2.02, "METIS": 1.65},
    ("x86 EPYC", 16): {"SuiteSparse": 1.23, "iChol": 1.08, "METIS": 1.07},
    ("x86 EPYC", 32): {"SuiteSparse": 1.36, "iChol": 1.09, "METIS": 1.07},
    ("x86 EPYC", 48): {"SuiteSparse": 1.47, "iChol": 1.12, "METIS": 1.06},
    ("x86 EPYC", 64): {"SuiteSparse": 1.60, "iChol": 1.12, "METIS": 1.05},
    ("x86 EPYC", 80): {"SuiteSparse": 1.84, "iChol": 1.13, "METIS": 1.03},
    ("x86 EPYC", 96): {"SuiteSparse": 1.93, "iChol": 1.18, "METIS": 1.01},
    ("x86 EPYC", 112): {"SuiteSparse": 2.01, "iChol": 1.16, "METIS": 0.96},
    ("x86 EPYC", 128): {"SuiteSparse": 2.19, "iChol": 1.13, "METIS": 0.99},
    ("x86 Xeon", 11): {"SuiteSparse": 1.11, "iChol": 1.05, "METIS": 1.03},
    ("x86 Xeon", 22): {"SuiteSparse": 1.33, "iChol": 1.08, "METIS": 1.12},
    ("x86 Xeon", 33): {"SuiteSparse": 1.34, "iChol": 1.13, "METIS": 1.12},
    ("x86 Xeon", 44): {"SuiteSparse": 1.15, "iChol": 1.10, "METIS": 1.08},
}

# Table 6.3: median amortisation (Eq. 6.1) at one full socket (SINGLE_SOCKET cores). SpMP is
# x86-only. Prose checks (§6.5): SpMP 5–10 on x86, ElasticDivide 12–25, GrowLocal 31–58,
# HDagg 55–86 on METIS up to 2820 on Suite (x86 EPYC).
TABLE_6_3: dict[tuple[str, str], dict[str, float | None]] = {
    ("ARM Kunpeng", "METIS"): {"hdagg": 54.82, "spmp": None, "growlocal": 33.59,
                               "elastic_divide": 13.60},
    ("ARM Kunpeng", "iChol"): {"hdagg": 211.01, "spmp": None, "growlocal": 35.38,
                               "elastic_divide": 13.16},
    ("ARM Kunpeng", "SuiteSparse"): {"hdagg": 1763.03, "spmp": None, "growlocal": 31.10,
                                     "elastic_divide": 11.59},
    ("x86 EPYC", "METIS"): {"hdagg": 85.59, "spmp": 5.41, "growlocal": 52.91,
                            "elastic_divide": 21.32},
    ("x86 EPYC", "iChol"): {"hdagg": 331.20, "spmp": 7.13, "growlocal": 53.88,
                            "elastic_divide": 22.97},
    ("x86 EPYC", "SuiteSparse"): {"hdagg": 2819.82, "spmp": 9.20, "growlocal": 58.28,
                                  "elastic_divide": 17.51},
    ("x86 Xeon", "METIS"): {"hdagg": 59.52, "spmp": 5.88, "growlocal": 43.79,
                            "elastic_divide": 21.60},
    ("x86 Xeon", "iChol"): {"hdagg": 227.06, "spmp": 7.54, "growlocal": 46.66,
                            "elastic_divide": 22.80},
    ("x86 Xeon", "SuiteSparse"): {"hdagg": 1398.14, "spmp": 7.20, "growlocal": 45.51,
                                  "elastic_divide": 25.10},
}

# Figure 6.2: the slopes m of log(t_schedule) = m log(nnz) + c that §6.5 states, over the three
# architectures: (low, high); None = not stated. Only HDagg is super-linear.
FIG_6_2_SLOPES: dict[str, tuple[float | None, float]] = {
    "hdagg": (1.38, 1.56),
    "spmp": (None, 1.0),
    "growlocal": (None, 1.0),
    "elastic_divide": (None, 1.0),
}
FIG_6_2_NOTE = ("ElasticDivide computes its schedule about twice as fast as GrowLocal "
                "(distance of the fitted lines, §6.5).")

#: (figure, architecture, cores, quantity, {(group, algorithm): value}): the quoted speed-ups, one
#: quantity at a time
_QUOTED = (
    ("6.1", "ARM Kunpeng", 64, "geomean speed-up over Serial",
     {("METIS", "elastic_divide"): 20.00, ("METIS", "growlocal"): 17.93}),
    ("1.1", "ARM Kunpeng", 48, "geomean speed-up of ElasticDivide over GrowLocal",
     {("SuiteSparse", "elastic_divide"): 1.30, ("iChol", "elastic_divide"): 1.07, ("METIS", "elastic_divide"): 1.17}),
    ("§1", "x86 EPYC", 48, "geomean speed-up of ElasticDivide over SpMP",
     {("SuiteSparse", "elastic_divide"): 1.19, ("iChol", "elastic_divide"): 1.60, ("METIS", "elastic_divide"): 1.26}),
)
QUOTED_FIGURES: tuple[dict[str, object], ...] = tuple(
    {"figure": figure, "architecture": architecture, "group": group, "cores": cores, "quantity": quantity,
     "algorithm": algorithm, "value": value}
    for figure, architecture, cores, quantity, cells in _QUOTED for (group, algorithm), value in cells.items())
"""Speed-ups the text quotes from Figures 6.1 and 1.1 (§6.2: "20.00 on the Metis data set on 64
cores ... 12% higher than ... 17.93"; §1: "30%, 7%, and 17%" over GrowLocal on Kunpeng and "19%,
60%, and 26%" over SpMP on EPYC, both at 48 cores)."""


def table_6_1() -> pd.DataFrame:
    """Table 6.1 tidy: ``group, cores, algorithm, reduction``."""
    return pd.DataFrame([{"group": g, "cores": c, "algorithm": a, "reduction": v}
                         for (g, c), cells in TABLE_6_1.items() for a, v in cells.items()])


def table_6_2() -> pd.DataFrame:
    """Table 6.2 tidy: ``architecture, cores, group, ssp_over_bsp``."""
    return pd.DataFrame([{"architecture": arch, "cores": c, "group": g, "ssp_over_bsp": v}
                         for (arch, c), cells in TABLE_6_2.items() for g, v in cells.items()])


def table_6_3() -> pd.DataFrame:
    """Table 6.3 tidy: ``architecture, cores, group, algorithm, amortisation`` (NaN for "—")."""
    return pd.DataFrame([{"architecture": arch, "cores": SINGLE_SOCKET[arch], "group": g,
                          "algorithm": a, "amortisation": float("nan") if v is None else v}
                         for (arch, g), cells in TABLE_6_3.items() for a, v in cells.items()])


def quoted_figures() -> pd.DataFrame:
    """:data:`QUOTED_FIGURES` as a frame."""
    return pd.DataFrame(list(QUOTED_FIGURES))
