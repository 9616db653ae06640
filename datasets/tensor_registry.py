"""The tucker-lite paper's FROSTT tensors (Fig. 9; the table is ``paper_tensors``, re-exported
here), their cache, their stand-ins, and config entries. Its ``resolve`` and ``TensorDataset``
follow the data layer's one protocol (``dataset``), as the matrix registry's do.

Every tensor a run uses goes through a tensor store (``tensor_store``): a ``.tns`` file or a
FROSTT download is converted once (``tns_ingest``, cached by the file's sha256), a stand-in is
generated straight into one (``tensor_standins``, cached by its parameters' checksum), and
``LoadedTensor`` hands out the store's folder and header; ``.tensor`` loads it whole only when
asked.

Stand-ins (this machine is offline; the model is in ``tensor_standins``, each tensor's recipe in
``paper_tensors``): ``nnz`` nonzeros (default 2e5–5e5: seconds to generate) in mode lengths
scaled by ``dim_scale``; ``size: full`` means the paper's exact dims and nnz.
"""
from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import ClassVar

from spbench.store.atomic_files import WriteFailed
from spbench.store.cache_root import data_dir

from . import conversion_progress
from .dataset import Dataset, LoadedDataset
from .errors import DatasetError
from .fetch import download, verify_file
from .paper_tensors import DEFAULT_URL_BASE, TENSORS, FrosttTensor, tensor_entry
from .resources import out_of_memory
from .sparse_tensor import SparseTensor
from .tensor_standins import (STANDIN_VERSION, collect_chunks, powerlaw_exponent, scaled_dims, standin_chunks,
                              standin_columns)
from .tensor_store import StoreWriter, load_store, read_header, store_path_for

__all__ = ["FrosttTensor", "TENSORS", "frostt_dir", "tensor_path", "is_cached", "fetch_tensor", "real_tensor_store",
           "load_tensor", "standin", "standin_dims", "standin_label", "write_standin", "powerlaw_exponent", "load_or_standin",
           "standin_store", "standin_checksum", "file_store", "summed_duplicates_note", "DEFAULT_URL_BASE",
           "TensorDataset", "LoadedTensor", "resolve"]


def frostt_dir() -> Path:
    """``$SPBENCH_DATA/frostt`` (default ``~/.cache/spbench/frostt``)."""
    return data_dir() / "frostt"


# ---- real data ------------------------------------------------------------------------------
def tensor_path(name: str) -> Path:
    """Where ``name``'s ``.tns.gz`` lives in the cache."""
    return frostt_dir() / tensor_entry(name).file_name


def is_cached(name: str) -> bool:
    return tensor_path(name).is_file()


def fetch_tensor(name: str, *, progress=None, timeout: float = 60) -> Path:
    """Download ``name`` into ``$SPBENCH_DATA/frostt/`` unless cached (checksum verified)."""
    entry = tensor_entry(name)
    dest = tensor_path(name)
    if dest.is_file():
        verify_file(dest, entry.sha256)
        return dest
    download(entry.url(), dest, entry.sha256, timeout=timeout, progress=progress)
    return dest


def real_tensor_store(name: str, *, download_ok: bool = False, progress=None,
                      duplicates: str = "sum") -> tuple[Path, str]:
    """``(store folder, sha256)`` of the real tensor ``name``, converted on first use (repeated
    coordinates by the rule ``duplicates``, see :func:`file_store`); downloads only if ``download_ok``."""
    entry = tensor_entry(name)
    path = tensor_path(name)
    if not path.is_file():
        if not download_ok:
            raise DatasetError(f"{name}: not in the cache ({path}); download it, or use its stand-in")
        path = fetch_tensor(name, progress=progress)
    store = file_store(path, name=name, dims=entry.dims, sha256=entry.sha256, progress=progress,
                       duplicates=duplicates)
    return store, read_header(store).checksum


