"""The original HDagg and SpMP beside ours, schedule by schedule (sptrsv-elasticity §5.1, Table 6.1).

The paper ran its baselines from the original code (HDagg's reference implementation, SpMP as
integrated there). ``spbench bench sptrsv-refs --hdagg BIN`` runs that code through the driver
``bench/sptrsv/benchmarks/reference/hdagg_ref.cpp`` (``make hdagg-ref``) on each matrix, written as a Matrix
Market file in the order our schedulers see it, and compares per core count: HDagg's supersteps
(the original's three variants: tree grouping, ours by default, no grouping, ours with
``grouping: none``, and BFS grouping), its scheduling time, and SpMP's levels, point-to-point waits and
scheduling time, beside ours (and GrowLocal's scheduling time, the speed SpMP's is held to).
"""
from __future__ import annotations

import subprocess
from pathlib import Path

import numpy as np
import scipy.sparse as sp

from spbench.machine.timing import interleaved_medians, median_time

#: the driver's scheduler names → the row fields their supersteps go to
REFERENCE_FIELDS = {"hdagg_tree": "ref_supersteps", "hdagg_tree_bfs": "ref_supersteps_bfs",
                    "hdagg": "ref_supersteps_flat", "spmp": "ref_spmp_levels"}
#: the driver's schedulers that also print a scheduling time and a count → the row fields they go to
REFERENCE_EXTRAS = {"hdagg_tree": ("ref_schedule_time", "ref_groups"),
                    "spmp": ("ref_spmp_schedule_time", "ref_spmp_p2p")}
#: the original's SpMP solve (HDagg-benchmark's executor): its median time and its rows off the serial solve
REFERENCE_SOLVE = ("spmp_solve", "ref_spmp_solve_time", "ref_spmp_solve_wrong")
#: the driver's point-to-point schedulers: their threads wait busily, so they run only at core
#: counts this machine has
REFERENCE_P2P = ("spmp",)
#: the generator families at their default sizes (datasets.synthetic.GENERATORS)
GENERATOR_SET = ("lap2d-5pt", "lap2d-9pt", "lap3d-7pt", "lap3d-27pt", "elasticity3d", "rgg-spd", "fem-mesh",
                 "bundle-adjustment")
#: the paper's three data sets, as the configs that list them
CONFIG_SETS = {"suitesparse": "sptrsv_suitesparse.yaml", "ichol": "sptrsv_ichol.yaml", "metis": "sptrsv_metis.yaml"}


class ReferenceFailed(RuntimeError):
    """The driver exited non-zero, printed no line for a scheduler, or ran past its time limit."""


def write_lower_mtx(L: sp.csr_matrix, path: Path, values: bool = False) -> Path:
    """L as Matrix Market, entries column by column, rows ascending (the order the original's
    reader needs: it builds CSC pointers from consecutive column indices); values 1 (the pattern
    is all a schedule reads) unless ``values``, then L's own, exactly (for the solve)."""
    from spbench.store.atomic_files import atomic_output

    C = L.tocsc()
    C.sort_indices()
    n = C.shape[0]
    cols = np.repeat(np.arange(1, n + 1, dtype=np.int64), np.diff(C.indptr))
    with atomic_output(path) as tmp, open(tmp, "w") as out:
        out.write("%%MatrixMarket matrix coordinate real general\n")
        out.write(f"{n} {n} {C.nnz}\n")
        if values:
            np.savetxt(out, np.column_stack([C.indices + 1, cols, C.data]).astype(object), fmt="%d %d %.17g")
        else:
            np.savetxt(out, np.column_stack([C.indices.astype(np.int64) + 1, cols]), fmt="%d %d 1")
    return Path(path)


def parse_driver(text: str) -> dict:
    """Driver lines ``name cores supersteps seconds extra`` → {(name, cores): (supersteps, seconds, extra)}."""
    found = {}
    for line in text.splitlines():
        if not line or line.startswith("#"):
            continue
        fields = line.split("\t")
        if len(fields) != 5:
            raise ReferenceFailed(f"unexpected driver line {line!r}")
        found[(fields[0], int(fields[1]))] = (int(fields[2]), float(fields[3]), int(fields[4]))
    return found


