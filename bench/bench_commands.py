"""``spbench bench NAME``: the benchmarks as subcommands that store their rows like any sweep.

Each subcommand measures its items side by side in one invocation (progress on stderr), stores
one row per item in ``--out`` (default ``results/bench-NAME/``; see :mod:`spbench.bench_rows`:
a second invocation appends its rows as the next repeat, ``--fresh`` starts over) and prints the
benchmark's Markdown table (:mod:`spbench.bench_tables`) on stdout. A bad option is one
line and exit code 2 with nothing written; exit 1 when an item ended error, timeout or invalid.
"""
from __future__ import annotations

import json
import sys
from datetime import datetime, timezone
from pathlib import Path

import click

from spbench.cli_errors import OneLineCommand, UsageFailure


class BenchCommand(OneLineCommand):
    """A benchmark subcommand whose option errors are one line (no usage block)."""

    prefix = "spbench bench"


class BenchGroup(click.Group):
    """`spbench bench`: an unknown benchmark is one line too."""

    def resolve_command(self, ctx, args):
        try:
            return super().resolve_command(ctx, args)
        except click.UsageError as exc:
            raise UsageFailure(f"spbench bench: {exc.format_message()}") from None


@click.group(cls=BenchGroup, context_settings={"help_option_names": ["-h", "--help"]})
def bench():
    """Benchmarks measured side by side; rows land in results/bench-NAME/ (spbench profile/compare read them)."""


def common_options(fn):
    """--out, --fresh and --quiet, shared by every benchmark."""
    fn = click.option("--quiet", "-q", is_flag=True, help="No progress on stderr.")(fn)
    fn = click.option("--fresh", is_flag=True, help="Forget the rows stored in the folder first "
                      "(default: add this invocation's rows as the next repeat).")(fn)
    return click.option("--out", "out_dir", type=click.Path(path_type=Path), default=None,
                        help="Results folder (default results/bench-NAME/).")(fn)


def _command(name: str):
    return bench.command(name, cls=BenchCommand)


def parse_ints(name: str, option: str, text: str, minimum: int = 1) -> list[int]:
    """``"1,2,4"`` → [1, 2, 4]; a UsageFailure naming the option otherwise."""
    try:
        values = [int(v) for v in text.split(",")]
    except ValueError:
        values = []
    if not values or min(values) < minimum:
        raise UsageFailure(f"spbench bench {name}: {option}: expected comma-separated integers >= {minimum}, "
                              f"got {text!r}")
    return values


def parse_names(name: str, option: str, text: str, known) -> list[str]:
    values = [v for v in text.split(",") if v]
    unknown = [v for v in values if v not in known]
    if not values or unknown:
        raise UsageFailure(f"spbench bench {name}: {option}: expected names out of {', '.join(known)}, "
                              f"got {text!r}")
    return values


def check_cores(name: str, cores: int) -> int:
    from spbench.machine import usable_cores

    if cores > usable_cores():
        raise UsageFailure(f"spbench bench {name}: --cores: this machine runs at most {usable_cores()} "
                              f"cores, got {cores}")
    return cores


def measure_and_store(name: str, options: dict, code: str, measure, out_dir, fresh: bool, quiet: bool) -> None:
    """Lock the folder, measure (``measure(say)`` → items), store the rows, print the table."""
    from spbench.atomic_files import WriteFailed
    from spbench.bench_rows import bench_folder, store_items
    from spbench.bench_tables import bench_table
    from spbench.results import ResultsBusy

    out = out_dir or Path("results") / f"bench-{name}"
    options = json.loads(json.dumps(options))

    def say(text: str) -> None:
        if not quiet:
            click.echo(f"spbench bench {name}: {text}", err=True)

    started = datetime.now(timezone.utc).isoformat(timespec="seconds")
    try:
        with bench_folder(out, fresh=fresh) as store:   # a folder nothing can be written into: exit 2
            items = measure(say)
            try:
                rows = store_items(store, name, options, items, code=code, started_at=started)
            except WriteFailed as exc:
                raise click.ClickException(f"{exc}; the rows written before it are kept in {out}") from None
    except (ResultsBusy, WriteFailed) as exc:
        raise UsageFailure(str(exc)) from None
    click.echo(bench_table(rows))
    failed = [r for r in rows if r["status"] not in ("ok", "skipped")]
    say(f"{len(rows)} rows in {out}" + (f"; {len(failed)} not ok: " + ", ".join(
        f"{r['item']} {r['status']}" for r in failed) if failed else ""))
    if failed:
        sys.exit(1)


