"""Peak memory and disk of Tucker points before they run (`spbench run`'s pre-flight check), from
each tensor's sizes known without generating or loading it: a cached store's header, a stand-in's
recipe (:mod:`spbench.datasets.tensor_registry`), a FROSTT tensor's Fig. 9 sizes, or a ``.tns``
file's size and first lines.

Laws, per point:

* simulated CoarseG, MediumG, Lite: the streaming engine's own law,
  ``stream_metrics.simulated_peak_bytes(dims, nnz, nparts, multi_policy)``;
* simulated HyperG (Mt-KaHyPar on the whole tensor, in memory): the point's process (35 MB) + 20
  MB + what :func:`.schemes.hyper.partition_memory` declares for the preset the point resolves to
  (its gain cache grows with nonzeros × parts; ``large_k``'s state goes by pins). The upper
  envelope of `spbench bench preflight` on the 600k-nonzero stand-ins of delicious, enron and nell2
  at 32 and 512 parts and on a 6,000-nonzero one (docs/performance.md);
* measured (MPI): per rank max(93 MB, 56 MB + f × tucker-lite §7.3's memory per rank (tensor,
  penultimate matrices, factor rows, as ``metrics.metrics_from_counts`` counts them) at ideal
  loads), f = 1.18 for a multi-policy scheme and 1.32 for a single-policy one (MediumG: the formula
  counts one copy of its elements, the CSF code keeps a tree per mode), times the ranks on this
  machine (all of them, unless a launcher places them). Least squares over 14 per-scheme peaks
  (VmHWM, `spbench bench tucker-scale` at 1-8 ranks on the 4M-nonzero long-mode tensor and
  `spbench bench preflight` on configs/tucker_measured.yaml): each within 8% but MediumG at one
  rank on a 200k-nonzero tensor, the 93 MB floor (the interpreter, numpy, mpi4py).

A stand-in's or a converted file's store on disk: nnz × (Σ_n index bytes + 8) plus the headers;
nothing when it is cached.
"""
from __future__ import annotations

import gzip
import math
import os
import zlib
from dataclasses import dataclass
from pathlib import Path

from ..experiment import Estimate

__all__ = ["TensorSize", "tensor_size", "store_bytes", "simulated_peak", "measured_peak", "rank_formula_bytes",
           "estimate_points"]

#: a simulated scheme without a streamed form, above the point's process and what the scheme
#: declares (:attr:`.schemes.Scheme.in_memory_bytes`): a fixed part (HyperG on a 6,000-nonzero
#: stand-in: 24 MB above the process)
IN_MEMORY_BYTES = 20e6
#: measured ranks: max(RANK_FLOOR, RANK_BYTES + the §7.3 formula × RANK_FACTOR[multi-policy])
RANK_FLOOR, RANK_BYTES, RANK_FACTOR = 93e6, 56e6, {True: 1.18, False: 1.32}
_HEADERS_BYTES = 4096  # header.json and the columns' .npy headers
_SAMPLE_BYTES = 1 << 20  # text read from a .tns file to estimate its nonzeros


@dataclass(frozen=True)
class TensorSize:
    """A tensor's sizes as far as known before loading it, and the store it still needs on disk."""

    dims: tuple
    nnz: int
    basis: str  # where dims and nnz come from
    disk: int = 0  # bytes of store still to write (0: cached)
    disk_basis: str = "cached"
    nonempty: tuple | None = None  # nonempty slices per mode, from a store's header (None: not known)


def store_bytes(dims, nnz: int) -> int:
    """A tensor store's size: nnz × (Σ_n index bytes + 8 value bytes) plus the headers."""
    from spbench.datasets.tensor_store import index_dtype
    return int(nnz) * (sum(index_dtype(d).itemsize for d in dims) + 8) + _HEADERS_BYTES


def _to_make(dims, nnz: int, basis: str, what: str) -> TensorSize:
    return TensorSize(tuple(int(d) for d in dims), int(nnz), basis, store_bytes(dims, nnz), what)


def _cached(store: Path, basis: str) -> TensorSize | None:
    from spbench.datasets.tensor_store import read_header
    if not (store / "header.json").is_file():
        return None
    try:
        header = read_header(store)
    except ValueError:  # a damaged store: its loader says so
        return None
    return TensorSize(header.dims, header.nnz, f"{basis} (store header)", nonempty=header.slices_nonempty)


def _converted(path: Path, name: str) -> Path | None:
    """The cached store converted from the file at ``path`` (as its header records it), if any."""
    import json

    from spbench.datasets.tensor_store import store_path_for
    prefix = store_path_for("", name)
    try:
        stat = path.stat()
        candidates = sorted(prefix.parent.glob(prefix.name + "*")) if prefix.parent.is_dir() else []
    except OSError:
        return None
    for folder in candidates:
        try:
            source = json.loads((folder / "header.json").read_text()).get("source", {})
        except (OSError, ValueError, AttributeError):
            continue
        if source.get("path") == str(path.resolve()) and source.get("size") == stat.st_size \
                and source.get("mtime_ns") == stat.st_mtime_ns:
            return folder
    return None