def run_driver(binary: str, mtx: Path, cores: int, only: list[str], threads: int, timeout: float,
               extra: list[str] = ()) -> dict:
    """One driver process at one core count (SpMP's thread pool cannot grow within a process),
    free to use every core this process's threads may (see ``unpinned_for_children``)."""
    from spbench.machine.facts import unpinned_for_children

    try:
        with unpinned_for_children():
            done = subprocess.run([binary, str(mtx), str(cores), "--only", ",".join(only), "--threads", str(threads),
                                   *extra], capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        raise ReferenceFailed(f"past {timeout:g} s") from None
    if done.returncode != 0:
        tail = (done.stderr.strip().splitlines() or [f"exit code {done.returncode}"])[-1]
        raise ReferenceFailed(f"{Path(binary).name} exit {done.returncode}: {tail}")
    return parse_driver(done.stdout)


def _failure(exc: Exception) -> dict:
    text = str(exc) if isinstance(exc, ReferenceFailed) else f"no {exc} line from the driver"
    return {"status": "timeout" if text.startswith("past ") else "error", "error": text}


def _timed(fn, repeats: int = 1):
    """fn's value (from its last call) and the median of ``repeats`` calls' seconds."""
    last = [None]

    def call():
        last[0] = fn()

    seconds = median_time(call, repeats, warmup=0)
    return last[0], seconds


#: rounds of the solve comparison: ours then the original's, each round a median of the repeats
SOLVE_ROUNDS = 3


def _solve_fields(binary: str, mtx: Path, L: sp.csr_matrix, dag, cores: int, repeats: int, timeout: float) -> dict:
    """SpMP's point-to-point solve of L x = 1 at ``cores`` threads: ours (`solve_point`, its
    backward error) and the original's (the driver, the rows it got wrong), in ``SOLVE_ROUNDS``
    interleaved rounds of ``repeats`` solves; each side's time is the median of its round medians
    (a whole call on this kind of machine is now and then several times slower)."""
    from spbench.sptrsv.execute import RESIDUAL_TOL, solve_point

    name, time_field, wrong_field = REFERENCE_SOLVE
    seen = {"ours": [], "residual": 0.0, "wrong": 0}

    def ours() -> float:
        point = solve_point(L, "spmp", cores, repeats=repeats, dag=dag)
        seen["ours"].append(point["solve_time"])
        seen["residual"] = max(seen["residual"], point["residual"])
        return point["solve_time"]

    def theirs() -> float:
        line = run_driver(binary, mtx, cores, [name], cores, timeout, ["--repeats", str(repeats)])[(name, cores)]
        seen["wrong"] = max(seen["wrong"], line[2])
        return line[1]

    try:
        mine, ref = interleaved_medians([ours, theirs], SOLVE_ROUNDS, warmup=0)
    except (ReferenceFailed, KeyError) as exc:
        return {"spmp_solve_time": float(np.median(seen["ours"])), "spmp_residual": seen["residual"],
                "ref_spmp_solve_error": _failure(exc)["error"]}
    residual = seen["residual"]
    fields = {"spmp_solve_time": mine, "spmp_residual": residual, time_field: ref, wrong_field: seen["wrong"]}
    if residual > RESIDUAL_TOL:  # a wrong solve of ours is no time to compare
        fields.update(status="invalid", error=f"our SpMP solve's backward error {residual:.1e} > {RESIDUAL_TOL:g}")
    return fields


def compare_matrix(binary: str, name: str, L: sp.csr_matrix, cores: list[int], machine_cores: int,
                   work: Path, timeout: float, solve_repeats: int = 0, schedule_repeats: int = 1) -> list[dict]:
    """Rows for one matrix: per core count, the original's schedules beside ours (scheduling times
    the median of ``schedule_repeats`` calls, both sides); with ``solve_repeats``, also SpMP's
    solve, the original's and ours, at the core counts this machine has."""
    from spbench.sptrsv.dag import DAG
    from spbench.sptrsv.schedulers import growlocal, hdagg, spmp

    mtx = write_lower_mtx(L, work / "matrix.mtx", values=solve_repeats > 0)
    dag = DAG(L)
    try:
        wave = run_driver(binary, mtx, 1, ["wavefront"], 1, timeout)[("wavefront", 1)][0]
    except (ReferenceFailed, KeyError) as exc:
        return [{"item": f"{name} P={c}", "dataset": name, "cores": c, **_failure(exc)} for c in cores]
    rows = []
    for c in cores:
        row = {"item": f"{name} P={c}", "dataset": name, "n": dag.n, "nnz": dag.nnz, "cores": c,
               "wavefronts": dag.wavefronts, "ref_wavefronts": wave}
        ours, row["schedule_time"] = _timed(lambda: hdagg.schedule(dag, c), schedule_repeats)
        row["supersteps"] = int(ours.n_supersteps)
        row["supersteps_flat"] = int(hdagg.schedule(dag, c, grouping="none").n_supersteps)
        tasks, row["spmp_schedule_time"] = _timed(lambda: spmp.schedule(dag, c), schedule_repeats)
        row["spmp_levels"], row["spmp_p2p"] = int(tasks.n_supersteps), int(tasks.parent_idx.size)
        _, row["growlocal_schedule_time"] = _timed(lambda: growlocal.schedule(dag, c),  # the speed SpMP must beat
                                                   schedule_repeats)
        only = [name for name in REFERENCE_FIELDS if name not in REFERENCE_P2P or c <= machine_cores]
        try:
            found = run_driver(binary, mtx, c, only, min(c, machine_cores), timeout,
                               ["--schedule-repeats", str(schedule_repeats)])
        except ReferenceFailed as exc:
            rows.append({**row, **_failure(exc)})
            continue
        for driver_name, field in REFERENCE_FIELDS.items():
            steps, seconds, extra = found.get((driver_name, c), (None, None, None)) if driver_name in only \
                else (None, None, None)
            row[field] = steps
            if driver_name in REFERENCE_EXTRAS:
                time_field, extra_field = REFERENCE_EXTRAS[driver_name]
                row[time_field], row[extra_field] = seconds, extra
        row["equal"] = row["ref_supersteps"] == row["supersteps"] and row["ref_supersteps_flat"] == row["supersteps_flat"]
        if solve_repeats and c <= machine_cores:
            row.update(_solve_fields(binary, mtx, L, dag, c, solve_repeats, timeout))
        rows.append(row)
    return rows


def dataset_entries(sets: list[str], configs_dir: Path) -> list:
    """Config entries of the chosen sets: generator families at defaults, or a config's data sets."""
    import yaml

    entries = []
    for name in sets:
        if name == "generators":
            entries += list(GENERATOR_SET)
        else:
            entries += yaml.safe_load((configs_dir / CONFIG_SETS[name]).read_text())["datasets"]
    return entries


def side_by_side(binary: str, sets: list[str], cores: list[int], scale: float, timeout: float, configs_dir: Path,
                 work: Path, say, solve_repeats: int = 0, schedule_repeats: int = 1) -> list[dict]:
    """Every matrix of ``sets`` (stand-ins where the real matrix is not cached, ``scale`` × their
    rows) at every core count; a matrix that cannot be loaded is one error row."""
    from spbench.datasets.registry import resolve
    from spbench.machine.facts import usable_cores
    from spbench.sptrsv.execute import prepare_lower

    rows = []
    for entry in dataset_entries(sets, configs_dir):
        dataset = resolve(entry)
        if scale != 1:
            dataset = dataset.scaled(scale)
        try:
            loaded = dataset.load(fetch=False, standin=True)
            L = prepare_lower(loaded.matrix)
        except Exception as exc:  # one matrix failing to load is its row, the others go on
            rows.append({"item": dataset.name, "dataset": dataset.name, "status": "error",
                         "error": f"{type(exc).__name__}: {exc}"})
            continue
        say(f"{loaded.name}: n {L.shape[0]:,}, nnz {L.nnz:,}")
        rows += compare_matrix(binary, loaded.name, L, cores, usable_cores(), work, timeout, solve_repeats,
                               schedule_repeats)
    return rows


def refs_table(rows: list[dict]) -> str:
    """The side-by-side table: HDagg's supersteps (original variants and ours), times, SpMP's counts."""
    lines = ["| matrix | n | nnz | P | wavefronts (orig / ours) | HDagg tree orig / ours | flat orig / ours | "
             "BFS orig | equal | HDagg tree s orig / ours | SpMP levels orig / ours | SpMP waits orig / ours | "
             "SpMP s orig / ours | GrowLocal s |", "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"]

    def num(value, fmt="d"):
        return "-" if value is None else format(value, fmt)

    for r in rows:
        if r.get("status", "ok") != "ok":
            lines.append(f"| {r['dataset']} | | | {r.get('cores', '')} | {r['status']}: {r.get('error')} |"
                         + " |" * 9)
            continue
        lines.append(
            f"| {r['dataset']} | {r['n']:,} | {r['nnz']:,} | {r['cores']} | {r['ref_wavefronts']} / {r['wavefronts']} | "
            f"{num(r['ref_supersteps'])} / {r['supersteps']} | {num(r['ref_supersteps_flat'])} / {r['supersteps_flat']} | "
            f"{num(r['ref_supersteps_bfs'])} | {'yes' if r['equal'] else '**no**'} | "
            f"{num(r['ref_schedule_time'], '.4f')} / {r['schedule_time']:.4f} | "
            f"{num(r['ref_spmp_levels'])} / {r['spmp_levels']} | {num(r.get('ref_spmp_p2p'))} / {r['spmp_p2p']} | "
            f"{num(r.get('ref_spmp_schedule_time'), '.4f')} / {r['spmp_schedule_time']:.4f} | "
            f"{num(r.get('growlocal_schedule_time'), '.4f')} |")
    solved = [r for r in rows if r.get("spmp_solve_time") is not None]
    if solved:
        lines += ["", f"SpMP's point-to-point solve of L x = 1, median of {SOLVE_ROUNDS} interleaved rounds' medians:", "",
                  "| matrix | nnz | P | solve ms orig / ours | ours / orig | orig rows off serial | our backward error |",
                  "|---|---|---|---|---|---|---|"]
        for r in solved:
            ref = r.get("ref_spmp_solve_time")
            lines.append(
                f"| {r['dataset']} | {r['nnz']:,} | {r['cores']} | "
                f"{'-' if ref is None else format(ref * 1e3, '.3f')} / {r['spmp_solve_time'] * 1e3:.3f} | "
                f"{'-' if not ref else format(r['spmp_solve_time'] / ref, '.2f')} | "
                f"{r.get('ref_spmp_solve_wrong', r.get('ref_spmp_solve_error', '-'))} | {r['spmp_residual']:.1e} |")
    return "\n".join(lines)
