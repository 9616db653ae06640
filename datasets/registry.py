"""The data sets a SpTrSV config can name: the paper's matrices, the generators, local files.

The paper's 33 SuiteSparse matrices of Table A.1, the 12 more of Table A.3, Tables A.2/A.3 and
each matrix's synthetic stand-in live in ``paper_matrices`` (re-exported here); real matrices
are fetched and cached by ``suitesparse_cache`` (re-exported too). This module resolves config
entries and loads them: generated, from a file, from the cache, or the stand-in. Its
``resolve`` and ``MatrixDataset`` follow the data layer's one protocol (``dataset``), as the
tensor registry's do.

The paper's other two data sets are the same matrices transformed (§5.2.2-5.2.3): an entry may
carry ``transform: ichol`` or ``transform: metis`` (or the name suffix ``+ichol`` / ``+metis``);
its name gets the suffix, its checksum covers the transform and ``load`` returns the transformed
lower triangle (``transforms.apply_transform``).
"""
from __future__ import annotations

import hashlib
import json
import os
import tempfile
from typing import ClassVar
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Callable, Mapping

import scipy.sparse as sp
import yaml

from . import synthetic
from .dataset import Dataset
from .errors import DatasetError
from .fetch import file_sha256
from .loaded_matrix import LoadedMatrix, file_matrix
from .matrix_market import MATRIX_SUFFIXES, matrix_stem, read_matrix_file
from .matrix_names import unknown_name
from spbench.store.cache_root import data_dir

from .paper_matrices import (ICHOL_TABLE, METIS_ONLY, METIS_TABLE, SUITESPARSE, PaperRow, SuiteSparseMatrix,
                             suitesparse_matrix)
from .suitesparse_cache import fetch_suitesparse, is_cached, load_real, save_npz, suitesparse_dir
from .transforms import TRANSFORM_VERSION, TRANSFORMS, IcholBreakdown, apply_transform, is_symmetric

__all__ = ["DatasetError", "MatrixDataset", "LoadedMatrix", "SuiteSparseMatrix", "SUITESPARSE", "METIS_ONLY",
           "PaperRow", "ICHOL_TABLE", "METIS_TABLE", "TRANSFORMS", "suitesparse_matrix", "resolve", "list_datasets",
           "fetch_suitesparse", "is_cached", "data_dir", "suitesparse_dir"]


@dataclass(frozen=True)
class MatrixDataset(Dataset):
    """What a config entry resolved to; ``load`` turns it into a matrix.

    ``params``: {} for SuiteSparse, {"path": absolute path} for files, and for synthetic ones
    {"generator": family, **all its parameters}. ``transform``: None, "ichol" or "metis"; the
    name then ends in ``+ichol`` / ``+metis`` and ``load`` returns the transformed lower triangle.
    """

    data_kind: ClassVar[str] = "matrix"
    name: str
    kind: str
    params: dict = field(default_factory=dict, hash=False)
    transform: str | None = None

    @property
    def base(self) -> str:
        """The name without the transform suffix: registry name, file stem or generator label."""
        suffix = f"+{self.transform}" if self.transform else ""
        return self.name[: len(self.name) - len(suffix)] if suffix and self.name.endswith(suffix) else self.name

    def load(self, *, fetch: bool = True, standin: bool = False, progress=None,
             duplicates: str = "sum") -> LoadedMatrix:
        """The matrix: generated, read from a file, or from the cache / a download / the stand-in.
        Repeated entries are summed, as Matrix Market defines them (``duplicates`` must be "sum").

        Without a transform: the full symmetric matrix (a paper-size stand-in: its lower triangle,
        already in the transform's order, ``paper_size``). With one: ``apply_transform``'s lower
        triangle (a fixed point of ``lower_triangle``, so callers taking the lower triangle of
        what ``load`` returns need not know), cached on disk for real matrices. ``progress(done
        bytes, total or None)`` follows a download.
        """
        if duplicates != "sum":
            raise ValueError(f"matrices sum repeated entries (Matrix Market's rule); got duplicates={duplicates!r}")
        if self.kind == "suitesparse" and self.params.get("standin_size") == "paper":
            m = suitesparse_matrix(self.base)
            if m is None:
                raise unknown_name(self.name, self.base)
            why = []
            real = load_real(m, fetch=fetch, progress=progress, why=why)
            if real is None:
                if not standin:
                    raise _not_cached(m, why[0] if why else "fetching is disabled")
                return _paper_size_standin(self.name, m, self.transform)
            loaded = real
        else:
            loaded = self._load_base(fetch=fetch, standin=standin, progress=progress)
        if self.transform is None:
            return loaded
        return _transformed(self.name, self.transform, loaded)

    def scaled(self, factor: float) -> "MatrixDataset":
        """This data set with its synthetic matrix about ``factor`` times the rows (``--scale
        small``): a generator's size parameters shrink (new name, e.g. ``lap2d-5pt[grid=141]``); a
        SuiteSparse matrix keeps its name and, if it falls back to its stand-in, gets the shrunk
        stand-in (the checksum differs); a file is used as it is."""
        if self.kind == "synthetic":
            gen = self.params["generator"]
            params = synthetic.scaled_params(gen, {k: v for k, v in self.params.items() if k != "generator"},
                                             factor)
            name = synthetic.label(gen, params)
            return MatrixDataset(f"{name}+{self.transform}" if self.transform else name, "synthetic",
                                 {"generator": gen, **params}, self.transform)
        if self.kind == "suitesparse":
            return MatrixDataset(self.name, self.kind, {**self.params, "standin_scale": float(factor)},
                                 self.transform)
        return self

    def at_paper_size(self) -> "MatrixDataset":
        """This data set at the paper's size (``--scale paper``): a SuiteSparse matrix keeps its
        name and, when it falls back to a stand-in, gets the stand-in at its real rows
        (``paper_size``); generated matrices and files are used as they are."""
        if self.kind == "suitesparse":
            return MatrixDataset(self.name, self.kind, {**self.params, "standin_size": "paper"}, self.transform)
        return self

    def _load_base(self, *, fetch: bool, standin: bool, progress) -> LoadedMatrix:
        if self.kind == "synthetic":
            gen = self.params["generator"]
            params = {k: v for k, v in self.params.items() if k != "generator"}
            return LoadedMatrix(self.base, "synthetic", synthetic.checksum(gen, params), synthetic.generate(gen, params))
        if self.kind == "file":
            return _load_file(self.base, Path(self.params["path"]))
        if self.kind == "suitesparse":
            m = suitesparse_matrix(self.base)
            if m is None:
                raise unknown_name(self.name, self.base)
            return _load_suitesparse(m, fetch=fetch, standin=standin, progress=progress,
                                     standin_scale=self.params.get("standin_scale", 1.0))
        raise DatasetError(f"{self.name}: unknown data set kind {self.kind!r}")


