"""Peak memory of SpTrSV points before they run (`spbench run`'s pre-flight check,
sptrsv-elasticity §5.1 protocol), from each matrix's size known without loading it: the paper's
Table A.1 rows and nonzeros for a real matrix, a generator's rows (and its nonzeros per row, read
off a small instance of the same recipe) for a stand-in or a generated matrix, a Matrix Market
file's size line.

Law, per point: BASE_BYTES + BYTES_PER_ROW × n + (B_f + B_t) × nnz(L), L the lower triangle with
its diagonal. The peak is reached while the matrix is made (generated or read) and turned into its
lower triangle and DAG, not by the scheduler or the solve: it was the same for every algorithm and
core count of a matrix, measured or simulated (a simulated point's child adds
~10 MB). B_f is the bytes per nonzero of the way the matrix is made (``BYTES_PER_NNZ``: a generator
family; real matrices and files take the largest, not measured here: no real matrix is cached on
this machine), B_t that of a transform (``TRANSFORM_BYTES_PER_NNZ``, its result cached on disk as
a sweep's second run finds it). Least squares over one-point sweeps of ten generated matrices of
30k-4M lower nonzeros, `spbench bench preflight --configs ...` (docs/performance.md, "The
pre-flight's estimates against measured peaks"): each fitted peak within 7% of its measurement.
"""
from __future__ import annotations

import gzip
from dataclasses import dataclass
from pathlib import Path

from ..experiment import Estimate

__all__ = ["MatrixSize", "matrix_size", "point_peak", "estimate_points"]

#: the law's terms: the process (interpreter, numpy, scipy, the kernels) and bytes per row; the process
#: was 139 MB while the row store imported pandas (every run loaded it), 77 MB since it does not
BASE_BYTES, BYTES_PER_ROW = 77e6, 36
#: the family of a paper-size fem-mesh stand-in (``--scale paper``): its lower triangle written directly
#: (12 B per nonzero) plus the DAG and the schedules, 48 B per nonzero; Queen_4147's (163.8M lower
#: nonzeros) peaked at 7.99 GB in `make schedule-sptrsv_suitesparse SCALE=full` (docs/reproducing.md),
#: the law gives 8.09 GB
PAPER_SIZE_FAMILY = "fem-mesh (paper size)"
#: bytes per lower nonzero while the matrix is made, by generator family: fem-mesh (hex8, tet4, quad4, fd7
#: meshes), bundle-adjustment, the Kronecker-built stencils (lap2d-5pt and lap3d-27pt measured), the
#: paper-size stand-ins; others the largest
BYTES_PER_NNZ = {"fem-mesh": 135, "bundle-adjustment": 106, "lap2d-5pt": 71, "lap2d-9pt": 71, "lap3d-7pt": 71,
                 "lap3d-27pt": 71, PAPER_SIZE_FAMILY: 48}
#: bytes per lower nonzero a cached transform adds (the larger of lap3d-27pt at 216,000 rows and a hex8
#: fem-mesh at 28,611)
TRANSFORM_BYTES_PER_NNZ = {"metis": 32, "ichol": 98}
#: a generator's nonzeros per row are read off an instance of the recipe scaled to about this many rows
SAMPLE_ROWS = 20_000


@dataclass(frozen=True)
class MatrixSize:
    """A matrix's rows and lower-triangle nonzeros (with the diagonal) as far as known before loading."""

    n: int
    nnz: int
    basis: str
    family: str = ""  # the generator making it ("" for a real matrix or a file)
    transform: str | None = None


_PER_ROW: dict = {}


def _lower_per_row(family: str, params: dict) -> float:
    """Lower-triangle nonzeros per row of generator ``family`` at ``params``: exact up to
    SAMPLE_ROWS rows, else those of the recipe scaled down to about SAMPLE_ROWS rows."""
    import scipy.sparse as sp

    from spbench.datasets import synthetic

    key = synthetic.label(family, params)
    if key not in _PER_ROW:
        rows = synthetic.get_generator(family).rows(params)
        sample = params if rows <= SAMPLE_ROWS else synthetic.scaled_params(family, params, SAMPLE_ROWS / rows)
        A = synthetic.generate(family, sample)
        _PER_ROW[key] = sp.tril(A).nnz / A.shape[0]
    return _PER_ROW[key]