def file_store(path, *, name: str | None = None, dims=None, sha256: str | None = None, progress=None,
               duplicates: str = "sum") -> Path:
    """The store of a ``.tns``/``.tns.gz`` file, converted into the cache on first use (keyed by the
    file's sha256, checked against the one recorded beside it). ``duplicates``: ``sum`` adds the
    values of repeated coordinates (FROSTT's reading; the header counts them), ``error`` refuses a
    file that repeats one, also when its store was converted before with ``sum``."""
    from .tns_ingest import convert_tns
    checksum = verify_file(path, sha256)
    store = convert_tns(path, name=name, dims=dims, source_sha256=checksum, progress=progress, duplicates=duplicates)
    removed = read_header(store).duplicates.get("removed", 0)
    if duplicates == "error" and removed:
        raise DatasetError(f"{path}: {removed:,} {'line repeats' if removed == 1 else 'lines repeat'} the "
                           f"coordinates of an earlier line (duplicates: error; `--duplicates sum` adds them)")
    return store


def summed_duplicates_note(path, header) -> str | None:
    """The warning a sweep prints for a store whose repeated coordinates were summed (how many, and
    how to refuse them instead); None when none were."""
    removed = header.duplicates.get("removed", 0)
    if header.duplicates.get("rule") != "sum" or not removed:
        return None
    lines = f"{removed:,} lines repeat" if removed != 1 else "1 line repeats"
    return (f"{path}: {lines} the coordinates of an earlier line; the values were added into one nonzero "
            f"(FROSTT's rule; `--duplicates error` refuses such a file)")


def load_tensor(name: str, *, download_ok: bool = False, progress=None):
    """The real tensor ``name`` as a SparseTensor (through its store); downloads only if ``download_ok``."""
    return load_store(real_tensor_store(name, download_ok=download_ok, progress=progress)[0])


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
def standin_dims(entry: FrosttTensor, dim_scale: float | None = None) -> tuple:
    return scaled_dims(entry.dims, entry.dim_scale if dim_scale is None else dim_scale)


def _standin_recipe(name, nnz, dim_scale, max_share):
    entry = tensor_entry(name)
    return (standin_dims(entry, dim_scale), tuple(entry.max_share if max_share is None else max_share),
            int(entry.standin_nnz if nnz is None else nnz))


def standin(name: str, *, nnz: int | None = None, dim_scale: float | None = None, seed: int = 0,
            max_share=None):
    """Deterministic synthetic stand-in of ``name`` in memory (a SparseTensor; ``tensor_standins``)."""
    dims, shares, target = _standin_recipe(name, nnz, dim_scale, max_share)
    coords, values = collect_chunks(standin_chunks(dims, shares, target, seed, label=name), len(dims))
    return SparseTensor(coords, values, dims, sum_duplicates=False, check=False)


def standin_label(name: str, *, nnz: int | None = None, dim_scale: float | None = None, seed: int = 0) -> str:
    """Row name of a stand-in, e.g. ``enron~standin[nnz=500000,scale=0.1,seed=0]``."""
    entry = tensor_entry(name)
    return (f"{name}~standin[nnz={entry.standin_nnz if nnz is None else int(nnz)},"
            f"scale={entry.dim_scale if dim_scale is None else dim_scale},seed={seed}]")


def standin_checksum(name: str, **kw) -> str:
    """The stand-in's data set checksum: its recipe and the generator's version."""
    text = json.dumps({"tensor": name, "params": kw, "max_share": list(tensor_entry(name).max_share),
                       "version": STANDIN_VERSION}, sort_keys=True)
    return hashlib.sha256(text.encode()).hexdigest()