@_command("serial")
@click.option("--grid", type=click.IntRange(min=2), default=400, show_default=True, help="lap2d-5pt grid side.")
@click.option("--repeats", type=click.IntRange(min=1), default=100, show_default=True, help="Timed solves.")
@click.option("--dram-mib", type=click.IntRange(min=1), default=256, show_default=True,
              help="Buffer of the DRAM copy bandwidth.")
@common_options
def serial(grid, repeats, dram_mib, out_dir, fresh, quiet):
    """Our serial kernel against scipy's spsolve_triangular, its traffic against copy bandwidth."""
    from spbench.sptrsv.benchmarks.kernel_bench import bench_serial

    measure_and_store("serial", {"grid": grid, "repeats": repeats, "dram_mib": dram_mib}, "sptrsv",
                      lambda say: bench_serial(grid, repeats, dram_mib * 2**20, say), out_dir, fresh, quiet)


def _grid_options(rounds: int):
    """--grid, --cores, --repeats, --rounds: a wavefront-family run on one lap2d-5pt grid."""
    def add(fn):
        for option in reversed((
                click.option("--grid", type=click.IntRange(min=2), default=300, show_default=True),
                click.option("--cores", type=click.IntRange(min=1), default=2, show_default=True),
                click.option("--repeats", type=click.IntRange(min=1), default=100, show_default=True),
                click.option("--rounds", type=click.IntRange(min=1), default=rounds, show_default=True))):
            fn = option(fn)
        return common_options(fn)
    return add


def _grid_bench(name: str, measure, grid, cores, repeats, rounds, out_dir, fresh, quiet) -> None:
    check_cores(name, cores)
    measure_and_store(name, {"grid": grid, "cores": cores, "repeats": repeats, "rounds": rounds}, "sptrsv",
                      lambda say: measure(grid, cores, repeats, rounds, say), out_dir, fresh, quiet)


@_command("barrier")
@_grid_options(rounds=5)
def barrier(**options):
    """The spin barrier against OpenMP's on the wavefront schedule (BSP kernel), interleaved rounds."""
    from spbench.sptrsv.benchmarks.kernel_bench import bench_barrier

    _grid_bench("barrier", bench_barrier, **options)


@_command("schedulers")
@_grid_options(rounds=3)
def schedulers(**options):
    """Every scheduler on its own kernel: supersteps, scheduling and solve time, backward error."""
    from spbench.sptrsv.benchmarks.kernel_bench import bench_schedulers

    _grid_bench("schedulers", bench_schedulers, **options)


@_command("slope")
@click.option("--grids", default="100,200,350,550", show_default=True, help="Comma-separated grid sides.")
@click.option("--trials", type=click.IntRange(min=1), default=7, show_default=True)
@common_options
def slope(grids, trials, out_dir, fresh, quiet):
    """Scheduling time of each scheduler against nnz and its log-log slope (sptrsv-elasticity Fig. 6.2)."""
    from spbench.sptrsv.benchmarks.kernel_bench import bench_slope

    sides = parse_ints("slope", "--grids", grids, minimum=2)
    if len(set(sides)) < 2:
        raise UsageFailure(f"spbench bench slope: --grids: a slope needs two different grids, got {grids!r}")
    measure_and_store("slope", {"grids": sides, "trials": trials}, "sptrsv",
                      lambda say: bench_slope(sides, trials, say), out_dir, fresh, quiet)


