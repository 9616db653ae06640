"""The Tucker experiment as the sweep runner sees it.

`execution: simulate`: for each (tensor, scheme, P) the scheme decides per slice from the store's
slice sizes and its policies are applied to the store chunk by chunk while the per-rank counts
are taken (:func:`.stream_metrics.stream_counts`; no per-element array of the whole tensor, so a
144M-nonzero tensor simulates in a few GB), timing the decisions and placements as `dist_time` (a
serial run on this machine, not the paper's parallel distribution). The counts give the exact
metrics of tucker-lite §4 and §7.3 (E_max, R_sum, R_max, SVD and factor-matrix volumes, memory per
rank) for every K, and the per-rank loads of the cost model (:mod:`.model`), whose modelled HOOI
times fill the time columns when a Tucker calibration exists (null otherwise, never a guess); the
``ttm: csf`` model's tree shapes are counted in the same pass through a spill on disk
(:mod:`.stream_prefixes`). A scheme without a streamed form (HyperG) partitions the whole tensor in
memory. Only the counts
(arrays over ranks) stay cached, so memory does not grow with the points.
`execution: measured`: one MPI job per (tensor, ranks) (`launch.py`) runs the distributed HOOI.
:class:`TuckerExperiment` is the Tucker experiment of :class:`spbench.experiment.Experiment`: its
axes, keys, schemes, rows, calibration and profile.
"""
from __future__ import annotations

import shutil
import time
from dataclasses import dataclass, field
from pathlib import Path

from spbench.datasets.store_duplicates import DUPLICATE_RULES

from spbench.experiment import Algorithm, ConfigKey, Experiment, RunError, RunFlag, choice, positive_int
from spbench.store.row_schema import NUMBER, optional, required
from spbench.tucker.schemes import get_scheme
from spbench.tucker.mode_count import check_modes

#: `init:` initial factors, random (seeded, orthonormalized) or hosvd
INITS = ("random", "hosvd")
#: `lanczos:` paper = 2K_n steps, Q_n = 4K_n queries, no restart (tucker-lite §7.1); converged =
#: restarted until the K_n leading triplets reach relative residual 1e-8
LANCZOS = ("paper", "converged")
#: `ttm:` the local TTM kernel: csf = compressed sparse fibers (tucker-lite §8's future work),
#: paper = Appendix A's element-wise form; also a sweep axis
TTM = ("csf", "paper")


#: the fields Tucker rows add to the common ones (docs/design.md, "Results"): times, the exact metrics of
#: tucker-lite §4 and §7.3 (aggregated, and per mode in `mode_metrics`), volumes and memory per rank;
#: measured rows add what the MPI job saw (words sent, Lanczos queries and residuals, peak memory)
ROW_FIELDS = {
    "ranks": required(int), "K": required(int), "ttm": optional(str), "dataset_label": optional(str),
    "modes": optional(int), "dims": optional(list), "nnz": optional(int), "multi_policy": optional(bool),
    "dist_cached": optional(bool), "counts_cached": optional(bool), "init": optional(str), "lanczos": optional(str),
    "invocations": optional(int), "threads": optional(int),
    # measured with more ranks than this machine's cores (time slices, not costs); the machine's load
    # over the MPI job that ran the row (spbench.machine.load)
    "oversubscribed": optional(bool), "load": optional(dict),
    **dict.fromkeys(("dist_time", "hooi_time", "ttm_time", "svd_time", "comm_time", "other_time", "core_time",
                     "fm_time", "init_time", "plan_time", "dist_policy_time", "dist_redistribute_time", "fit", "e_max",
                     "r_sum", "r_max", "svd_imbalance", "svd_redundancy", "ttm_imbalance", "ttm_kernel_flops",
                     "ttm_kernel_flops_max", "mem_tensor_mb", "mem_tensor_mb_max", "mem_penultimate_mb",
                     "mem_penultimate_mb_max", "mem_factor_mb", "mem_factor_mb_max", "mem_total_mb",
                     "mem_total_mb_max", "peak_rss_mb_max", "peak_rss_mb_mean"), optional(NUMBER, None)),
    **dict.fromkeys(("fm_volume", "svd_volume", "core_words", "fm_words_total", "svd_words_total",
                     "held_nonzeros_max", "svd_flops", "ttm_flops", "words_per_rank_max"), optional(int)),
    **dict.fromkeys(("dist_time_kind", "hooi_time_kind", "metrics_source", "peak_rss_kind"), optional(str)),
    **dict.fromkeys(("mode_metrics", "fits", "fm_words", "svd_words", "svd_gather_words", "queries", "restarts",
                     "lanczos_residual_max", "peak_rss_mb"), optional(list)),
    **dict.fromkeys(("dist_info", "lite_bound_slack", "tensor_stats", "peak_rss_mb_phases", "model_groups"),
                    optional(dict)),
}


