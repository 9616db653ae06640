"""The exact per-rank counts of a simulated point's distribution (:func:`.stream_metrics.stream_counts`:
tucker-lite §4 and §7.3 metrics, the ``ttm: csf`` model's CSF prefixes) kept on disk, so that another
sweep of the same tensors, schemes and rank counts (``tucker_k20`` after ``tucker_512``: only K
differs) or a ``--fresh`` rerun reads them instead of streaming the store again.

A file ``$SPBENCH_DATA/counts/<tensor>-<hash>.npz`` per (data set checksum, scheme, its parameters,
P, seed, code version of the Tucker package and kernels: :func:`spbench.store.code_version.code_version`),
written atomically; its identity is stored inside and checked on reading, and a file that cannot be
read whole (corrupt, partial, another identity) counts as absent and is written again.
``SPBENCH_COUNTS_CACHE=0`` turns it off (nothing read, nothing written): `spbench bench preflight`
measures its points cold that way, as the pre-flight estimates them.
"""
from __future__ import annotations

import hashlib
import json
import os
import zipfile
from functools import lru_cache
from pathlib import Path

import numpy as np

__all__ = ["counts_identity", "counts_path", "cache_entry", "code", "load_counts", "save_counts", "CachedCounts", "enabled"]

#: per-rank arrays of each mode's counts (:func:`.metrics.mode_counts`)
RANK_FIELDS = ("e_p", "r_p", "held_p", "own_p", "x_send_p", "x_recv_p", "x_peers_p", "fm_send_p", "fm_recv_p",
               "fm_peers_p")
#: integers of each mode's counts
SCALAR_FIELDS = ("slices", "fm_rows", "bad_slices")
#: the layout of the file (a reader of another layout treats it as absent)
LAYOUT = 1


@lru_cache(maxsize=None)
def code() -> str:
    """The Tucker package's code version, hashed once per process."""
    from spbench.store.code_version import code_version

    return code_version("tucker")


def counts_identity(checksum: str, scheme: str, ranks: int, seed: int, params: dict) -> dict:
    """What a distribution's counts depend on: the data set's content, the scheme and its
    parameters, the rank count, the seed and the code computing them."""
    return {"layout": LAYOUT, "dataset": str(checksum), "scheme": str(scheme), "ranks": int(ranks), "seed": int(seed),
            "params": json.loads(json.dumps(params, sort_keys=True, default=str)), "code": code()}


def cache_entry(identity: dict, label: str, kind: str) -> Path:
    """``$SPBENCH_DATA/counts/<label>-<kind>-<hash of identity>`` (``label`` names the tensor for people)."""
    from spbench.store.cache_root import data_dir

    digest = hashlib.sha256(json.dumps(identity, sort_keys=True).encode()).hexdigest()[:24]
    safe = "".join(ch if ch.isalnum() or ch in "-_." else "_" for ch in label) or "tensor"
    return data_dir() / "counts" / f"{safe}-{kind}-{digest}"


def counts_path(identity: dict, label: str = "tensor") -> Path:
    """The cache file of ``identity`` (``label`` names the tensor for people)."""
    entry = cache_entry(identity, label, f"{identity['scheme']}-{identity['ranks']}")
    return entry.with_name(entry.name + ".npz")


class CachedCounts:
    """A distribution's counts as the experiment keeps them: per-mode dicts, the serial
    distribution seconds, the policy kind and the scheme's info."""

    def __init__(self, counts: list, seconds: float, multi_policy: bool, info: dict):
        self.counts, self.seconds, self.multi_policy, self.info = counts, float(seconds), bool(multi_policy), info


def _set_name(S: tuple) -> str:
    return "_".join(str(int(j)) for j in S)


def enabled() -> bool:
    """False when ``SPBENCH_COUNTS_CACHE=0`` (module docstring)."""
    return os.environ.get("SPBENCH_COUNTS_CACHE", "1") != "0"


def save_counts(path: Path, identity: dict, cached: CachedCounts) -> None:
    """Write ``cached`` to ``path`` atomically; a write that fails (full disk) leaves no file and
    is not an error of the point (the counts are only kept for later)."""
    from spbench.store.atomic_files import WriteFailed, atomic_output, json_ready

    if not enabled():
        return

    arrays = {}
    scalars = []
    for n, c in enumerate(cached.counts):
        for field in RANK_FIELDS:
            arrays[f"m{n}.{field}"] = np.asarray(c[field], dtype=np.int64)
        for S, v in c.get("csf_prefix_p", {}).items():
            arrays[f"m{n}.csf.{_set_name(S)}"] = np.asarray(v, dtype=np.int64)
        scalars.append({field: int(c[field]) for field in SCALAR_FIELDS} | {"csf": "csf_prefix_p" in c})
    meta = {"identity": identity, "seconds": cached.seconds, "multi_policy": cached.multi_policy,
            "info": json_ready(cached.info), "modes": scalars}
    try:
        with atomic_output(path) as tmp:
            with open(tmp, "wb") as fh:
                np.savez(fh, meta=np.array(json.dumps(meta, sort_keys=True, default=str)), **arrays)
    except (WriteFailed, OSError, TypeError, ValueError):
        return


def load_counts(path: Path, identity: dict) -> CachedCounts | None:
    """The counts stored at ``path`` for ``identity``, or None when there are none, or the file is
    unreadable, partial or of another identity."""
    if not enabled():
        return None
    try:
        with np.load(path, allow_pickle=False) as data:
            meta = json.loads(str(data["meta"][()]))
            if meta["identity"] != identity:
                return None
            P = int(identity["ranks"])
            counts = []
            for n, scalars in enumerate(meta["modes"]):
                c = {field: np.asarray(data[f"m{n}.{field}"], dtype=np.int64) for field in RANK_FIELDS}
                if any(v.shape != (P,) for v in c.values()):
                    return None
                c.update({field: int(scalars[field]) for field in SCALAR_FIELDS})
                if scalars["csf"]:
                    prefix = {}
                    for name in data.files:
                        if name.startswith(f"m{n}.csf."):
                            v = np.asarray(data[name], dtype=np.int64)
                            if v.shape != (P,):
                                return None
                            prefix[tuple(int(j) for j in name[len(f"m{n}.csf."):].split("_"))] = v
                    c["csf_prefix_p"] = prefix
                counts.append(c)
            return CachedCounts(counts, float(meta["seconds"]), bool(meta["multi_policy"]), dict(meta["info"]))
    except (OSError, KeyError, ValueError, TypeError, EOFError, zipfile.BadZipFile):
        return None