@_command("order")
@click.option("--repeats", type=click.IntRange(min=1), default=100, show_default=True)
@click.option("--rounds", type=click.IntRange(min=1), default=5, show_default=True)
@click.option("--datasets", default="", help="Comma-separated data sets instead of the generated grids, e.g. "
              "Flan_1565,thermal2+metis (stand-ins when not cached) or 'lap2d-5pt[grid=200]'.")
@common_options
def order(repeats, rounds, datasets, out_dir, fresh, quiet):
    """The serial kernel in natural, wavefront and SpMP order, and the wavefront schedule, at one core."""
    from spbench.datasets.errors import DatasetError
    from spbench.datasets.registry import resolve
    from spbench.sptrsv.benchmarks.order_bench import MATRICES, bench_matrix

    names = [d.strip() for d in _split_datasets(datasets) if d.strip()]
    for d in names:
        try:
            resolve(d)
        except DatasetError as exc:
            raise UsageFailure(f"spbench bench order: --datasets: {exc}") from None
    matrices = [(d, None) for d in names] or list(MATRICES)

    def measure(say):
        items = []
        for i, (m, params) in enumerate(matrices, 1):
            say(f"[{i}/{len(matrices)}] {m} {params or ''}".rstrip())
            items += bench_matrix(m, params, repeats, rounds)
        return items

    measure_and_store("order", {"repeats": repeats, "rounds": rounds, "datasets": names}, "sptrsv", measure,
                      out_dir, fresh, quiet)


def _split_datasets(text: str) -> list[str]:
    """Comma-separated names; commas inside ``[...]`` belong to a generator's parameters."""
    parts, depth, current = [], 0, ""
    for ch in text:
        depth += (ch == "[") - (ch == "]")
        if ch == "," and depth == 0:
            parts.append(current)
            current = ""
        else:
            current += ch
    return parts + [current]


@_command("lite")
@click.option("--nnz", type=click.IntRange(min=1), default=10_000_000, show_default=True)
@click.option("--dims", default="100000,50000,2000000", show_default=True, help="Comma-separated mode lengths.")
@click.option("--ranks", type=click.IntRange(min=1), default=512, show_default=True)
@click.option("--repeats", type=click.IntRange(min=1), default=3, show_default=True)
@common_options
def lite(nnz, dims, ranks, repeats, out_dir, fresh, quiet):
    """Lite against CoarseG and MediumG on a power-law tensor, with Lite's Theorem 6.1 slack."""
    from spbench.tucker.benchmarks.scheme_bench import EXPONENTS, bench_schemes

    lengths = parse_ints("lite", "--dims", dims)
    if len(lengths) > len(EXPONENTS):
        raise UsageFailure(f"spbench bench lite: --dims: at most {len(EXPONENTS)} modes, got {dims!r}")
    measure_and_store("lite", {"nnz": nnz, "dims": lengths, "ranks": ranks, "repeats": repeats}, "tucker",
                      lambda say: bench_schemes(nnz, tuple(lengths), ranks, repeats, say), out_dir, fresh, quiet)


@_command("hooi")
@click.option("--threads", type=click.IntRange(min=1), default=1, show_default=True)
@click.option("--seed", type=int, default=0, show_default=True)
@click.option("--cases", default="3way,4way", show_default=True)
@click.option("--skip-pyttb-4way", is_flag=True, help="Do not run pyttb on the 4-way case.")
@click.option("--skip-pyttb", is_flag=True, help="Do not run pyttb at all.")
@click.option("--timeout", type=click.FloatRange(min=0, min_open=True), default=1800.0, show_default=True,
              help="Seconds per child process.")
