# BLAS dgemm from scipy's cython_blas capsule, resolved at run time (no build dependency on
# scipy); textually included by the TTM kernels.
from cpython.pycapsule cimport PyCapsule_GetPointer, PyCapsule_GetName

ctypedef void (*dgemm_t)(char *transa, char *transb, int *m, int *n, int *k, double *alpha,
                         double *a, int *lda, double *b, int *ldb, double *beta, double *c,
                         int *ldc) noexcept nogil

cdef dgemm_t _dgemm = NULL


def _load_blas():
    """Resolve dgemm once; False when scipy's BLAS capsule is missing (direct loops then)."""
    global _dgemm
    if _dgemm != NULL:
        return True
    try:
        import scipy.linalg.cython_blas as cb
        cap = cb.__pyx_capi__["dgemm"]
        _dgemm = <dgemm_t> PyCapsule_GetPointer(cap, PyCapsule_GetName(cap))
    except Exception:            # pragma: no cover - scipy is a dependency
        _dgemm = NULL
    return _dgemm != NULL
