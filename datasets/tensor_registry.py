"""The tucker-lite paper's eight FROSTT tensors (Fig. 9) and their deterministic stand-ins.

Sizes are the exact FROSTT ones (REFERENCES.md; amazon, patents and reddit nnz are rounded
there). FROSTT publishes no checksums: the sha256 of the first download is recorded in
``$SPBENCH_DATA/frostt/checksums.json`` and enforced afterwards (``fetch.download``).

Stand-ins (this machine is offline): the same number of modes, every mode length scaled by
``dim_scale`` (kept at least min(L_n, 64)), ``nnz`` nonzeros (default 2e5–5e5: seconds to
generate), each mode's index drawn independently from a power law p_i ∝ i^−α_n over a random
relabelling of the indices, α_n tuned (bisection) so the expected largest slice holds
``max_share[n]`` of the nonzeros. Duplicate coordinates are dropped and redrawn until ``nnz``
distinct ones exist. ``max_share`` values are assumptions except enron's 10% (the paper: slices of
~5M elements out of 54M, placed here in its two short modes): large slices (2–10%) in the short
modes, small ones (≤ 0.5%) in the longest mode, which gets most of MediumG's grid, consistent
with the paper reporting near-perfect TTM balance for MediumG and bad balance for CoarseG
(big tensors "have very large slices"; patents has only 46 slices in mode 1).
"""
from __future__ import annotations

import hashlib
import json
import os
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from .errors import DatasetError
from .fetch import download, verify_file

__all__ = ["FrosttTensor", "TENSORS", "frostt_dir", "tensor_path", "is_cached", "fetch_tensor",
           "load_tensor", "standin", "standin_dims", "standin_label", "write_standin", "powerlaw_exponent", "load_or_standin",
           "DEFAULT_URL_BASE", "scaled_tensor", "TensorDataset", "LoadedTensor", "resolve_tensor"]

DEFAULT_URL_BASE = "https://s3.us-east-2.amazonaws.com/frostt/frostt_data"


def _data_dir() -> Path:
    return Path(os.environ.get("SPBENCH_DATA") or "~/.cache/spbench").expanduser()


def frostt_dir() -> Path:
    """``$SPBENCH_DATA/frostt`` (default ``~/.cache/spbench/frostt``)."""
    return _data_dir() / "frostt"


def url_base() -> str:
    """FROSTT base URL, overridable by ``$SPBENCH_FROSTT_URL`` (mirrors, tests)."""
    return (os.environ.get("SPBENCH_FROSTT_URL") or DEFAULT_URL_BASE).rstrip("/")


@dataclass(frozen=True)
class FrosttTensor:
    """One row of the paper's Fig. 9 plus where to get it and its stand-in recipe."""

    name: str                  # the paper's name
    path: str                  # FROSTT <dir>/<file> (without .tns.gz)
    dims: tuple
    nnz: int
    dim_scale: float           # stand-in mode lengths = dims * dim_scale (>= min(L, 64))
    standin_nnz: int
    max_share: tuple           # stand-in: largest slice's share of nnz, per mode
    sha256: str | None = None

    @property
    def nmodes(self) -> int:
        return len(self.dims)

    @property
    def file_name(self) -> str:
        return self.path.rsplit("/", 1)[-1] + ".tns.gz"

    def url(self, base: str | None = None) -> str:
        return f"{(base or url_base()).rstrip('/')}/{self.path}.tns.gz"


