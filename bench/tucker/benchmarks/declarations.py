"""The Tucker benchmarks of `spbench bench` (tucker-lite-distribution §6–8), declared: the schemes'
distribution time (lite), HOOI and TTM alone (hooi, ttm), memory at scale under MPI (tucker-scale),
SPLATT's Tucker beside ours (splatt) and the cost model against the MPI worker (tucker-model).

Scheme names, Lanczos modes and TTM kinds are read from their registries when a value is checked
or a command's help is shown; listing the benchmarks imports only this file.
"""
from __future__ import annotations

import shutil
import tempfile

from spbench.harness.calibration_option import CALIBRATION
from spbench.harness.declaration import Benchmark
from spbench.harness.options import BadOption, Option, executable

TABLES = "spbench.tucker.benchmarks.tables"
#: the units of the figures these benchmarks' rows carry beyond the shared ones (spbench.harness.rows.UNITS)
UNITS = {"words_per_rank_max": "words", "lanczos_residual_max": "1", "theorem_slack": "1", "hooi_time": "s",
         "paper_time": "s", "paper_gflops": "GFLOP/s", "flop_reduction": "1", "splatt_ttm": "s", "splatt_svd": "s",
         "csf_ttm": "s", "spbench_svd": "s",
         **{f"{w}_{k}": "1" if w == "rel_error" else "s" for k in ("hooi_time", "ttm_time", "svd_time", "comm_time",
                                                                        "wait_time", "other_time")
            for w in ("measured", "predicted", "rel_error")}}
SCHEMES = "spbench.tucker.schemes:SCHEMES"
LANCZOS = "spbench.tucker.hooi.variants:LANCZOS_MODES"
TTM = "spbench.tucker.hooi.variants:TTM_KINDS"
TTM_CASES = "spbench.tucker.benchmarks.ttm_bench:CASES"


def _at_most_exponents(options: dict) -> dict:
    """--dims: no more modes than the power-law generator has exponents."""
    from .scheme_bench import EXPONENTS

    if len(options["dims"]) > len(EXPONENTS):
        raise BadOption(f"--dims: at most {len(EXPONENTS)} modes, got {','.join(map(str, options['dims']))!r}")
    return options


def _lite(o: dict, run) -> list[dict]:
    from .scheme_bench import bench_schemes

    return bench_schemes(o["nnz"], tuple(o["dims"]), o["ranks"], o["repeats"], run.say)


def _hooi(o: dict, run) -> list[dict]:
    from .hooi_bench import bench_hooi

    return bench_hooi(o["cases"], o["threads"], o["seed"], o["skip_pyttb"], o["skip_pyttb_4way"], o["timeout"],
                      o["reps"], run.say)


def _ttm(o: dict, run) -> list[dict]:
    from .ttm_bench import bench_ttm

    return bench_ttm(o["cases"], o["threads"], o["nell2_nnz"], o["reps"], o["seed"], run.say)


def _scale(o: dict, run) -> list[dict]:
    from .scale_bench import bench_scale

    work = run.out / ".jobs" / "scale"
    try:
        return bench_scale(o["ranks"], o["schemes"], tuple(o["dims"]), o["nnz"], o["K"], o["lanczos"], o["timeout"],
                           work, run.say)
    finally:
        shutil.rmtree(work, ignore_errors=True)


def _splatt_binary(options: dict) -> dict:
    return {**options, "binary": executable("--binary", options["binary"])}


def _splatt(o: dict, run) -> list[dict]:
    from .splatt_side import splatt_rounds

    with tempfile.TemporaryDirectory(prefix="spbench-splatt-") as work:
        return splatt_rounds(o["binary"], o["cases"], o["threads"], o["reps"], o["nell2_nnz"], o["seed"], work,
                             run.say, o["iterations"])


def _ranks(default: str) -> Option:
    return Option("--ranks", "ints", default, "Comma-separated rank counts.")


def _schemes(default: str) -> Option:
    return Option("--schemes", "names", default, choices=SCHEMES)


NELL2_NNZ = Option("--nell2-nnz", "int", 5_000_000, minimum=1)
SEED = Option("--seed", "int", 0)