def _sample_tns(path: Path) -> tuple[tuple, int, bool] | None:
    """(dims seen, nonzeros, exact) of a .tns/.tns.gz file from its size and first MB of text:
    the dims are the largest indices of those lines (a lower bound), the nonzeros the file's text
    size over the mean line length (exact when the whole file was read). None when unreadable."""
    gz = path.name.endswith(".gz")
    try:
        with open(path, "rb") as raw:
            stream = gzip.GzipFile(fileobj=raw) if gz else raw
            text = stream.read(_SAMPLE_BYTES)
            consumed = raw.tell()
            whole = not stream.read(1)
        size = path.stat().st_size
    except (OSError, EOFError, zlib.error):
        return None
    lines = text.split(b"\n") if whole else text.split(b"\n")[:-1]
    data = [line.split() for line in lines if line.strip() and not line.lstrip().startswith(b"#")]
    if not data or len(data[0]) < 2:
        return None
    width = len(data[0])
    from spbench.datasets.frostt import INDEX_MAX

    try:
        dims = tuple(max(int(row[n]) for row in data if len(row) == width) for n in range(width - 1))
    except ValueError:
        return None
    if any(not 1 <= d <= INDEX_MAX for d in dims):    # an index no store holds: its loader names the line
        return None
    if whole:
        return dims, len(data), True
    text_size = size * len(text) / max(consumed, 1) if gz else size
    per_line = sum(len(line) + 1 for line in lines) / len(lines)
    return dims, int(text_size / per_line * len(data) / len(lines)), False


def _file_size(path: Path, name: str) -> TensorSize | None:
    store = _converted(path, name)
    if store is not None:
        return _cached(store, f"{path.name}")
    sample = _sample_tns(path)
    if sample is None:
        return None
    dims, nnz, exact = sample
    basis = f"{path.name}: {nnz:,} nonzeros" if exact else \
        f"{path.name}: ~{nnz:,} nonzeros estimated from the file's size, dims from its first lines"
    return _to_make(dims, nnz, basis, f"a store converted from {path.name}")


def tensor_size(dataset, config) -> TensorSize | None:
    """The sizes of a config's tensor data set as `prepare` would make it (None: not known)."""
    from spbench.datasets import tensor_registry as reg
    from spbench.datasets.tensor_store import store_path_for

    if dataset.kind == "file":
        return _file_size(Path(dataset.params["path"]), dataset.name)
    entry = reg.tensor_entry(dataset.name)
    real = not dataset.params.get("standin") and (reg.is_cached(dataset.name) or config.fallback != "standin")
    if real:
        path = reg.tensor_path(dataset.name)
        store = _converted(path, dataset.name) if path.is_file() else None
        found = _cached(store, f"{dataset.name} (FROSTT)") if store is not None else None
        return found or _to_make(entry.dims, entry.nnz, f"{dataset.name}: Fig. 9 sizes",
                                 f"{dataset.name} converted from FROSTT"
                                 + ("" if path.is_file() else ", after its download"))
    kw = {k: v for k, v in dataset.params.items() if k in ("nnz", "dim_scale", "seed")}
    label = reg.standin_label(dataset.name, **kw)
    found = _cached(store_path_for(reg.standin_checksum(dataset.name, **kw), dataset.name), label)
    return found or _to_make(reg.standin_dims(entry, kw.get("dim_scale")), kw.get("nnz", entry.standin_nnz),
                             f"{label} (stand-in recipe)", f"stand-in {label} to generate")


def simulated_peak(size: TensorSize, scheme: str, ranks: int, multi_policy: bool,
                   csf_prefixes: bool = False, params: dict | None = None) -> tuple[int, str]:
    """(bytes, basis) of one simulated point's process at its peak: the streaming engine's law for a
    scheme with a streamed form (``csf_prefixes``: counting the CSF tree shapes too, as a calibrated
    point does), else the process, a fixed part and what the scheme declares it holds while it
    distributes the whole tensor in memory (``in_memory_bytes`` with the config's ``params``)."""
    from .schemes import SCHEMES
    from .stream_metrics import POINT_BASE_BYTES, RUN_PROCESS_BYTES, simulated_peak_bytes

    registered = SCHEMES.get(scheme)
    if registered is not None and registered.streamed is None:
        held, what = (registered.in_memory_bytes(size.nnz, len(size.dims), ranks, dict(params or {}))
                      if registered.in_memory_bytes is not None else (0.0, "nothing declared"))
        return (int(max(RUN_PROCESS_BYTES, POINT_BASE_BYTES + IN_MEMORY_BYTES + held)),
                f"{registered.label} in memory: {what} + {(POINT_BASE_BYTES + IN_MEMORY_BYTES) / 1e6:.0f} MB")
    slice_bytes = registered.slice_bytes if registered is not None else 80
    nonempty_bytes = registered.nonempty_slice_bytes if registered is not None else 0
    return (int(simulated_peak_bytes(size.dims, size.nnz, ranks, multi_policy, slice_bytes, prefixes=csf_prefixes,
                                     nonempty=size.nonempty, decision_nonempty_bytes=nonempty_bytes)),
            f"streaming engine at {ranks} ranks, {size.nnz:,} nonzeros" + (", CSF tree shapes" if csf_prefixes else ""))