TENSORS: dict[str, FrosttTensor] = {t.name: t for t in [
    FrosttTensor("delicious", "delicious/delicious-4d", (532_924, 17_262_471, 2_480_308, 1_443), 140_126_181,
                 0.01, 500_000, (0.01, 0.002, 0.005, 0.05)),
    FrosttTensor("enron", "enron/enron", (6_066, 5_699, 244_268, 1_176), 54_202_099,
                 0.1, 500_000, (0.10, 0.10, 0.005, 0.03)),
    FrosttTensor("flickr", "flickr/flickr-4d", (319_686, 28_153_045, 1_607_191, 731), 112_890_310,
                 0.01, 500_000, (0.01, 0.002, 0.005, 0.05)),
    FrosttTensor("nell1", "nell/nell-1", (2_902_330, 2_143_368, 25_495_389), 143_599_552,
                 0.01, 500_000, (0.01, 0.01, 0.003)),
    FrosttTensor("nell2", "nell/nell-2", (12_092, 9_184, 28_818), 76_879_419,
                 0.1, 500_000, (0.03, 0.03, 0.01)),
    FrosttTensor("amazon", "amazon/amazon-reviews", (4_821_207, 1_774_269, 1_805_187), 1_741_809_018,
                 0.001, 500_000, (0.005, 0.02, 0.02)),
    FrosttTensor("patents", "patents/patents", (46, 239_172, 239_172), 3_596_640_708,
                 0.004, 500_000, (0.08, 0.005, 0.005)),
    FrosttTensor("reddit", "reddit-2015/reddit-2015", (8_211_298, 176_962, 8_116_559), 4_687_474_081,
                 0.001, 500_000, (0.005, 0.05, 0.005)),
]}


def _entry(name: str) -> FrosttTensor:
    try:
        return TENSORS[name]
    except KeyError:
        raise DatasetError(f"unknown tensor {name!r}; known: {', '.join(TENSORS)}") from None


# ---- real data ------------------------------------------------------------------------------
def tensor_path(name: str) -> Path:
    """Where ``name``'s ``.tns.gz`` lives in the cache."""
    return frostt_dir() / _entry(name).file_name


def is_cached(name: str) -> bool:
    return tensor_path(name).is_file()


def fetch_tensor(name: str, *, progress=None, timeout: float = 60) -> Path:
    """Download ``name`` into ``$SPBENCH_DATA/frostt/`` unless cached (checksum verified)."""
    entry = _entry(name)
    dest = tensor_path(name)
    if dest.is_file():
        verify_file(dest, entry.sha256)
        return dest
    download(entry.url(), dest, entry.sha256, timeout=timeout, progress=progress)
    return dest


def load_tensor(name: str, *, download_ok: bool = False, progress=None):
    """The real tensor ``name`` (parsed, ``.npz``-cached); downloads only if ``download_ok``."""
    from .frostt import read_tns
    entry = _entry(name)
    path = tensor_path(name)
    if not path.is_file():
        if not download_ok:
            raise DatasetError(f"{name}: not in the cache ({path}); download it, or use its stand-in")
        path = fetch_tensor(name, progress=progress)
    return read_tns(path, dims=entry.dims)


def load_or_standin(name: str, *, download_ok: bool = False, **standin_kwargs):
    """``(tensor, source, label)``: the real tensor when cached (or downloadable with
    ``download_ok``), source ``"real"``, label ``name``; otherwise the stand-in, source
    ``"synthetic"``, label ``standin_label(...)``."""
    if is_cached(name) or download_ok:
        try:
            return load_tensor(name, download_ok=download_ok), "real", name
        except DatasetError:
            if is_cached(name):
                raise            # a corrupt cached file is an error, not a reason to fall back
    return standin(name, **standin_kwargs), "synthetic", standin_label(name, **standin_kwargs)


# ---- stand-ins ------------------------------------------------------------------------------
def powerlaw_exponent(length: int, share: float) -> float:
    """α with 1/Σ_{i=1..length} i^−α = share (the largest of ``length`` power-law slices holds
    ``share`` of the mass); 0 when share <= 1/length."""
    if length <= 1 or share <= 1.0 / length:
        return 0.0
    if share >= 1.0:
        raise ValueError("share must be < 1")
    i = np.arange(1, length + 1, dtype=float)
    lo, hi = 0.0, 1.0
    while 1.0 / np.sum(i ** -hi) < share:
        hi *= 2
    for _ in range(60):
        mid = 0.5 * (lo + hi)
        if 1.0 / np.sum(i ** -mid) < share:
            lo = mid
        else:
            hi = mid
    return 0.5 * (lo + hi)