@click.option("--reps", type=click.IntRange(min=1), default=3, show_default=True, help="TTM throughput repetitions.")
@common_options
def hooi(threads, seed, cases, skip_pyttb_4way, skip_pyttb, timeout, reps, out_dir, fresh, quiet):
    """One HOOI invocation of spbench against pyttb.tucker_als, and the TTM kernel's throughput."""
    from spbench.tucker.benchmarks.hooi_bench import CASES, bench_hooi

    chosen = parse_names("hooi", "--cases", cases, CASES)
    options = {"threads": threads, "seed": seed, "cases": chosen, "skip_pyttb_4way": skip_pyttb_4way,
               "skip_pyttb": skip_pyttb, "timeout": timeout, "reps": reps}
    measure_and_store("hooi", options, "tucker",
                      lambda say: bench_hooi(chosen, threads, seed, skip_pyttb, skip_pyttb_4way, timeout, reps, say),
                      out_dir, fresh, quiet)


@_command("ttm")
@click.option("--threads", default="1,2", show_default=True, help="Comma-separated thread counts.")
@click.option("--cases", default="3way,4way,nell2", show_default=True)
@click.option("--nell2-nnz", type=click.IntRange(min=1), default=5_000_000, show_default=True)
@click.option("--reps", type=click.IntRange(min=1), default=5, show_default=True)
@click.option("--seed", type=int, default=0, show_default=True)
@common_options
def ttm(threads, cases, nell2_nnz, reps, seed, out_dir, fresh, quiet):
    """The csf TTM against the paper's element-wise TTM on every mode, interleaved rounds."""
    from spbench.tucker.benchmarks.ttm_bench import CASES, bench_ttm

    counts = parse_ints("ttm", "--threads", threads)
    chosen = parse_names("ttm", "--cases", cases, CASES)
    options = {"threads": counts, "cases": chosen, "nell2_nnz": nell2_nnz, "reps": reps, "seed": seed}
    measure_and_store("ttm", options, "tucker", lambda say: bench_ttm(chosen, counts, nell2_nnz, reps, seed, say),
                      out_dir, fresh, quiet)


@_command("tucker-scale")
@click.option("--ranks", default="1,2,4,8", show_default=True, help="Comma-separated rank counts.")
@click.option("--schemes", default="lite,medium,coarse", show_default=True)
@click.option("--dims", default="3000,4000,2000000", show_default=True)
@click.option("--nnz", type=click.IntRange(min=1), default=4_000_000, show_default=True)
@click.option("--K", "K", type=click.IntRange(min=1), default=10, show_default=True)
@click.option("--lanczos", type=click.Choice(["paper", "converged"]), default="paper", show_default=True)
@click.option("--timeout", type=click.FloatRange(min=0, min_open=True), default=3600.0, show_default=True,
              help="Seconds per MPI job.")
@common_options
def tucker_scale(ranks, schemes, dims, nnz, K, lanczos, timeout, out_dir, fresh, quiet):
    """Per-rank memory, words and queries of the measured HOOI as P grows (MPI, oversubscribed)."""
    from spbench.tucker.benchmarks.scale_bench import bench_scale
    from spbench.tucker.schemes import SCHEMES

    counts = parse_ints("tucker-scale", "--ranks", ranks)
    chosen = parse_names("tucker-scale", "--schemes", schemes, SCHEMES)
    lengths = parse_ints("tucker-scale", "--dims", dims, minimum=2)
    options = {"ranks": counts, "schemes": chosen, "dims": lengths, "nnz": nnz, "K": K, "lanczos": lanczos,
               "timeout": timeout}

    def measure(say):
        import shutil

        work = Path(out_dir or Path("results") / "bench-tucker-scale") / ".jobs" / "scale"
        try:
            return bench_scale(counts, chosen, tuple(lengths), nnz, K, lanczos, timeout, work, say)
        finally:
            shutil.rmtree(work, ignore_errors=True)

    measure_and_store("tucker-scale", options, "tucker", measure, out_dir, fresh, quiet)


@_command("ingest")
@click.option("--nnz", type=click.IntRange(min=1), default=50_000_000, show_default=True,
              help="Nonzeros of the generated nell2-shaped file.")
@click.option("--file", "tns_file", type=click.Path(dir_okay=False), default=None,
              help="An existing .tns file instead of the generated one.")