def transformed_dir() -> Path:
    """Where transformed real matrices are cached (``<checksum>.npz``): ``data_dir()/transformed``."""
    return data_dir() / "transformed"


def _transformed(name: str, transform: str, loaded: LoadedMatrix) -> LoadedMatrix:
    """``loaded`` through ``apply_transform``; checksum = sha256(base checksum, transform, version).
    An iChol breakdown is an IcholBreakdown carrying that checksum (the data set exists, its factor
    does not)."""
    text = json.dumps({"base": loaded.checksum, "transform": transform, "version": TRANSFORM_VERSION}, sort_keys=True)
    checksum = hashlib.sha256(text.encode()).hexdigest()
    symmetric = is_symmetric(loaded.matrix)
    cache = transformed_dir() / f"{checksum}.npz" if loaded.source == "real" else None
    if cache is not None and cache.is_file():
        try:
            L = sp.csr_matrix(sp.load_npz(cache))
            L.sort_indices()
            return _with_notes(LoadedMatrix(name, loaded.source, checksum, L, symmetric), loaded)
        except (OSError, ValueError):
            pass
    try:
        L = apply_transform(transform, loaded.matrix)
    except IcholBreakdown as exc:
        raise IcholBreakdown(f"{name}: {exc}", checksum=checksum, source=loaded.source, symmetric=symmetric) from None
    except DatasetError as exc:
        raise DatasetError(f"{name}: {exc}") from None
    if cache is not None:
        save_npz(cache, L)
    return _with_notes(LoadedMatrix(name, loaded.source, checksum, L, symmetric), loaded)


def _with_notes(loaded: LoadedMatrix, source: LoadedMatrix) -> LoadedMatrix:
    """``loaded`` with the duplicate count and warnings of the matrix it was made from."""
    return replace(loaded, duplicates=source.duplicates, warnings=source.warnings)


def _load_file(name: str, path: Path) -> LoadedMatrix:
    if not path.is_file():
        raise DatasetError(f"{path}: no such file")
    with tempfile.TemporaryDirectory(prefix="spbench-") as tmp:
        read = read_matrix_file(path, extract_dir=tmp)
    _check_square(read.matrix, path)
    return file_matrix(name, path, read, file_sha256(path))


def _check_square(A, what) -> None:
    if A.shape[0] != A.shape[1]:
        raise DatasetError(f"{what}: expected a square matrix, got {A.shape[0]}x{A.shape[1]}")


