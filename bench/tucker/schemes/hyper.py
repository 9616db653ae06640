"""HyperG (paper §5; Kaya & Uçar [15]): fine-grained hypergraph partitioning with Mt-KaHyPar.

Vertices are the nonzeros (unit weight); every non-empty slice of every mode is a net whose
pins are its elements. Nets with a single pin are dropped (they can never be cut, so KM1 and
the partition's quality are unchanged). The hypergraph is partitioned into P blocks with
imbalance ε = 0.03 and the connectivity-minus-one (KM1) objective; block = owner (uni-policy).
The paper partitioned offline with Zoltan for quality; Mt-KaHyPar (``pip install mtkahypar``) is
the substitute here, and its preset trades cut for time: ``auto`` (the default) takes ``large_k``
from k = AUTO_LARGE_K_FROM blocks on, ``default`` below (docs/performance.md, "HyperG partitioning time").
The hypergraph goes to Mt-KaHyPar as an hMetis file written from numpy arrays (its Python API
takes pins only as nested lists), under ``$SPBENCH_DATA/tmp`` and removed once read.
Pass ``cache_dir`` to keep partitions as ``hyper-<hash>.npy`` keyed by the tensor's coordinates,
P, ε, seed and the preset used. Mt-KaHyPar is initialized once per process (its thread count is
the first call's ``threads``). Under MPI (:func:`hyper_parallel`) the partition is computed
offline on rank 0 by the same :func:`hyper` and scattered back.
"""
from __future__ import annotations

import hashlib
import json
import os
import tempfile
import time
from pathlib import Path

import numpy as np

from spbench.store.cache_root import data_dir

from spbench.tucker.mpi.collectives import gatherv, scatterv
from spbench.pipeline.parameters import Parameter
from .distribution import Distribution

__all__ = ["hyper", "hyper_parallel", "available", "HyperGUnavailable", "HYPER_PARAMETERS", "partition_cache_dir",
           "resolve_preset", "partition_memory", "hypergraph_nets", "write_hmetis", "AUTO_LARGE_K_FROM"]

PRESETS = ("default", "deterministic", "deterministic_quality", "quality", "highest_quality", "large_k", "auto")
#: `auto` takes large_k from this many blocks on: on a 200k-nonzero nell2 stand-in (2 threads) default took
#: 3.2x large_k's time for 13% less KM1 at k = 32, 4.3x for 21% at k = 128, 18x for 23% at k = 512
AUTO_LARGE_K_FROM = 128

HYPER_PARAMETERS = {
    "epsilon": Parameter("float", 0.03, "allowed imbalance of the partition (the paper: 0.03)", low=0.0, high=1.0,
                         nullable=False),
    "threads": Parameter("int", None, "Mt-KaHyPar threads (default: all cores); the first call in a process "
                         "fixes it", low=1, ctype="int32"),  # Mt-KaHyPar's initialize takes a C int
    "preset": Parameter("str", "auto", f"Mt-KaHyPar preset; auto: large_k from k = {AUTO_LARGE_K_FROM} on, "
                        "default below (deterministic: reproducible partitions)", choices=PRESETS, nullable=False),
    "cache_dir": Parameter("path", None, "directory keeping partitions as hyper-<hash>.npy for reuse"),
}

_MTK = {}


def partition_cache_dir() -> Path:
    """Where sweeps keep HyperG partitions: ``$SPBENCH_DATA/partitions``."""
    return data_dir() / "partitions"


#: the partitioner's peak bytes per nonzero and per nonzero and block (default-like presets, k = 32 on
#: 600k-nonzero stand-ins within 0-18%), and per pin with large_k (k = 512 on the same: within 0-43%,
#: never under); `spbench bench preflight --configs` on a HyperG-only copy of tucker_hyper.yaml
PARTITION_BYTES_PER_NNZ, PARTITION_BYTES_PER_NNZ_PART, LARGE_K_BYTES_PER_PIN = 580, 5, 247


def partition_memory(nnz: int, nmodes: int, nparts: int, params: dict) -> tuple[float, str]:
    """(bytes, what) HyperG's in-memory partition of ``nnz`` elements of ``nmodes`` modes into
    ``nparts`` blocks adds to the process: Mt-KaHyPar's hypergraph and partition state, which with
    ``large_k`` does not grow with k (nell2-delicious 600k at k = 512: 477-683 MB in all where the
    per-block law said 2.0 GB)."""
    preset = resolve_preset(str(params.get("preset", HYPER_PARAMETERS["preset"].default)), nparts)
    if preset == "large_k":
        return LARGE_K_BYTES_PER_PIN * nmodes * nnz, f"{LARGE_K_BYTES_PER_PIN} B x {nmodes * nnz:,} pins (large_k)"
    per_nnz = PARTITION_BYTES_PER_NNZ + PARTITION_BYTES_PER_NNZ_PART * int(nparts)
    return per_nnz * nnz, f"{per_nnz} B x {nnz:,} nonzeros ({preset})"