def rank_formula_bytes(dims, nnz: int, ranks: int, K, multi_policy: bool, *, index_bytes: int = 4,
                       value_bytes: int = 8) -> float:
    """Memory per rank of tucker-lite §7.3 (``metrics_from_counts``' ``mem_total``) at ideal loads:
    E = ⌈nnz/P⌉ elements (N copies for a multi-policy scheme), R_n = min(L_n, ⌈L_n/P⌉ + 1) shared
    slices of K̂_n words each, min(L_n, N·E) factor rows of K_n words."""
    N, P = len(dims), int(ranks)
    Ks = [int(K)] * N if isinstance(K, int) else [int(k) for k in K]
    E = -(-int(nnz) // P)
    tensor = (N if multi_policy else 1) * E * (N * index_bytes + value_bytes)
    penultimate = sum(min(L, -(-L // P) + 1) * math.prod(Ks[:n] + Ks[n + 1:]) * 8 for n, L in enumerate(dims))
    factor = sum(min(L, N * E) * Ks[n] * 8 for n, L in enumerate(dims))
    return float(tensor + penultimate + factor)


def _ranks_here(ranks: int, launcher: str) -> tuple[int, str]:
    """How many of a job's ranks run on this machine: all, unless a launcher places them (then
    ⌈ranks / nodes⌉ inside a Slurm allocation, else one)."""
    if not launcher:
        return ranks, f"{ranks} rank{'s' if ranks != 1 else ''} here"
    nodes = os.environ.get("SLURM_JOB_NUM_NODES", "")
    if nodes.isdigit() and int(nodes) > 0:
        here = -(-ranks // int(nodes))
        return here, f"{here} of {ranks} ranks per node"
    return 1, "per rank (the launcher places the ranks)"


def measured_peak(size: TensorSize, ranks: int, K, multi_policy: bool, launcher: str) -> tuple[int, str]:
    """(bytes, basis) of one measured point's ranks on this machine at their peak."""
    factor = RANK_FACTOR[bool(multi_policy)]
    per_rank = max(RANK_FLOOR, rank_formula_bytes(size.dims, size.nnz, ranks, K, multi_policy) * factor + RANK_BYTES)
    here, where = _ranks_here(ranks, launcher)
    return int(per_rank * here), (f"max({RANK_FLOOR / 1e6:.0f} MB, §7.3 per rank x {factor} + "
                                  f"{RANK_BYTES / 1e6:.0f} MB), {where}")


def estimate_points(config, points, *, csf_prefixes: bool = False) -> list[Estimate]:
    """Each point's peak memory and each tensor's store still to write (a tensor whose size is
    not known, say an unreadable file, is left out: its loader reports it); ``csf_prefixes``: the
    simulated points count their CSF tree shapes (a calibration exists), so the largest spill
    (:mod:`.stream_prefixes`, removed after each point) is disk the sweep needs too."""
    from .mode_count import MAX_MODES, MIN_MODES
    from .schemes import SCHEMES
    from .stream_prefixes import spill_groups

    sizes: dict = {}
    spills: dict = {}
    out = []
    for point in points:
        name = point.dataset.name
        if name not in sizes:
            sizes[name] = tensor_size(point.dataset, config)
            if sizes[name] is not None and not MIN_MODES <= len(sizes[name].dims) <= MAX_MODES:
                sizes[name] = None   # its loader refuses it before converting anything
            if sizes[name] is not None and sizes[name].disk:
                out.append(Estimate("disk", name, sizes[name].disk, sizes[name].disk_basis))
        size, axes = sizes[name], point.axes
        if size is None:
            continue
        scheme = SCHEMES.get(axes["algorithm"])
        multi = bool(scheme.multi_policy) if scheme is not None else True
        if config.execution == "simulate":
            peak, basis = simulated_peak(size, axes["algorithm"], int(axes["ranks"]), multi, csf_prefixes,
                                         config.params.get(axes["algorithm"], {}))
            if csf_prefixes and len(size.dims) > 2:
                one_pass = max(len(g) for g in spill_groups(size.nnz, len(size.dims)))
                spills[name] = 8 * size.nnz * one_pass
        else:
            peak, basis = measured_peak(size, int(axes["ranks"]), axes["K"], multi, config.launcher)
        out.append(Estimate("memory", point.label, peak, f"{basis}; {size.basis}", point))
    if spills:
        name = max(spills, key=spills.get)
        out.append(Estimate("disk", f"{name}'s CSF spill", spills[name],
                            "8 bytes per nonzero and prefix set of one pass, removed after each point"))
    return out