def standin_dims(entry: FrosttTensor, dim_scale: float | None = None) -> tuple:
    f = entry.dim_scale if dim_scale is None else float(dim_scale)
    return tuple(max(int(round(L * f)), min(L, 64)) for L in entry.dims)


def standin(name: str, *, nnz: int | None = None, dim_scale: float | None = None, seed: int = 0,
            max_share=None):
    """Deterministic synthetic stand-in of ``name`` (a SparseTensor; see the module docstring)."""
    from spbench.tucker.tensor import SparseTensor, linear_keys
    entry = _entry(name)
    target = int(entry.standin_nnz if nnz is None else nnz)
    dims = standin_dims(entry, dim_scale)
    shares = tuple(entry.max_share if max_share is None else max_share)
    if target < 1:
        raise DatasetError(f"{name}: stand-in nnz must be >= 1, got {target}")
    cells = float(np.prod([float(d) for d in dims]))
    if target > 0.5 * cells:
        raise DatasetError(f"{name}: stand-in nnz {target} too large for dims {dims}")
    rng = np.random.default_rng([int(seed), 0x7E5])
    cdfs, labels = [], []
    for L, share in zip(dims, shares):
        a = powerlaw_exponent(L, min(float(share), 0.999))
        w = np.arange(1, L + 1, dtype=float) ** -a
        cdf = np.cumsum(w)
        cdfs.append(cdf / cdf[-1])
        labels.append(rng.permutation(L))
    coords = np.zeros((0, len(dims)), dtype=np.int64)
    for _ in range(64):
        need = target - coords.shape[0]
        if need <= 0:
            break
        draw = int(need * 1.1) + 16
        new = np.stack([lab[np.minimum(np.searchsorted(cdf, rng.random(draw), side="right"), L - 1)]
                        for cdf, lab, L in zip(cdfs, labels, dims)], axis=1)
        coords = np.concatenate([coords, new])
        keys = linear_keys(coords, dims)
        order = np.argsort(keys, kind="stable")
        sk = keys[order]
        first = order[np.concatenate([[True], sk[1:] != sk[:-1]])]
        coords = coords[np.sort(first)]          # drop duplicates, keep draw order
    if coords.shape[0] < target:
        raise DatasetError(f"{name}: could not draw {target} distinct coordinates in {dims}")
    coords = coords[:target]
    values = 1.0 - rng.random(target)            # (0, 1]
    return SparseTensor(coords, values, dims, sum_duplicates=False)


def standin_label(name: str, *, nnz: int | None = None, dim_scale: float | None = None, seed: int = 0) -> str:
    """Row name of a stand-in, e.g. ``enron~standin[nnz=500000,scale=0.1,seed=0]``."""
    entry = _entry(name)
    return (f"{name}~standin[nnz={entry.standin_nnz if nnz is None else int(nnz)},"
            f"scale={entry.dim_scale if dim_scale is None else dim_scale},seed={seed}]")


def write_standin(name: str, path, **kwargs) -> Path:
    """Generate ``name``'s stand-in (``standin`` keywords) and write it as ``.tns``/``.tns.gz``."""
    from .frostt import write_tns
    t = standin(name, **kwargs)
    return write_tns(path, t, comment=f"{standin_label(name, **kwargs)} dims={'x'.join(map(str, t.dims))} nnz={t.nnz}")


# ---- config entries -------------------------------------------------------------------------
STANDIN_VERSION = 1
_STANDIN_PARAMS = {"nnz": int, "dim_scale": (int, float), "seed": int, "standin": bool}
_generate_standin = standin  # TensorDataset.load's `standin` flag shadows the function's name


@dataclass(frozen=True)
class LoadedTensor:
    """A tensor ready for a run: its row name, real or synthetic, a checksum, and the data."""

    name: str
    source: str                # "real" | "synthetic"
    checksum: str
    tensor: object             # spbench.tucker.tensor.SparseTensor
    label: str                 # the stand-in's full label, or the name