def resolve_preset(preset: str, nparts: int) -> str:
    """The Mt-KaHyPar preset a partition into ``nparts`` blocks uses: ``auto`` is ``large_k`` from
    :data:`AUTO_LARGE_K_FROM` blocks on (4-18x faster at k = 128-512 for 27-30% more KM1) and
    ``default`` below; any other name is itself."""
    preset = preset.lower()
    if preset != "auto":
        return preset
    return "large_k" if int(nparts) >= AUTO_LARGE_K_FROM else "default"


class HyperGUnavailable(RuntimeError):
    """Mt-KaHyPar cannot be imported."""


def available() -> bool:
    """Whether ``import mtkahypar`` works."""
    try:
        import mtkahypar  # noqa: F401
    except Exception:
        return False
    return True


def _initializer(threads: int):
    try:
        import mtkahypar
    except Exception as exc:  # ImportError, or a broken shared library
        raise HyperGUnavailable(
            "the HyperG scheme needs Mt-KaHyPar: `pip install mtkahypar` into this environment "
            f"(import failed: {exc})") from None
    if "init" not in _MTK:   # Mt-KaHyPar may be initialized only once per process
        _MTK["init"] = mtkahypar.initialize(max(1, int(threads)))
    return mtkahypar, _MTK["init"]


def hypergraph_nets(tensor) -> tuple[np.ndarray, np.ndarray]:
    """The fine-grained hypergraph's nets as a CSR (``offsets``, ``pins``), int64: mode by mode,
    each slice with at least two elements, its pins the element ids in the slice's stable order."""
    sizes, pins = [], []
    for n in range(tensor.nmodes):
        sl = tensor.slices(n)
        s = sl.sizes
        multi = s > 1
        sizes.append(s[multi])
        pins.append(sl.order[np.repeat(multi, s)])
    sizes = np.concatenate(sizes).astype(np.int64)
    offsets = np.zeros(sizes.size + 1, dtype=np.int64)
    np.cumsum(sizes, out=offsets[1:])
    return offsets, np.concatenate(pins).astype(np.int64)


def write_hmetis(path, nvertices: int, offsets: np.ndarray, pins: np.ndarray, *, chunk_pins: int = 1 << 20) -> None:
    """The hypergraph (``offsets``, ``pins`` as from :func:`hypergraph_nets`) as an unweighted hMetis
    file: a header ``nets vertices``, then one line per net of its 1-based pins. Formatted with numpy
    digit by digit (no Python object per pin), whole nets of about ``chunk_pins`` pins at a time so the
    formatting's scratch is bounded by the chunk (a few tens of bytes per pin), not the hypergraph."""
    nets = offsets.size - 1
    with open(path, "wb") as f:
        f.write(f"{nets} {int(nvertices)}\n".encode())
        first = 0
        while first < nets:
            last = max(first + 1, int(np.searchsorted(offsets, offsets[first] + chunk_pins, side="right")) - 1)
            last = min(last, nets)
            _net_lines(pins[offsets[first]:offsets[last]], offsets[first + 1:last + 1] - offsets[first]).tofile(f)
            first = last


