"""sptrsv-elasticity's claims as data (abstract, §1.1, §6.1–6.5, Tables 6.1–6.3, Figs. 1.1, 6.1, 6.2),
each with the function computing ours from SpTrSV result rows, for :mod:`spbench.report.claims`.

The paper's numbers come from :mod:`spbench.sptrsv.report.paper_values`; ranges the text states
("0.85× to 1.28×", "12 to 25") are derived from its tables, the text's words quoted beside them. The
paper's machines (ARM Kunpeng 920, x86 EPYC 7763, x86 Xeon 6238T, §5.3) are not recorded in the rows:
every value is this machine's (or its cost model's) at the claim's core count, and a claim about one
architecture against another is not measurable here. Schedulers run on the kernels of the paper's
figures (:data:`~spbench.sptrsv.report.paper_values.PAPER_KERNELS`); Table 6.2 compares ElasticDivide's
schedule on both kernels.
"""
from __future__ import annotations

from spbench.report.claims import Claim
from spbench.sptrsv.report import paper_values as paper
from spbench.sptrsv.report.fig6_2_scheduling_time import WIDE_DECADES
from spbench.sptrsv.report.claim_checks import (
    NAME, RUN_FIG62, RUN_SCHEDULES, RUN_SOLVES, _gl_over_ed2, amortisation_order, amortisation_range,
    architectures, barrier_groups, barrier_range, best_of, depth_first, drop_at_80, ed_twice, hdagg_barriers,
    hdagg_metis, over, quoted_speedup, slopes, spmp_fastest, ssp_cases, ssp_value, table61_cells,
    table63_cells)

TITLE = "sptrsv-elasticity: stale-synchronous SpTrSV with ElasticDivide"
EXPERIMENT = "sptrsv"
def _claim(id, where, quantity, printed, conditions, compute, tolerance="", settle=""):
    return Claim(id, where, quantity, printed, conditions, compute, tolerance, settle)