@dataclass(frozen=True)
class TensorDataset:
    """What a tucker config's data set entry resolved to: a FROSTT tensor of the paper or a file."""

    name: str
    kind: str                  # "frostt" | "file"
    params: dict

    def load(self, *, fetch: bool = True, standin: bool = False) -> LoadedTensor:
        """The real tensor (cached, else downloaded when ``fetch``), else its stand-in when
        ``standin`` or the entry asks for it (``standin: true``), else a DatasetError."""
        from .frostt import read_tns
        if self.kind == "file":
            path = Path(self.params["path"])
            tensor = read_tns(path)
            return LoadedTensor(self.name, "real", verify_file(path), tensor, self.name)
        kw = {k: v for k, v in self.params.items() if k in ("nnz", "dim_scale", "seed")}
        if not self.params.get("standin"):
            if is_cached(self.name) or fetch:
                try:
                    tensor = load_tensor(self.name, download_ok=fetch)
                    return LoadedTensor(self.name, "real", verify_file(tensor_path(self.name)), tensor, self.name)
                except DatasetError as exc:
                    if is_cached(self.name) or not standin:
                        raise DatasetError(f"{self.name}: {exc}; `fallback: standin` in the config uses "
                                           f"its synthetic stand-in instead") from None
            elif not standin:
                raise DatasetError(f"{self.name}: not cached and fetching is off; `fallback: standin` "
                                   f"uses its synthetic stand-in")
        label = standin_label(self.name, **kw)
        text = json.dumps({"tensor": self.name, "params": kw, "max_share": list(_entry(self.name).max_share),
                           "version": STANDIN_VERSION}, sort_keys=True)
        return LoadedTensor(self.name, "synthetic", hashlib.sha256(text.encode()).hexdigest(),
                            _generate_standin(self.name, **kw), label)


def scaled_tensor(ds: TensorDataset, factor: float) -> TensorDataset:
    """``ds`` with its stand-in holding ``factor`` times the nonzeros (at least 1000; ``--scale
    small``); the stand-in's label and checksum change with it. A real tensor, when cached, and
    a file are used as they are."""
    if ds.kind != "frostt":
        return ds
    nnz = int(ds.params.get("nnz", _entry(ds.name).standin_nnz))
    return TensorDataset(ds.name, ds.kind, {**ds.params, "nnz": max(1000, int(round(nnz * factor)))})


def resolve_tensor(entry) -> TensorDataset:
    """A config entry → TensorDataset: ``"enron"``, ``{"enron": {nnz, dim_scale, seed, standin}}``
    (stand-in parameters) or ``{"path": "/x/y.tns[.gz]"}`` (row name: file name without extensions)."""
    from .frostt import tns_stem
    if isinstance(entry, TensorDataset):
        return entry
    if isinstance(entry, str):
        _entry(entry)
        return TensorDataset(entry, "frostt", {})
    if isinstance(entry, dict) and len(entry) == 1:
        (key, value), = entry.items()
        if key == "path":
            path = Path(str(value)).expanduser()
            if not path.is_file():
                raise DatasetError(f"no such file {path}")
            if not (path.name.endswith(".tns") or path.name.endswith(".tns.gz")):
                raise DatasetError(f"{path}: expected a FROSTT .tns or .tns.gz file")
            return TensorDataset(tns_stem(path), "file", {"path": str(path)})
        _entry(key)
        params = value or {}
        if not isinstance(params, dict):
            raise DatasetError(f"{key}: expected a mapping of stand-in parameters "
                               f"({', '.join(_STANDIN_PARAMS)}), got {params!r}")
        for pname, pval in params.items():
            want = _STANDIN_PARAMS.get(pname)
            if want is None:
                raise DatasetError(f"{key}: unknown parameter {pname!r} (expected one of: "
                                   f"{', '.join(_STANDIN_PARAMS)})")
            if not isinstance(pval, want) or (want is not bool and isinstance(pval, bool)):
                raise DatasetError(f"{key}: parameter {pname!r} has the wrong type ({pval!r})")
        return TensorDataset(key, "frostt", dict(params))
    raise DatasetError(f"expected a tensor name, {{name: {{parameters}}}} or {{path: FILE}}, got {entry!r}")
