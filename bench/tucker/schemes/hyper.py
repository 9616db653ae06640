"""HyperG (paper §5; Kaya & Uçar [15]): fine-grained hypergraph partitioning with Mt-KaHyPar.

Vertices are the nonzeros (unit weight); every non-empty slice of every mode is a net whose
pins are its elements. Nets with a single pin are dropped (they can never be cut, so KM1 and
the partition's quality are unchanged). The hypergraph is partitioned into P blocks with
imbalance ε = 0.03 and the connectivity-minus-one (KM1) objective; block = owner (uni-policy).
The paper used Zoltan; Mt-KaHyPar (``pip install mtkahypar``) is the substitute here.
Cost grows fast (a 200k-nonzero tensor took ~3 s at k = 2, ~38 s at k = 64 on 2 cores): pass
``cache_dir`` to keep partitions as ``hyper-<hash>.npy`` keyed by the tensor's coordinates,
P, ε, seed and preset. Mt-KaHyPar is initialized once per process (its thread count is the
first call's ``threads``). Under MPI (:func:`hyper_parallel`) the partition is computed offline
on rank 0 by the same :func:`hyper` and scattered back.
"""
from __future__ import annotations

import hashlib
import json
import os
import time
from pathlib import Path

import numpy as np

from spbench.cache_root import data_dir

from spbench.tucker.mpi.collectives import gatherv, scatterv
from ...parameters import Parameter
from .distribution import Distribution

__all__ = ["hyper", "hyper_parallel", "available", "HyperGUnavailable", "HYPER_PARAMETERS", "partition_cache_dir"]

PRESETS = ("default", "deterministic", "deterministic_quality", "quality", "highest_quality", "large_k")

HYPER_PARAMETERS = {
    "epsilon": Parameter("float", 0.03, "allowed imbalance of the partition (the paper: 0.03)", low=0.0, high=1.0,
                         nullable=False),
    "threads": Parameter("int", None, "Mt-KaHyPar threads (default: all cores); the first call in a process "
                         "fixes it", low=1),
    "preset": Parameter("str", "default", "Mt-KaHyPar preset (deterministic: reproducible partitions)",
                        choices=PRESETS, nullable=False),
    "cache_dir": Parameter("path", None, "directory keeping partitions as hyper-<hash>.npy for reuse"),
}

_MTK = {}


def partition_cache_dir() -> Path:
    """Where sweeps keep HyperG partitions: ``$SPBENCH_DATA/partitions``."""
    return data_dir() / "partitions"


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


def _cache_file(tensor, P, epsilon, seed, preset, cache_dir) -> Path:
    h = hashlib.sha256()
    h.update(np.ascontiguousarray(tensor.coords).tobytes())
    h.update(repr((tensor.dims, P, float(epsilon), int(seed), preset.lower())).encode())
    return Path(cache_dir) / f"hyper-{h.hexdigest()[:24]}.npy"


def hyper(tensor, nparts: int, *, seed: int = 0, epsilon: float = 0.03, threads: int | None = None,
          preset: str = "default", cache_dir=None) -> Distribution:
    """HyperG (uni-policy). ``preset``: an Mt-KaHyPar PresetType name (``deterministic`` for
    reproducible partitions; ``default`` is the preset the timings above used). ``cache_dir``:
    reuse/store the partition there."""
    P = int(nparts)
    nnz = tensor.nnz
    if P == 1 or nnz == 0:
        policy = np.zeros(nnz, dtype=np.int32)
        return Distribution("hyper", P, (policy,) * tensor.nmodes, False, {"km1": 0})
    if P > nnz:
        raise ValueError(f"HyperG: cannot partition {nnz} nonzeros into {P} non-empty blocks")
    cached = _cache_file(tensor, P, epsilon, seed, preset, cache_dir) if cache_dir else None
    if cached is not None and cached.is_file():
        try:
            policy = np.load(cached).astype(np.int32)
            seconds = json.loads(cached.with_suffix(".json").read_text())["partition_seconds"]
            if policy.shape == (nnz,):
                return Distribution("hyper", P, (policy,) * tensor.nmodes, False,
                                    {"epsilon": float(epsilon), "seed": int(seed), "preset": preset,
                                     "cached": True, "partition_seconds": float(seconds)})
        except (OSError, ValueError, KeyError):
            pass
    start = time.perf_counter()
    mtkahypar, mtk = _initializer(threads or os.cpu_count() or 1)
    nets = []
    for n in range(tensor.nmodes):
        sl = tensor.slices(n)
        sizes = sl.sizes
        keep = np.flatnonzero(sizes > 1)
        pins = sl.order
        for l in keep.tolist():
            nets.append(pins[sl.offsets[l]:sl.offsets[l + 1]].tolist())
    try:
        mtkahypar.set_seed(int(seed))
    except Exception:
        pass
    ctx = mtk.context_from_preset(getattr(mtkahypar.PresetType, preset.upper()))
    ctx.set_partitioning_parameters(P, float(epsilon), mtkahypar.Objective.KM1)
    ctx.logging = False
    hg = mtk.create_hypergraph(ctx, nnz, len(nets), nets)
    phg = hg.partition(ctx)
    policy = np.asarray(phg.get_partition(), dtype=np.int32)
    seconds = time.perf_counter() - start
    if cached is not None:
        try:
            cached.parent.mkdir(parents=True, exist_ok=True)
            side = cached.with_suffix(".json")
            tmp_side = side.with_name(f"{side.stem}.{os.getpid()}.part.json")
            tmp_side.write_text(json.dumps({"partition_seconds": seconds}))
            os.replace(tmp_side, side)
            tmp = cached.with_name(f"{cached.stem}.{os.getpid()}.part.npy")
            np.save(tmp, policy)
            os.replace(tmp, cached)
        except OSError:
            pass
    return Distribution("hyper", P, (policy,) * tensor.nmodes, False,
                        {"km1": int(phg.km1()), "epsilon": float(epsilon), "seed": int(seed),
                         "cached": False, "partition_seconds": seconds,
                         "nets": len(nets), "preset": preset})


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