def standin_store(name: str, dst=None, *, progress=None, **kw) -> Path:
    """Generate ``name``'s stand-in (keywords ``nnz``, ``dim_scale``, ``seed``) chunk by chunk
    straight into a tensor store, no text, and return its folder: ``dst``, or the cache (reused
    when there). Memory: ~11 bytes per nonzero plus two rounds of draws. A failed write is a
    WriteFailed naming the store (nothing is left of it)."""
    kw = {k: v for k, v in kw.items() if v is not None}
    unknown = set(kw) - {"nnz", "dim_scale", "seed"}
    if unknown:
        raise DatasetError(f"{name}: unknown stand-in parameter(s) {', '.join(sorted(unknown))}")
    checksum = standin_checksum(name, **kw)
    cached = store_path_for(checksum, name)
    dst = Path(dst) if dst is not None else cached
    if dst == cached and (dst / "header.json").is_file():
        return dst
    if dst.exists():
        raise DatasetError(f"{dst}: already exists; remove it or choose another output folder")
    dims, shares, target = _standin_recipe(name, kw.get("nnz"), kw.get("dim_scale"), None)
    shown = conversion_progress.current(name) if progress is None else None   # inside a sweep: on stderr
    progress = progress or shown
    try:
        with StoreWriter(dst, len(dims), dims=dims) as writer:
            for cols, values, ranges in standin_columns(dims, shares, target, kw.get("seed", 0), label=name):
                writer.append(cols, values, ranges)
                if progress:
                    progress("generating", writer.nnz, target)
            writer.commit(checksum=checksum, duplicates={"rule": "never drawn", "removed": 0},
                          source={"kind": "standin", "tensor": name, "params": kw, "max_share": list(shares),
                                  "label": standin_label(name, **kw), "version": STANDIN_VERSION})
    except MemoryError:
        raise out_of_memory(standin_label(name, **kw), f"generating it in {' x '.join(map(str, dims))}") from None
    except OSError as exc:
        raise WriteFailed.from_os_error(dst, exc) from None
    finally:
        if shown is not None:
            shown.end()
    return dst


def write_standin(name: str, path, **kwargs) -> Path:
    """Generate ``name``'s stand-in (``standin`` keywords) and write it as ``.tns``/``.tns.gz``,
    chunk by chunk."""
    from .frostt import write_tns_chunks
    dims, shares, target = _standin_recipe(name, kwargs.get("nnz"), kwargs.get("dim_scale"), kwargs.get("max_share"))
    chunks = standin_chunks(dims, shares, target, kwargs.get("seed", 0), label=name)
    label = standin_label(name, **{k: v for k, v in kwargs.items() if k != "max_share"})
    return write_tns_chunks(path, chunks, comment=f"{label} dims={'x'.join(map(str, dims))} nnz={target}")


# ---- config entries -------------------------------------------------------------------------
_STANDIN_PARAMS = {"nnz": int, "dim_scale": (int, float), "seed": int, "standin": bool, "size": str}
#: the values each stand-in parameter accepts: a test and the words for it
_STANDIN_RANGES = {"nnz": (lambda v: v >= 1, "an integer >= 1"),
                   "dim_scale": (lambda v: 0 < v <= 1, "a number in (0, 1], the share of the paper's mode lengths"),
                   "seed": (lambda v: v >= 0, "an integer >= 0"),
                   "standin": (lambda v: True, "true or false"), "size": (lambda v: True, "full")}
_SIZES = ("full",)


@dataclass(frozen=True)
class LoadedTensor(LoadedDataset):
    """A tensor ready for a run: its row name, real or synthetic, a checksum and its store.

    ``header`` (dims, nnz, non-empty slices) reads no nonzero; ``tensor`` loads the whole
    tensor on first use (serial runs, simulations, tests)."""

    store: Path                # the tensor store's folder (tensor_store)
    label: str                 # the stand-in's full label, or the name

    @cached_property
    def header(self):
        return read_header(self.store)

    @cached_property
    def tensor(self):
        """The whole tensor (a SparseTensor)."""
        return load_store(self.store)