BENCHMARKS = (
    Benchmark("lite", "Lite against CoarseG and MediumG on a power-law tensor, with Lite's Theorem 6.1 slack.",
              (Option("--nnz", "int", 10_000_000, minimum=1),
               Option("--dims", "ints", "100000,50000,2000000", "Comma-separated mode lengths."),
               Option("--ranks", "int", 512, minimum=1), Option("--repeats", "int", 3, minimum=1)),
              _lite, f"{TABLES}:lite_table", "tucker", check=_at_most_exponents),
    Benchmark("hooi", "One HOOI invocation of spbench against pyttb.tucker_als, and the TTM kernel's throughput.",
              (Option("--threads", "int", 1, minimum=1), SEED,
               Option("--cases", "names", "3way,4way", choices="spbench.tucker.benchmarks.hooi_bench:CASES"),
               Option("--skip-pyttb-4way", "flag", help="Do not run pyttb on the 4-way case."),
               Option("--skip-pyttb", "flag", help="Do not run pyttb at all."),
               Option("--timeout", "float", 1800.0, "Seconds per child process.", minimum=0, open_minimum=True),
               Option("--reps", "int", 3, "TTM throughput repetitions.", minimum=1)),
              _hooi, f"{TABLES}:hooi_table", "tucker"),
    Benchmark("ttm", "The csf TTM against the paper's element-wise TTM on every mode, interleaved rounds.",
              (Option("--threads", "ints", "1,2", "Comma-separated thread counts."),
               Option("--cases", "names", "3way,4way,nell2", choices=TTM_CASES), NELL2_NNZ,
               Option("--reps", "int", 5, minimum=1), SEED),
              _ttm, f"{TABLES}:ttm_table", "tucker"),
    Benchmark("tucker-scale", "Per-rank memory, words and queries of the measured HOOI as P grows (MPI, "
                              "oversubscribed).",
              (_ranks("1,2,4,8"), _schemes("lite,medium,coarse"),
               Option("--dims", "ints", "3000,4000,2000000", minimum=2),
               Option("--nnz", "int", 4_000_000, minimum=1), Option("--K", "int", 10, key="K", minimum=1),
               Option("--lanczos", "choice", "paper", choices=LANCZOS),
               Option("--timeout", "float", 3600.0, "Seconds per MPI job.", minimum=0, open_minimum=True)),
              _scale, f"{TABLES}:scale_table", "tucker"),
    Benchmark("splatt", "SPLATT's TTM and SVD against our csf TTM and Lanczos, interleaved rounds.",
              (Option("--binary", "text", required=True, help="The splatt executable (built from its branch tucker)."),
               Option("--threads", "ints", "1,2", "Comma-separated thread counts."),
               Option("--iterations", "int", 10, "HOOI iterations per round on both sides (SPLATT's timers print "
                      "milliseconds).", minimum=1),
               Option("--cases", "names", "3way,4way,nell2", choices=TTM_CASES), NELL2_NNZ,
               Option("--reps", "int", 5, "Interleaved rounds.", minimum=1), SEED),
              _splatt, f"{TABLES}:splatt_table", "tucker", check=_splatt_binary),
    Benchmark("tucker-model", "Measured (the MPI worker) against modelled Tucker times on a stand-in tensor.",
              (Option("--tensor", "name", "nell2", "The paper tensor whose stand-in runs.",
                      choices="spbench.datasets.tensor_registry:TENSORS"),
               Option("--nnz", "int", 200_000, minimum=1), _ranks("1,2"), _schemes("coarse,medium,lite"),
               Option("--K", "int", 10, key="K", short="-K", minimum=1),
               Option("--lanczos", "choice", "paper", choices=LANCZOS),
               Option("--ttm", "choice", "csf", choices=TTM),
               Option("--repeats", "int", 3, minimum=1),
               Option("--csv", "file", None, "Also write the validation table here as CSV.", as_path=True,
                      show_default=False, stored=False),
               CALIBRATION),
              "spbench.tucker.benchmarks.model_bench:measure", f"{TABLES}:tucker_model_table",
              "tucker", check="spbench.tucker.benchmarks.model_bench:check"),
)