def _net_lines(pins: np.ndarray, ends: np.ndarray) -> np.ndarray:
    """hMetis lines (bytes) of consecutive nets: ``pins`` 0-based, net i ending at ``ends[i]``."""
    values = pins.astype(np.int64) + 1
    digits = np.ones(values.size, dtype=np.int8)
    bound = 10
    while bound <= values.max():
        digits += values >= bound
        bound *= 10
    stop = np.cumsum(digits + 1, dtype=np.int64)       # each pin's text plus its separator ends here
    text = np.full(int(stop[-1]), ord(" "), dtype=np.uint8)
    text[stop[ends - 1] - 1] = ord("\n")
    stop -= 2                                           # now the position of each pin's last digit
    for place in range(int(digits.max())):
        has = np.flatnonzero(digits > place)
        text[stop[has] - place] = ord("0") + (values[has] // 10 ** place) % 10
    return text


def _hypergraph(mtkahypar, mtk, ctx, tensor):
    """The tensor's hypergraph read by Mt-KaHyPar from a temporary hMetis file; (hypergraph, nets)."""
    offsets, pins = hypergraph_nets(tensor)
    tmp_dir = data_dir() / "tmp"
    tmp_dir.mkdir(parents=True, exist_ok=True)
    fd, name = tempfile.mkstemp(prefix="hyper-", suffix=".hgr", dir=tmp_dir)
    os.close(fd)
    try:
        write_hmetis(name, tensor.nnz, offsets, pins)
        del pins
        hg = mtk.hypergraph_from_file(name, ctx, mtkahypar.FileFormat.HMETIS)
    finally:
        os.unlink(name)
    return hg, offsets.size - 1


def _cache_file(tensor, P, epsilon, seed, preset, cache_dir) -> Path:
    h = hashlib.sha256()
    h.update(np.ascontiguousarray(tensor.coords).tobytes())
    h.update(repr((tensor.dims, P, float(epsilon), int(seed), preset.lower())).encode())
    return Path(cache_dir) / f"hyper-{h.hexdigest()[:24]}.npy"


def _load_cached(cached: Path, nnz: int):
    """A cached partition and its recorded info, or None when absent or unreadable."""
    if not cached.is_file():
        return None
    try:
        policy = np.load(cached).astype(np.int32)
        info = json.loads(cached.with_suffix(".json").read_text())
        float(info["partition_seconds"])
    except (OSError, ValueError, KeyError, TypeError):
        return None
    return (policy, info) if policy.shape == (nnz,) else None


def _store_cached(cached: Path, policy: np.ndarray, info: dict) -> None:
    """Keep ``policy`` and its info beside it, each file written whole or not at all."""
    try:
        cached.parent.mkdir(parents=True, exist_ok=True)
        side = cached.with_suffix(".json")
        tmp_side = side.with_name(f"{side.stem}.{os.getpid()}.part.json")
        tmp_side.write_text(json.dumps(info))
        os.replace(tmp_side, side)
        tmp = cached.with_name(f"{cached.stem}.{os.getpid()}.part.npy")
        np.save(tmp, policy)
        os.replace(tmp, cached)
    except OSError:
        pass


def hyper(tensor, nparts: int, *, seed: int = 0, epsilon: float = 0.03, threads: int | None = None,
          preset: str = "auto", cache_dir=None) -> Distribution:
    """HyperG (uni-policy). ``preset``: an Mt-KaHyPar PresetType name, or ``auto`` (by k,
    :func:`resolve_preset`); ``info`` records the preset used and ``partition_seconds`` (hypergraph
    build + partition; ``build_seconds`` the build alone). ``cache_dir``: reuse/store the partition."""
    P = int(nparts)
    nnz = tensor.nnz
    used = resolve_preset(preset, P)
    if P == 1 or nnz == 0:
        policy = np.zeros(nnz, dtype=np.int32)
        return Distribution("hyper", P, (policy,) * tensor.nmodes, False,
                            {"km1": 0, "preset": used, "partition_seconds": 0.0})
    if P > nnz:
        raise ValueError(f"HyperG: cannot partition {nnz} nonzeros into {P} non-empty blocks")
    cached = _cache_file(tensor, P, epsilon, seed, used, cache_dir) if cache_dir else None
    hit = _load_cached(cached, nnz) if cached is not None else None
    if hit is not None:
        policy, info = hit
        return Distribution("hyper", P, (policy,) * tensor.nmodes, False,
                            {**info, "epsilon": float(epsilon), "seed": int(seed), "preset": used, "cached": True})
    start = time.perf_counter()
    mtkahypar, mtk = _initializer(threads or os.cpu_count() or 1)
    try:
        mtkahypar.set_seed(int(seed))
    except Exception:
        pass
    ctx = mtk.context_from_preset(getattr(mtkahypar.PresetType, used.upper()))
    ctx.set_partitioning_parameters(P, float(epsilon), mtkahypar.Objective.KM1)
    ctx.logging = False
    hg, nets = _hypergraph(mtkahypar, mtk, ctx, tensor)
    built = time.perf_counter() - start
    phg = hg.partition(ctx)
    policy = np.asarray(phg.get_partition(), dtype=np.int32)
    info = {"km1": int(phg.km1()), "partition_seconds": time.perf_counter() - start, "build_seconds": built,
            "nets": int(nets), "preset": used}
    if cached is not None:
        _store_cached(cached, policy, info)
    return Distribution("hyper", P, (policy,) * tensor.nmodes, False,
                        {**info, "epsilon": float(epsilon), "seed": int(seed), "cached": False})


def hyper_parallel(comm, block, *, seed: int = 0, **params) -> tuple[list, dict]:
    """HyperG offline on rank 0: the input blocks gathered there, :func:`hyper` (with its partition
    cache), the policy scattered back. Returns (policies of this rank's block, info)."""
    from spbench.datasets.sparse_tensor import SparseTensor

    coords, counts = gatherv(comm, block.coords)
    values, _ = gatherv(comm, block.values)
    policy, info = None, None
    if comm.rank == 0:
        tensor = SparseTensor(coords, values, block.dims, sum_duplicates=False, check=False)
        del coords, values
        dist = hyper(tensor, comm.size, seed=seed, **params)
        policy = dist.policy(0)
        info = {k: v for k, v in dist.info.items() if isinstance(v, (int, float, str, bool))}
        del tensor, dist
    out = scatterv(comm, policy, counts, np.int32)
    info = comm.bcast(info, root=0)
    return [out] * len(block.dims), info