_ARM48 = RUN_SOLVES.format(cores=48, machine="ARM Kunpeng 920")
_ARM64 = RUN_SOLVES.format(cores=64, machine="ARM Kunpeng 920")
_T62 = "`make table6.2` at 16–128 cores on a NUMA machine (the paper's ARM Kunpeng 920: 4 NUMA domains)"
_T63 = "`make table6.3` at a full socket (22, 48 or 64 cores) of the paper's machines"
_printed = _gl_over_ed2(paper.table_6_1())
CLAIMS = (
    _claim("S-abs-growlocal", "abstract, §1, Fig. 1.1, §7", "ElasticDivide over GrowLocal (geomean speed-up)",
           "7–30% (SuiteSparse 1.30, iChol 1.07, METIS 1.17)", "ARM Kunpeng 920, 48 cores, three data sets",
           over("growlocal", "1.1"), "each data set within ±10% of the ratio", _ARM48),
    _claim("S-abs-spmp", "abstract, §1", "ElasticDivide over SpMP (geomean speed-up)",
           "19–60% (SuiteSparse 1.19, iChol 1.60, METIS 1.26)", "x86 EPYC 7763, 48 cores, three data sets",
           over("spmp", "§1"), "each data set within ±10% of the ratio", RUN_SOLVES.format(cores=48, machine="x86 EPYC")),
    _claim("S-6.2-ed", "§6.2, Fig. 6.1", "ElasticDivide's geomean speed-up over Serial", "20.00",
           "ARM Kunpeng 920, 64 cores, METIS", quoted_speedup("elastic_divide"), "±25%", _ARM64),
    _claim("S-6.2-ed-gl", "§6.2, Fig. 6.1", "ElasticDivide's speed-up over GrowLocal's", "12% higher (20.00 vs 17.93)",
           "ARM Kunpeng 920, 64 cores, METIS", quoted_speedup(None), "±10% of the ratio", _ARM64),
    _claim("S-6.2-arm-best", "§6.1–6.2, Figs. 5.1, 6.1", "best scheduler per data set and core count",
           "ElasticDivide on all data sets (ARM)", "ARM Kunpeng 920, 16–96 cores", best_of(("elastic_divide",)),
           "strict ordering", RUN_SOLVES.format(cores="16–96", machine="ARM Kunpeng 920")),
    _claim("S-6.2-x86-top", "§6.1–6.2, Figs. 5.1, 6.1", "best scheduler per data set and core count",
           "GrowLocal or ElasticDivide (x86)", "x86 EPYC / Xeon", best_of(("elastic_divide", "growlocal")),
           "the best is one of the two", RUN_SOLVES.format(cores="16–128", machine="x86 EPYC")),
    _claim("S-6.2-drop80", "§6.2, Fig. 6.1", "geomean speed-up from 64 to 80 cores", "drops on all architectures",
           "64 and 80 cores", drop_at_80, "lower at 80 per data set and scheduler",
           RUN_SOLVES.format(cores="64 and 80", machine="machines")),
    _claim("S-6.2-hdagg", "§6.2, Fig. 6.1", "HDagg's scaling with cores", "scales on METIS only",
           "16–128 cores", hdagg_metis, "growth from the fewest to the most cores below METIS's",
           RUN_SOLVES.format(cores="16–128", machine="machines")),
    _claim("S-1-ssp-2x", "§1.1, Table 6.2", "SSP over BSP kernel, ElasticDivide's schedule",
           "2× with many threads (synchronisation-heavy)", "SuiteSparse, ≥ 48 cores", ssp_value(2.0, 48), "±25%", _T62),
    _claim("S-1-ssp-4.5x", "§1.1, §7, Table 6.2", "SSP over BSP kernel, up to",
           f"{paper.TABLE_6_2[('ARM Kunpeng', 96)]['SuiteSparse']}× (up to 4.5×)", "ARM Kunpeng 920, 96 cores, SuiteSparse",
           ssp_value(paper.TABLE_6_2[("ARM Kunpeng", 96)]["SuiteSparse"], 96), "±25%", _T62),
    _claim("S-6.4-beneficial", "§6.4, Table 6.2", "SSP over BSP per data set and core count",
           "> 1 (all but x86 EPYC METIS at 112–128 cores)", "all architectures, 11–128 cores", ssp_cases("gt1"),
           "> 1 in every cell", _T62),
    _claim("S-6.4-suite", "§6.4, Table 6.2", "SSP over BSP by data set", "higher on SuiteSparse than METIS",
           "every core count", ssp_cases("suite"), "strict ordering per core count", _T62),
    _claim("S-6.4-cores", "§6.4, Table 6.2", "SSP over BSP with the core count", "larger at higher core counts",
           "per data set", ssp_cases("cores"), "most cores above fewest", _T62),
    _claim("S-6.4-arm", "§6.4, Table 6.2", "SSP over BSP by architecture", "larger on ARM than x86",
           "ARM Kunpeng 920 vs x86 EPYC/Xeon", architectures, "",
           "`make table6.2` on an ARM Kunpeng 920 and on an x86 EPYC, then `make claims` over both folders"),
    _claim("S-t6.1", "§6.3, Table 6.1", "barrier reduction over wavefronts (geomean)",
           f"the {len(paper.table_6_1())} printed values", "16–128 cores, three data sets", table61_cells,
           "each within ±25%", RUN_SCHEDULES),
    _claim("S-1-barriers", "§1.1, §6.3, Table 6.1", "ElasticDivide's barriers ×2 against GrowLocal's",
           f"0.85× to 1.28× (Table 6.1: {_printed.min():.2f}–{_printed.max():.2f})", "16–128 cores, three data sets",
           barrier_range, "both ends within ±10%", RUN_SCHEDULES),
    _claim("S-6.3-groups", "§6.3, Table 6.1", "ElasticDivide (×2) against GrowLocal by data set",
           "slightly better on METIS, slightly worse on SuiteSparse", "16–128 cores", barrier_groups,
           "GrowLocal/(2·ElasticDivide) < 1 on METIS, > 1 on SuiteSparse", RUN_SCHEDULES),
    _claim("S-6.3-hdagg", "§6.3, Table 6.1", "HDagg's barrier reduction",
           "larger on METIS, falling with the core count", "16–128 cores", hdagg_barriers, "strict orderings",
           RUN_SCHEDULES),
    _claim("S-6.3-depth", "§6.3, Table 6.1", "depth-first schedulers against HDagg",
           "GrowLocal and ElasticDivide pack more compute per barrier", "16–128 cores", depth_first,
           "both reductions (ElasticDivide ×2) above HDagg's", RUN_SCHEDULES),
    _claim("S-t6.3", "§6.5, Table 6.3", "median amortisation (Eq. 6.1)",
           f"the {int(paper.table_6_3()['amortisation'].notna().sum())} printed values",
           "a full socket: 48 (ARM), 64 (EPYC), 22 (Xeon) cores", table63_cells, "each within ±50%", _T63),
    _claim("S-6.5-order", "§6.5, Table 6.3", "amortisation order", "SpMP < ElasticDivide < GrowLocal < HDagg",
           "a full socket", amortisation_order, "strict ordering per data set", _T63),
    *(_claim(f"S-6.5-amort-{a}", "§6.5, Table 6.3", f"{NAME[a]}'s median amortisation over data sets and machines",
             text, "a full socket", amortisation_range(a), "both ends within ±50%", _T63)
      for a, text in (("spmp", "5–10 (x86)"), ("elastic_divide", "12 to 25"), ("growlocal", "31 to 58"),
                      ("hdagg", "55–86 (METIS) up to 2820 (SuiteSparse, EPYC)"))),
    _claim("S-6.5-spmp", "§6.5, Fig. 6.2", "fastest scheduler", "SpMP is the fastest in scheduling time",
           "a full socket, every matrix", spmp_fastest, "fastest on every matrix", RUN_FIG62),
    _claim("S-6.5-slopes", "§6.5, Fig. 6.2", "slope m of log t_schedule = m log nnz + c",
           "HDagg 1.38–1.56; the others ≤ 1.0", f"≥ {WIDE_DECADES:g} decades of nnz", slopes, "±0.1 on the slope",
           RUN_FIG62),
    _claim("S-6.5-ed-gl", "§6.5, Fig. 6.2", "GrowLocal's scheduling time over ElasticDivide's",
           "ElasticDivide twice as fast", "every matrix", ed_twice, "median within ±33% of 2", RUN_FIG62),
)