def _seconds(value) -> bool:
    return not isinstance(value, bool) and isinstance(value, (int, float)) and value > 0


@dataclass
class PreparedTensor:
    """One tensor ready for every point of its data set, with the distributions computed so far.
    ``loaded`` holds its store and header; the whole tensor is read only when a simulated point
    asks for ``tensor`` (measured runs never load it in this process: the MPI ranks read their
    blocks of the store)."""

    loaded: object  # spbench.datasets.tensor_registry.LoadedTensor
    checksum: str
    source: str  # real | synthetic
    label: str
    counts: dict = field(default_factory=dict)  # (scheme, P, seed, params) -> DistributionCounts
    sizes: list | None = None                   # per mode, the slice sizes (:attr:`slice_sizes`)
    ks: tuple = ()                              # the config's K values (the CSF prefixes the model reads)
    warnings: tuple = ()                        # one-line notes the runner prints before the sweep
    unfit: str | None = None                    # why HOOI cannot fit its values (row_status): rows invalid

    @property
    def tensor(self):
        """The whole tensor (spbench.datasets.sparse_tensor.SparseTensor), loaded on first use."""
        return self.loaded.tensor

    @property
    def store(self):
        return self.loaded.store

    @property
    def header(self):
        """dims, nnz and modes without reading a nonzero (the store's header)."""
        return self.loaded.header

    @property
    def slice_sizes(self) -> list:
        """Per mode, the elements of every slice (one streaming pass, cached beside the store)."""
        from spbench.datasets.tensor_stats import slice_sizes
        if self.sizes is None:
            self.sizes = slice_sizes(self.store)
        return self.sizes

    @property
    def stats(self) -> dict | None:
        """Per-mode slice statistics of the store (one streaming pass, cached beside it); None for
        a tensor given in memory without a store."""
        from spbench.datasets.tensor_stats import slice_stats
        store = getattr(self.loaded, "store", None)
        return slice_stats(store) if store is not None else None


def _slice_prefixes(prepared: PreparedTensor):
    """The tensor's per-slice CSF prefix counts, kept in the counts cache under its checksum
    (:mod:`.slice_prefixes`: whole-slice schemes sum them instead of spilling per point)."""
    from spbench.tucker.slice_prefixes import SlicePrefixes
    from spbench.tucker.stream_metrics import store_chunks

    header = prepared.header
    return SlicePrefixes(header.dims, header.nnz, store_chunks(prepared.store), prepared.slice_sizes,
                         identity=prepared.checksum, label=prepared.label)


@dataclass
class DistributionCounts:
    """What a point needs of one distribution: :func:`.metrics.mode_counts`' per-mode counts."""

    counts: list
    seconds: float
    multi_policy: bool
    info: dict
    from_cache: bool = False    # read from the counts cache (:mod:`.counts_cache`), not streamed now