def _paper_size_standin(name: str, m: SuiteSparseMatrix, transform: str | None) -> LoadedMatrix:
    """``m``'s stand-in at its real rows, already in ``transform``'s order: the lower triangle."""
    from .paper_size import paper_size_lower

    try:
        checksum, L = paper_size_lower(m, transform)
    except DatasetError as exc:
        raise DatasetError(f"{name}: {exc}") from None
    return LoadedMatrix(name, "synthetic", checksum, L, True)


def _not_cached(m: SuiteSparseMatrix, reason: str) -> DatasetError:
    return DatasetError(f"{m.name}: not cached in {suitesparse_dir()} and could not be fetched ({reason}); "
                        f"set 'fallback: standin' in the config to use its synthetic stand-in "
                        f"{m.standin_label()}, or run 'spbench datasets fetch {m.name}' when online")


def _load_suitesparse(m: SuiteSparseMatrix, *, fetch: bool, standin: bool, progress=None,
                      standin_scale: float = 1.0) -> LoadedMatrix:
    why = []
    real = load_real(m, fetch=fetch, progress=progress, why=why)
    if real is not None:
        return real
    reason = why[0] if why else "fetching is disabled"
    if standin:
        params = m.standin_params if standin_scale == 1.0 else synthetic.scaled_params(m.standin, m.standin_params,
                                                                                        standin_scale)
        A = synthetic.generate(m.standin, params)
        return LoadedMatrix(m.name, "synthetic", synthetic.checksum(m.standin, params), A)
    raise _not_cached(m, reason)


def _parse_label(entry: str) -> tuple[str, dict]:
    """``lap2d-5pt[grid=200,seed=1]`` -> (``lap2d-5pt``, {"grid": 200, "seed": 1})."""
    name, _, rest = entry.partition("[")
    params = {}
    for item in filter(None, (s.strip() for s in rest[:-1].split(","))):
        key, eq, value = item.partition("=")
        if not eq or not key.strip():
            raise DatasetError(f"data set {entry!r}: expected name[key=value,...], got {item!r}")
        params[key.strip()] = parse_value(value.strip())
    return name.strip(), params


def parse_value(text: str):
    """A parameter value from text, read as YAML (``200`` -> int, ``0.5`` -> float, ``null``)."""
    try:
        return yaml.safe_load(text) if text else text
    except yaml.YAMLError:
        return text


def _synthetic(entry, name: str, params) -> MatrixDataset:
    if params is not None and not isinstance(params, Mapping):
        raise DatasetError(f"data set {entry!r}: parameters of {name} must be a mapping, got {type(params).__name__}")
    try:
        full = synthetic.check_params(name, params)
    except DatasetError as exc:
        raise DatasetError(f"data set {entry!r}: {exc}") from None
    return MatrixDataset(synthetic.label(name, full), "synthetic", {"generator": name, **full})


def _check_transform(entry, value) -> str | None:
    """A ``transform`` value: None or one of TRANSFORMS, else a DatasetError naming the entry."""
    if value is None or value in TRANSFORMS:
        return value
    raise DatasetError(f"data set {entry!r}: unknown transform {value!r}; expected one of {', '.join(TRANSFORMS)}")


def _split_suffix(entry, text: str) -> tuple[str, str | None]:
    """``Flan_1565+metis`` -> (``Flan_1565``, ``metis``); ``lap2d-5pt[grid=9]+ichol`` likewise."""
    base, plus, suffix = text.rpartition("+")
    if not plus or "]" in suffix or "[" in suffix:
        return text, None
    return base.strip(), _check_transform(entry, suffix.strip())


def _with_transform(entry, ds: MatrixDataset, *transforms) -> MatrixDataset:
    """``ds`` with the transform given by suffix and/or key (both must agree)."""
    given = {t for t in transforms if t is not None}
    if len(given) > 1:
        raise DatasetError(f"data set {entry!r}: conflicting transforms {' and '.join(sorted(given))}")
    if not given:
        return ds
    transform, = given
    return MatrixDataset(f"{ds.name}+{transform}", ds.kind, ds.params, transform)


def _from_name(entry, name: str, params) -> MatrixDataset:
    name, suffix = _split_suffix(entry, name)
    if "[" in name and name.endswith("]"):
        if params:
            raise DatasetError(f"data set {entry!r}: give parameters in the label or as a mapping, not both")
        name, params = _parse_label(name)
    key = None
    if isinstance(params, Mapping) and "transform" in params:
        key = _check_transform(entry, params["transform"])
        params = {k: v for k, v in params.items() if k != "transform"}
    if name in SUITESPARSE or name in METIS_ONLY:
        if params:
            raise DatasetError(f"data set {entry!r}: SuiteSparse matrix {name} takes no parameters")
        return _with_transform(entry, MatrixDataset(name, "suitesparse", {}), suffix, key)
    if name in synthetic.GENERATORS:
        return _with_transform(entry, _synthetic(entry, name, params), suffix, key)
    raise unknown_name(entry, name)