def _generated(family: str, params: dict, what: str) -> MatrixSize:
    from spbench.datasets import synthetic

    n = int(synthetic.get_generator(family).rows(params))
    return MatrixSize(n, int(round(n * _lower_per_row(family, params))), what, family)


def _file_size(path: Path) -> MatrixSize | None:
    """Rows and lower nonzeros from a Matrix Market file's banner and size line (None: unreadable,
    say a tarball: its loader reports it)."""
    if not path.name.endswith((".mtx", ".mtx.gz")):
        return None
    try:
        with (gzip.open(path, "rt") if path.name.endswith(".gz") else open(path)) as fh:
            banner = fh.readline().lower()
            line = fh.readline()
            while line.startswith("%"):
                line = fh.readline()
        rows, _, entries = (int(v) for v in line.split()[:3])
    except (OSError, ValueError, EOFError):
        return None
    lower = entries if "symmetric" in banner else (entries + rows) // 2
    return MatrixSize(rows, lower, f"{path.name}: size line")


def matrix_size(dataset, config) -> MatrixSize | None:
    """The rows and lower nonzeros of a config's matrix data set as `prepare` will load it."""
    from dataclasses import replace

    size = _base_size(dataset, config)
    return replace(size, transform=dataset.transform) if size is not None else None


def _base_size(dataset, config) -> MatrixSize | None:
    from spbench.datasets.registry import is_cached, suitesparse_matrix

    if dataset.kind == "synthetic":
        params = {k: v for k, v in dataset.params.items() if k != "generator"}
        return _generated(dataset.params["generator"], params, f"{dataset.base} (generator)")
    if dataset.kind == "file":
        return _file_size(Path(dataset.params["path"]))
    m = suitesparse_matrix(dataset.base)
    if m is None:
        return None
    if is_cached(m.name) or config.fallback != "standin":
        return MatrixSize(m.n, m.nnz, f"{m.name}: Table A.1 sizes")
    if dataset.params.get("standin_size") == "paper":
        from spbench.datasets.paper_matrices import paper_size_params

        family, params = paper_size_params(m.name)
        family = PAPER_SIZE_FAMILY if family == "fem-mesh" else family
        return MatrixSize(m.n, m.nnz, f"{m.name}'s paper-size stand-in at Table A.1 sizes", family)
    from spbench.datasets import synthetic

    scale = dataset.params.get("standin_scale", 1.0)
    params = m.standin_params if scale == 1.0 else synthetic.scaled_params(m.standin, m.standin_params, scale)
    return _generated(m.standin, params, f"{m.name}'s stand-in {synthetic.label(m.standin, params)} (recipe)")


def _per_nnz(size: MatrixSize) -> int:
    return max(BYTES_PER_NNZ.values()) if size.family not in BYTES_PER_NNZ else BYTES_PER_NNZ[size.family]


def _bytes_per_nnz(size: MatrixSize) -> int:
    """B_f + B_t; a paper-size stand-in orders its node graph, so its transform adds no bytes per nonzero."""
    extra = 0 if size.family == PAPER_SIZE_FAMILY else TRANSFORM_BYTES_PER_NNZ.get(size.transform, 0)
    return _per_nnz(size) + extra


def point_peak(size: MatrixSize) -> int:
    """Bytes of the process running a point on a matrix of ``size`` at its peak."""
    per_nnz = _bytes_per_nnz(size)
    return int(BASE_BYTES + BYTES_PER_ROW * size.n + per_nnz * size.nnz)


def estimate_points(config, points) -> list[Estimate]:
    """Each point's peak memory (a matrix whose size is not known is left out: its loader reports it)."""
    datasets = {p.dataset.name: p.dataset for p in points}
    sizes = {name: matrix_size(dataset, config) for name, dataset in datasets.items()}
    return [Estimate("memory", p.label, point_peak(size), f"{_law(size)}; {size.basis}", p)
            for p in points if (size := sizes[p.dataset.name]) is not None]


def _law(size: MatrixSize) -> str:
    per_nnz = _bytes_per_nnz(size)
    return (f"{BASE_BYTES / 1e6:.0f} MB + {BYTES_PER_ROW} B x {size.n:,} rows + "
            f"{per_nnz} B x {size.nnz:,} lower nonzeros")