class TuckerExperiment(Experiment):
    """Tucker points: simulated (exact distributions and metrics at any rank count, HOOI times from
    the calibrated cost model when a calibration exists) or measured under MPI."""

    name, title = "tucker", "Tucker"
    axes = ("algorithm", "ranks", "K")
    optional_axes = {"ttm": TTM}
    options = {
        "launcher": ConfigKey("", "a command template containing {ranks} (e.g. 'srun -n {ranks}')",
                              lambda v: isinstance(v, str) and "{ranks}" in v,  # "" = the mpiexec beside Python
                              timing=True, flag=RunFlag("Tucker MPI launcher template, e.g. 'srun -n {ranks}'")),
        "timeout": ConfigKey(3600.0, "a number of seconds > 0", _seconds, convert=float,  # per MPI job
                             flag=RunFlag("Tucker MPI: seconds per (tensor, ranks) job", "float")),
        "oversubscribe": ConfigKey(False, "true or false", lambda v: isinstance(v, bool), timing=True,  # correctness
                                   flag=RunFlag("Tucker MPI: allow more ranks than cores", "switch")),
        "invocations": positive_int(1, identity=True),  # HOOI invocations per run (the paper's tables: 1)
        "init": choice(INITS, "random", identity=True),
        "lanczos": choice(LANCZOS, "paper", identity=True),
        "ttm": choice(TTM, "csf", identity=True),  # unless `ttm` is a sweep axis
        "duplicates": choice(DUPLICATE_RULES, "sum",  # a .tns file's repeated coordinates: summed or refused
                             flag=RunFlag("Tucker: a .tns file's repeated coordinates: add their values (default, "
                                          "with a warning) or refuse the file", "choice")),
    }
    small_factor = 1 / 100  # the paper configs' stand-ins are full size (54M-144M nonzeros)
    compare_metrics = ("hooi_time", "dist_time")
    row_fields = ROW_FIELDS

    def algorithms(self) -> dict[str, Algorithm]:
        from spbench.tucker.schemes import SCHEMES
        return {name: Algorithm(name, s.label, "scheme", s.parameters) for name, s in SCHEMES.items()}

    def resolve_dataset(self, entry):
        from spbench.datasets.tensor_registry import resolve
        return resolve(entry)

    calibration_module = "spbench.tucker.calibration.calibrate"
    calibration_required = False  # without one, simulated rows carry the metrics and null times

    def measure_calibration(self, quick: bool, cores: tuple, force: bool = False) -> dict:
        from spbench.tucker.calibration.calibrate import calibrate
        return calibrate(quick=quick)

    def calibration_summary(self, measured: dict) -> list[tuple[str, str]]:
        """Every cost term, the fits' diagnostics, the MPI part (or why it was skipped), the seconds taken."""
        import json

        mpi = {k: v for k, v in measured["mpi"].items() if k != "raw"}
        from spbench.machine.load import describe

        def number(v) -> str:
            return ", ".join(f"{x:.4g}" for x in v) if isinstance(v, (list, tuple)) else f"{v:.4g}"

        return [*((k, number(v)) for k, v in measured["costs"].items()),
                ("fits", json.dumps(measured["fits"], default=str)), ("mpi", json.dumps(mpi, default=str)),
                ("seconds", f"{measured['calibration_seconds']:.1f}"),
                *((("load", describe(measured["load"])),) if measured.get("load") else ())]

    validation = ("tucker-model", "nnz")  # the MPI worker vs the model on a stand-in of this many nonzeros

    def calibration_agreement(self, a: dict, b: dict, on_point=None) -> list[dict]:
        """The model's HOOI time and components with each calibration at the validation points
        (:mod:`.calibration.agreement`): its terms trade against each other, its predictions must not."""
        from spbench.tucker.calibration.agreement import agreement_rows
        return agreement_rows(a, b, on_point=on_point)

    def write_profile(self, df, out_dir) -> list[Path]:
        from spbench.tucker.report.figures import write_tucker_profile
        return write_tucker_profile(df, out_dir)

    def slurm_resources(self, points) -> list[str]:
        """As many MPI tasks as the largest `ranks`."""
        ranks = max((int(p.axes.get("ranks", 1)) for p in points), default=1)
        return [f"--ntasks={ranks}"]

    def batch_job(self, environ) -> tuple[list[str], dict]:
        """Measured, one `srun -n {ranks}` per (tensor, ranks) inside the allocation ($SPBENCH_LAUNCHER
        another launcher)."""
        return ["--execution", "measured", "--launcher", environ.get("SPBENCH_LAUNCHER") or "srun -n {ranks}"], {}

    def check_points(self, config, points) -> None:
        """Measured runs: refuse, before anything starts, rank counts this machine cannot host."""
        from spbench.machine.facts import usable_cores
        from spbench.tucker.mpi.launch import launcher_command

        if config.execution != "measured":
            self.load_costs(config)
            return
        launcher = launcher_command(config.launcher, 1)[0]
        if shutil.which(launcher) is None:
            raise RunError(f"{config.where('launcher')}: {launcher!r} not found; install MPI (README) or "
                           f"use --execution simulate")
        cores = usable_cores()
        too_many = sorted({p.axes["ranks"] for p in points if p.axes["ranks"] > cores})
        if too_many and not config.oversubscribe and not config.launcher:
            raise RunError(f"{config.source}: key 'sweep.ranks': {too_many[-1]} ranks requested but this machine "
                           f"has {cores} cores; use --execution simulate for large rank counts, or "
                           f"--oversubscribe for a (slow) correctness run")

    def estimate_points(self, config, points) -> list:
        """Peak memory per point and the stores still to write, before anything loads (memory_estimate);
        with a calibration, simulated points also count their CSF tree shapes through a spill."""
        from spbench.tucker.memory_estimate import estimate_points
        modelled = config.execution != "measured" and self.costs_path(config).exists()
        return estimate_points(config, points, csf_prefixes=modelled)

    def work_per_point(self, config) -> str:
        """`repeats` is no Tucker key: a measured point is one timed HOOI run of ``invocations``
        invocations (one MPI job per tensor and rank count), a simulated one the exact metrics."""
        if config.execution == "measured":
            return (f"one timed HOOI run of {config.invocations} invocation{'s' if config.invocations != 1 else ''} "
                    f"each (one MPI job per data set and rank count)")
        return "exact distribution metrics each (HOOI times modelled when a Tucker calibration exists)"

    def batch_runner(self, config):
        """Measured points of one tensor run as MPI jobs, one per rank count (launch.run_mpi_batch)."""
        if config.execution != "measured":
            return None
        from spbench.tucker.mpi.launch import run_mpi_batch
        return run_mpi_batch

    def prepare(self, dataset, config) -> PreparedTensor:
        """The data set's store (converted on first use), with warnings for summed duplicates, for
        a K of the sweep above a mode's length and for values HOOI cannot fit (all zero, or
        overflowing: its rows are invalid); a tensor of one mode is refused (no Tucker model)."""
        from spbench.datasets.tensor_registry import summed_duplicates_note
        from spbench.tucker.row_status import unfit_reason, unfit_warning, value_summary

        from spbench.datasets.frostt import count_fields

        if dataset.kind == "file":   # refused before its store is converted and cached
            check_modes(count_fields(Path(dataset.params["path"])) - 1)
        loaded = dataset.load(fetch=True, standin=config.fallback == "standin", duplicates=config.duplicates)
        header = loaded.header
        check_modes(header.nmodes)
        summary = value_summary(loaded.store)
        ks = sorted({int(k) for axis, values in config.sweep if axis == "K" for k in values} |   # the config's K values
                    {int(item["K"]) for item in config.include if "K" in item and
                     item.get("dataset", dataset.name) == dataset.name})
        notes = (summed_duplicates_note(dataset.params.get("path", dataset.name), header),
                 k_above_lengths(dataset.name, header.dims, ks),
                 unfit_warning(dataset.params.get("path", dataset.name), summary))
        return PreparedTensor(loaded=loaded, checksum=loaded.checksum, source=loaded.source, label=loaded.label,
                              warnings=tuple(n for n in notes if n), ks=tuple(ks), unfit=unfit_reason(summary))

    def sweep_scratch(self, config):
        """Simulated points that count CSF tree shapes (a calibration exists) share one spill pool,
        each overwriting the files the one before left (:func:`.stream_prefixes.spill_pool`)."""
        from spbench.tucker.stream_prefixes import spill_pool

        return spill_pool() if config.execution == "simulate" and self.costs is not None else super().sweep_scratch(config)

    def _counts(self, prepared: PreparedTensor, scheme: str, ranks: int, seed: int, params: dict) -> DistributionCounts:
        """The scheme's per-rank counts for `ranks`, computed once per data set and reused across K:
        streamed from the store when the scheme has a streamed form (and kept in the counts cache,
        :mod:`.counts_cache`, for later sweeps), else from its policies of the whole tensor in memory."""
        from spbench.tucker.counts_cache import CachedCounts, counts_identity, counts_path, load_counts, save_counts
        from spbench.tucker.stream_metrics import store_chunks, stream_counts, tensor_chunks

        key = (scheme, ranks, seed, tuple(sorted(params.items())))
        sch = get_scheme(scheme)
        modelled = self.costs is not None                # the TTM model's tree shapes are counted too
        if key not in prepared.counts and sch.streamed is not None:
            identity = counts_identity(prepared.checksum, scheme, ranks, seed, params)
            cached = load_counts(counts_path(identity, prepared.label), identity)
            if cached is not None and (not modelled or "csf_prefix_p" in cached.counts[0]):
                prepared.counts[key] = DistributionCounts(cached.counts, cached.seconds, cached.multi_policy,
                                                          cached.info, from_cache=True)
        if key not in prepared.counts:
            header = prepared.header
            start = time.perf_counter()
            if sch.streamed is not None:
                stream = sch.stream(prepared.slice_sizes, ranks, seed=seed, **params)
                chunks = store_chunks(prepared.store)
            else:
                params = sch.with_run_params(params)
                dist = sch(prepared.tensor, ranks, seed=seed, **params)
                stream, chunks = dist.stream(), tensor_chunks(prepared.tensor.coords)
            decided = time.perf_counter() - start
            timing: dict = {}
            counts, _ = stream_counts(header.dims, header.nnz, chunks, stream, timing=timing,
                                      prefixes=prepared.slice_sizes if modelled else None,
                                      prefix_K=prepared.ks if sch.streamed is not None and prepared.ks else None,
                                      slice_prefixes=_slice_prefixes(prepared) if modelled and sch.streamed is not None else None)
            seconds = stream.info.get("partition_seconds", decided + timing.get("fill_seconds", 0.0))
            prepared.counts[key] = DistributionCounts(counts, float(seconds), bool(stream.multi_policy),
                                                      dict(stream.info))
            if sch.streamed is not None:
                identity = counts_identity(prepared.checksum, scheme, ranks, seed, params)
                save_counts(counts_path(identity, prepared.label), identity,
                            CachedCounts(counts, seconds, stream.multi_policy, dict(stream.info)))
        return prepared.counts[key]

    def _complete_prefixes(self, prepared: PreparedTensor, dc: DistributionCounts, point, config) -> None:
        """Add to ``dc`` the CSF prefix sets the model reads at this point's K that its counts lack
        (counted for other K values: a cached distribution, a K outside the config's list), by
        passes that only place and spill, and keep them in the counts cache too."""
        from spbench.tucker.counts_cache import CachedCounts, counts_identity, counts_path, save_counts
        from spbench.tucker.stream_metrics import store_chunks, stream_prefix_sets
        from spbench.tucker.stream_prefixes import tree_sets

        axes = point.axes
        scheme, ranks, params = axes["algorithm"], axes["ranks"], config.params.get(axes["algorithm"], {})
        missing = [(n, S) for n, S in tree_sets(dc.counts, [axes["K"]]) if S not in dc.counts[n]["csf_prefix_p"]]
        if not missing:
            return
        header = prepared.header
        stream = get_scheme(scheme).stream(prepared.slice_sizes, ranks, seed=config.seed, **params)
        found = stream_prefix_sets(header.dims, header.nnz, store_chunks(prepared.store), stream, missing,
                                   prepared.slice_sizes, slice_prefixes=_slice_prefixes(prepared))
        for (n, S), c in found.items():
            dc.counts[n]["csf_prefix_p"][S] = c
        identity = counts_identity(prepared.checksum, scheme, ranks, config.seed, params)
        save_counts(counts_path(identity, prepared.label), identity,
                    CachedCounts(dc.counts, dc.seconds, dc.multi_policy, dc.info))

    def exact_metrics(self, point, prepared: PreparedTensor, config, queries=None) -> dict:
        """The scheme's exact metrics (§4, §7.3) for this point, with Theorem 6.1's slack for Lite;
        `queries`: the Lanczos queries a measured run made per mode (default 4·K, §4.3)."""
        from spbench.tucker.metrics import metrics_from_counts

        axes = point.axes
        dc = self._counts(prepared, axes["algorithm"], axes["ranks"], config.seed,
                          config.params.get(axes["algorithm"], {}))
        tensor = prepared.header
        metrics = metrics_from_counts(tensor.dims, tensor.nnz, axes["K"], queries, dc.multi_policy, dc.counts)
        out = {"modes": int(tensor.nmodes), "dims": [int(d) for d in tensor.dims], "nnz": int(tensor.nnz),
               "multi_policy": dc.multi_policy, "dist_cached": bool(dc.info.get("cached", False)),
               "counts_cached": dc.from_cache,
               "dist_info": {k: v for k, v in dc.info.items() if isinstance(v, (int, float, str, bool))},
               "serial_dist_time": dc.seconds, **metrics.row()}
        out.update(get_scheme(axes["algorithm"]).metrics_beyond(out["mode_metrics"], tensor.nnz, axes["ranks"]))
        if prepared.stats is not None:
            out["tensor_stats"] = prepared.stats
        return out

    def run(self, point, prepared: PreparedTensor, config) -> dict:
        """A simulated point: exact metrics, the serial distribution time, modelled HOOI times when
        a calibration exists; invalid, with the reason, for a tensor HOOI cannot fit (the metrics
        still given), a violated Theorem 6.1 or a time that is not a finite number."""
        from spbench.tucker.row_status import nonfinite_reason

        axes = point.axes
        row = self.exact_metrics(point, prepared, config)
        times = {"hooi_time": None, "ttm_time": None, "svd_time": None, "comm_time": None, "other_time": None}
        if self.costs is not None:
            from spbench.tucker.model.cost_model import loads_from_counts, model_groups, predict_from_loads
            dc = self._counts(prepared, axes["algorithm"], axes["ranks"], config.seed,
                              config.params.get(axes["algorithm"], {}))
            lanczos, ttm = config.lanczos, axes.get("ttm", config.ttm)
            if ttm == "csf" and get_scheme(axes["algorithm"]).streamed is not None:
                self._complete_prefixes(prepared, dc, point, config)
            loads = loads_from_counts(dc.counts, axes["K"], multi_policy=dc.multi_policy)
            predicted = predict_from_loads(loads, self.costs, invocations=config.invocations, lanczos=lanczos,
                                           ttm=ttm)
            times = {k: float(predicted[k]) for k in times}
            row["model_groups"] = model_groups(loads, self.costs, invocations=config.invocations, lanczos=lanczos,
                                               ttm=ttm, predicted=predicted)  # compute, latency, bandwidth
            row["ttm"] = ttm
            row["hooi_time_kind"] = (f"modelled (bench/tucker/model/cost_model.py v{predicted['model_version']}, "
                                     f"ttm: {ttm}, lanczos: {lanczos}, "
                                     f"{sum(m['queries'] for m in predicted['modes'])} queries)")
        slack = row.get("lite_bound_slack")
        broken = slack is not None and min(slack.values()) < 0
        reason = (prepared.unfit or (f"Theorem 6.1 violated: slack {slack}" if broken else None)
                  or nonfinite_reason({**times, "dist_time": row["serial_dist_time"]}))
        return {
            "status": "invalid" if reason else "ok",
            "error": reason,
            "dataset_label": prepared.label,
            "ranks": int(axes["ranks"]),
            "K": int(axes["K"]),
            "dist_time": row.pop("serial_dist_time"),
            "dist_time_kind": get_scheme(axes["algorithm"]).dist_time_kind("simulated"),
            **times, "fit": None,
            **row,
        }


def k_above_lengths(name: str, dims, ks) -> str | None:
    """The warning for a core length K (tucker-lite §7: K_n = K on every mode) above a mode's length,
    where a factor has fewer than K independent columns: HOOI pads it with zero columns (σ = 0,
    the padding rule of :mod:`.lanczos`), so its TTMs, core and fit are those of K = the length on
    that mode, while the metrics count the K asked for."""
    over = [(n, int(length), [k for k in ks if k > length]) for n, length in enumerate(dims)]
    over = [(n, length, big) for n, length, big in over if big]
    if not over:
        return None
    modes = "; ".join(f"K = {', '.join(map(str, big))} above the length {length} of mode {n + 1}"
                      for n, length, big in over)
    return (f"{name} (dims {'x'.join(str(int(d)) for d in dims)}): {modes}: HOOI pads such a factor with zero "
            f"columns (σ = 0, the padding rule of bench/tucker/hooi/lanczos.py), so its TTMs, core and fit are those of "
            f"K = the mode's length there; the metrics count the K asked for")