def _from_path(entry, raw) -> MatrixDataset:
    if not isinstance(raw, (str, os.PathLike)) or not str(raw):
        raise DatasetError(f"data set {entry!r}: 'path' must be a file name, got {raw!r}")
    path = Path(raw).expanduser()
    if not path.name.endswith(MATRIX_SUFFIXES):
        raise DatasetError(f"data set {entry!r}: expected a .mtx, .mtx.gz or .tar.gz file, got {path.name}")
    if not path.is_file():
        raise DatasetError(f"data set {entry!r}: no such file {path}")
    return MatrixDataset(matrix_stem(path), "file", {"path": str(path.resolve())})


def resolve(entry) -> MatrixDataset:
    """A config entry as a MatrixDataset: ``"name"``, ``{"name": {params}}`` or ``{"path": "/x/y.mtx"}``.

    Any of them may carry a transform: ``"Flan_1565+metis"``, ``{"Flan_1565": {"transform": "metis"}}``,
    ``{"lap2d-5pt": {"grid": 200, "transform": "ichol"}}``, ``{"path": "my.mtx", "transform": "ichol"}``.

    Unknown names, bad parameters and missing files raise a one-line DatasetError naming the
    entry, what was expected and close names.
    """
    if isinstance(entry, MatrixDataset):
        return entry
    if isinstance(entry, str):
        return _from_name(entry, entry.strip(), None)
    if isinstance(entry, Mapping):
        if "path" in entry and set(entry) <= {"path", "transform"}:
            ds = _from_path(dict(entry), entry["path"])
            return _with_transform(dict(entry), ds, _check_transform(dict(entry), entry.get("transform")))
        if len(entry) != 1:
            raise DatasetError(f"data set {dict(entry)!r}: expected one key (a name with its parameters, or 'path' "
                               f"with an optional 'transform'), got {len(entry)}: {', '.join(map(str, entry))}")
        (key, value), = entry.items()
        if not isinstance(key, str):
            raise DatasetError(f"data set {dict(entry)!r}: expected a name as key, got {key!r}")
        return _from_name(dict(entry), key, value)
    raise DatasetError(f"data set {entry!r}: expected a name, {{name: {{params}}}} or {{path: FILE}}, "
                       f"got {type(entry).__name__}")


def list_datasets(progress: Callable[[str], None] | None = None) -> list[dict]:
    """Rows for ``spbench datasets list``: Table A.1, the generators at defaults, Tables A.2 and A.3.

    ``nnz`` is of the lower triangle incl. the diagonal (as in the paper's tables); ``cached`` is
    None for generators and says for table rows whether the base matrix is cached. Generators'
    ``n`` and ``nnz`` are computed at their default parameters. Rows of Tables A.2 / A.3 have kind
    ``ichol`` / ``metis`` and the paper's numbers (the transformed matrices' own wavefronts).
    Rows of Table A.1 and of the METIS-only matrices carry ``standin_stats``, the stand-in's own
    n, nnz and average wavefront (``standin_stats.standin_statistics``, cached; ``progress`` is
    told each stand-in it builds).
    """
    from .standin_stats import standin_statistics

    def stats(m: SuiteSparseMatrix) -> dict:
        if progress is not None:
            progress(m.name)
        return standin_statistics(m.standin, m.standin_params)

    rows = [{"name": m.name, "kind": "suitesparse", "group": m.group, "n": m.n, "nnz": m.nnz,
             "avg_wavefront": m.avg_wavefront, "cached": is_cached(m.name), "standin": m.standin_label(),
             "standin_stats": stats(m), "description": m.problem} for m in SUITESPARSE.values()]
    rows += [{"name": m.name, "kind": "metis-only", "group": m.group, "n": m.n, "nnz": m.nnz,
              "avg_wavefront": None, "cached": is_cached(m.name), "standin": m.standin_label(),
              "standin_stats": stats(m), "description": m.problem} for m in METIS_ONLY.values()]
    for gen in synthetic.GENERATORS.values():
        A = synthetic.generate(gen.name)
        rows.append({"name": gen.name, "kind": "synthetic", "group": None, "n": A.shape[0],
                     "nnz": int(sp.tril(A).nnz), "avg_wavefront": None, "cached": None, "standin": None,
                     "description": gen.summary,
                     "params": {k: p.default for k, p in gen.params.items()}})
    for table in (ICHOL_TABLE, METIS_TABLE):
        for r in table.values():
            m = suitesparse_matrix(r.base)
            rows.append({"name": r.name, "kind": r.transform, "group": m.group, "n": r.n, "nnz": r.nnz,
                         "avg_wavefront": r.avg_wavefront, "cached": is_cached(r.base),
                         "standin": f"{m.standin_label()}+{r.transform}", "description": m.problem})
    return rows