@click.option("--memory", default="1GB", show_default=True, help="The conversion's memory setting.")
@common_options
def ingest(nnz, tns_file, memory, out_dir, fresh, quiet):
    """.tns text into a tensor store (convert_tns) against pandas' reader (read_tns) and cat."""
    from spbench.dataset_commands import parse_memory
    from spbench.datasets.ingest_bench import bench_ingest

    try:
        memory_mb = parse_memory(memory)
    except click.ClickException as exc:
        raise UsageFailure(f"spbench bench ingest: {exc.format_message()}") from None
    if tns_file is not None and not Path(tns_file).is_file():
        raise UsageFailure(f"spbench bench ingest: --file: {tns_file}: no such file")
    options = {"nnz": nnz, "file": tns_file, "memory": memory}
    measure_and_store("ingest", options, "ingest", lambda say: bench_ingest(tns_file, nnz, memory, memory_mb, say),
                      out_dir, fresh, quiet)


@_command("standin")
@click.option("--tensors", default="nell2", show_default=True,
              help="Comma-separated FROSTT tensors whose stand-ins are generated.")
@click.option("--nnz", type=click.IntRange(min=1), default=None,
              help="Nonzeros of each stand-in (default: the tensor's own, the paper's full size).")
@click.option("--dim-scale", type=click.FloatRange(min=0, min_open=True), default=1.0, show_default=True,
              help="Mode lengths as a share of the tensor's (1: its exact dims).")
@click.option("--seed", type=int, default=0, show_default=True)
@common_options
def standin(tensors, nnz, dim_scale, seed, out_dir, fresh, quiet):
    """Stand-ins drawn straight into tensor stores: seconds, nonzeros/s, peak memory, column digest."""
    from spbench.datasets.paper_tensors import TENSORS
    from spbench.datasets.standin_bench import bench_standin

    chosen = parse_names("standin", "--tensors", tensors, TENSORS)
    options = {"tensors": chosen, "nnz": nnz, "dim_scale": dim_scale, "seed": seed}
    measure_and_store("standin", options, "standin", lambda say: bench_standin(chosen, nnz, dim_scale, seed, say),
                      out_dir, fresh, quiet)


@_command("preflight")
@click.option("--configs", default="", help="Comma-separated configs to take points from (default: one of "
              "every kind shipped, small where --scale small is quick, one full-size nell1 point, the measured "
              "MPI config).")
@click.option("--scale", type=click.Choice(["full", "small"]), default="full", show_default=True,
              help="With --configs: the scale their points run at.")
@click.option("--points", type=click.IntRange(min=1), default=2, show_default=True,
              help="With --configs: points per config, spread from the smallest estimate to the largest.")
@click.option("--timeout", type=click.FloatRange(min=0, min_open=True), default=900.0, show_default=True,
              help="Seconds per point.")
@common_options
def preflight(configs, scale, points, timeout, out_dir, fresh, quiet):
    """The pre-flight's memory estimate of each point beside its peak measured alone (within 25%?)."""
    from spbench.config import ConfigError, load_config
    from spbench.preflight_bench import DEFAULT_PLAN, Selection, bench_preflight

    paths = [p for p in configs.split(",") if p]
    for path in paths:
        try:
            load_config(path).with_overrides(scale=scale)
        except ConfigError as exc:
            raise UsageFailure(f"spbench bench preflight: --configs: {exc}") from None
    plan = tuple(Selection(p, scale, points=points) for p in paths) or DEFAULT_PLAN
    options = {"plan": [vars(s) for s in plan], "timeout": timeout}

    def measure(say):
        import shutil

        work = Path(out_dir or Path("results") / "bench-preflight") / ".jobs" / "preflight"
        try:
            return bench_preflight(plan, work, timeout, say)
        finally:
            shutil.rmtree(work, ignore_errors=True)

    measure_and_store("preflight", options, "preflight", measure, out_dir, fresh, quiet)