@dataclass(frozen=True)
class TensorDataset(Dataset):
    """What a tucker config's data set entry resolved to: a FROSTT tensor of the paper or a file."""

    data_kind: ClassVar[str] = "tensor"
    name: str
    kind: str                  # "frostt" | "file"
    params: dict

    def __hash__(self) -> int:   # points that hold a data set go into sets
        return hash((self.name, self.kind, json.dumps(self.params, sort_keys=True, default=str)))

    def load(self, *, fetch: bool = True, standin: bool = False, progress=None,
             duplicates: str = "sum") -> LoadedTensor:
        """The real tensor (cached, else downloaded when ``fetch``), else its stand-in when
        ``standin`` or the entry asks for it (``standin: true``), else a DatasetError. Either
        way through its store, made on first use (a file's repeated coordinates by the rule
        ``duplicates``, :func:`file_store`)."""
        if self.kind == "file":
            path = Path(self.params["path"])
            store = file_store(path, name=self.name, progress=progress, duplicates=duplicates)
            return LoadedTensor(self.name, "real", read_header(store).checksum, store, self.name)
        kw = {k: v for k, v in self.params.items() if k in ("nnz", "dim_scale", "seed")}
        if not self.params.get("standin"):
            if is_cached(self.name) or fetch:
                try:
                    store, checksum = real_tensor_store(self.name, download_ok=fetch, progress=progress,
                                                        duplicates=duplicates)
                    return LoadedTensor(self.name, "real", checksum, store, self.name)
                except DatasetError as exc:
                    if is_cached(self.name) or not standin:
                        raise DatasetError(f"{self.name}: {exc}; `fallback: standin` in the config uses "
                                           f"its synthetic stand-in instead") from None
            elif not standin:
                raise DatasetError(f"{self.name}: not cached and fetching is off; `fallback: standin` "
                                   f"uses its synthetic stand-in")
        store = standin_store(self.name, progress=progress, **kw)
        return LoadedTensor(self.name, "synthetic", standin_checksum(self.name, **kw), store,
                            standin_label(self.name, **kw))

    def scaled(self, factor: float) -> "TensorDataset":
        """This data set with its stand-in holding ``factor`` times the nonzeros (at least 1000;
        ``--scale small``); the stand-in's label and checksum change with it. A real tensor, when
        cached, and a file are used as they are."""
        if self.kind != "frostt":
            return self
        nnz = int(self.params.get("nnz", tensor_entry(self.name).standin_nnz))
        return TensorDataset(self.name, self.kind, {**self.params, "nnz": max(1000, int(round(nnz * factor)))})


def _full_size(name: str, params: dict) -> dict:
    """``size: full`` spelled out: the paper's exact nnz and dims (``dim_scale: 1``), so both
    spellings name the same stand-in (label and checksum)."""
    size = params.pop("size", None)
    if size is None:
        return params
    if size not in _SIZES:
        raise DatasetError(f"{name}: parameter 'size' must be one of {', '.join(_SIZES)}, got {size!r}")
    clash = [k for k in ("nnz", "dim_scale") if k in params]
    if clash:
        raise DatasetError(f"{name}: 'size: full' sets nnz and dim_scale; drop {', '.join(clash)}")
    return {**params, "nnz": tensor_entry(name).nnz, "dim_scale": 1}


def resolve(entry) -> TensorDataset:
    """A config entry → TensorDataset: ``"enron"``, ``{"enron": {nnz, dim_scale, seed, standin}}``
    (stand-in parameters; ``{"enron": {size: full}}`` for the paper's exact dims and nnz) or
    ``{"path": "/x/y.tns[.gz]"}`` (row name: file name without extensions)."""
    from .frostt import tns_stem
    if isinstance(entry, TensorDataset):
        return entry
    if isinstance(entry, str):
        tensor_entry(entry)
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
        tensor_entry(key)
        params = value or {}
        if not isinstance(params, dict):
            raise DatasetError(f"{key}: expected a mapping of stand-in parameters "
                               f"({', '.join(_STANDIN_PARAMS)}), got {params!r}")
        for pname, pval in params.items():
            want = _STANDIN_PARAMS.get(pname)
            if want is None:
                raise DatasetError(f"{key}: unknown parameter {pname!r} (expected one of: "
                                   f"{', '.join(_STANDIN_PARAMS)})")
            within, expected = _STANDIN_RANGES[pname]
            if not isinstance(pval, want) or (want is not bool and isinstance(pval, bool)) or not within(pval):
                raise DatasetError(f"{key}: parameter {pname!r} must be {expected}, got {pval!r}")
        return TensorDataset(key, "frostt", _full_size(key, dict(params)))
    raise DatasetError(f"expected a tensor name, {{name: {{parameters}}}} or {{path: FILE}}, got {entry!r}")
