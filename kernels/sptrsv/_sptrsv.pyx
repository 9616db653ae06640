# cython: language_level=3
"""SpTrSV kernels: serial, BSP, SSP and point-to-point (sptrsv-elasticity §2.1, §4.1, §4.2; SpMP).

The matrix is a lower-triangular CSR (int32 indptr/indices) whose diagonal is the last entry of
each row; ``b`` is only read and ``x`` is the output.  Hot loops live in ``sptrsv_impl.h``.
"""
from libc.stdint cimport int32_t, int64_t

cdef extern from "sptrsv_impl.h" nogil:
    int SPB_BARRIER_SPIN
    int SPB_BARRIER_OMP
    int spb_omp_num_places()
    int64_t spb_check_lower(int32_t n, const int32_t *indptr, const int32_t *indices)
    void spb_serial_solve_timed(int32_t n, const int32_t *indptr, const int32_t *indices,
                                const double *data, const double *b, double *x,
                                double *times, int reps)
    void spb_solve_rows(const int32_t *indptr, const int32_t *indices, const double *data,
                        const double *idiag, const double *b, double *x, int32_t r0, int32_t r1)
    int spb_bsp_solve_timed(const int32_t *indptr, const int32_t *indices, const double *data,
                            const double *b, double *x, const int32_t *block_ptr, int n_steps,
                            int n_cores, int kind, double *times, int reps)
    int spb_ssp_solve_timed(const int32_t *indptr, const int32_t *indices, const double *data,
                            const double *b, double *x, const int32_t *block_ptr, int n_steps,
                            int n_cores, int staleness, double *times, int reps)
    int spb_p2p_solve_timed(const int32_t *indptr, const int32_t *indices, const double *data,
                            const double *b, double *x, const int32_t *block_ptr, int n_steps,
                            int n_cores, const int32_t *parent_ptr, const int32_t *parent_idx,
                            double *times, int reps)
    int SPB_SYNC_NONE
    int SPB_SYNC_SPIN
    int SPB_SYNC_OMP
    int SPB_SYNC_WEAK
    int SPB_SYNC_FLAG
    int spb_sync_bench_timed(int kind, int n_cores, int n_steps, int work, int staleness,
                             double *times, int reps, double *sink)

BARRIER_SPIN = SPB_BARRIER_SPIN
BARRIER_OMP = SPB_BARRIER_OMP
#: synchronisation of :func:`sync_bench_timed` by name
SYNC_KINDS = {"none": SPB_SYNC_NONE, "spin": SPB_SYNC_SPIN, "omp": SPB_SYNC_OMP,
              "weak": SPB_SYNC_WEAK, "flag": SPB_SYNC_FLAG}

import numpy as _np
_NO_PARENT = _np.zeros(1, dtype=_np.int32)



def omp_num_places():
    """Number of OpenMP places (0 when threads are not bound or OpenMP is absent)."""
    return spb_omp_num_places()


cdef int32_t _check_system(const int32_t[::1] indptr, const int32_t[::1] indices,
                           const double[::1] data, const double[::1] b, double[::1] x) except -1:
    """Shapes and CSR structure (strictly lower, diagonal last); returns n."""
    cdef Py_ssize_t n = indptr.shape[0] - 1
    if n < 1:
        raise ValueError(f"indptr must have at least 2 entries (n >= 1), got {indptr.shape[0]}")
    if b.shape[0] != n or x.shape[0] != n:
        raise ValueError(f"b and x must have n = {n} entries, got {b.shape[0]} and {x.shape[0]}")
    if &b[0] == &x[0]:
        raise ValueError("x must not be the same buffer as b")
    if indptr[n] != indices.shape[0] or indices.shape[0] != data.shape[0]:
        raise ValueError(f"indptr[n] = {indptr[n]}, len(indices) = {indices.shape[0]} and "
                         f"len(data) = {data.shape[0]} must agree")
    cdef int64_t bad
    cdef Py_ssize_t k = 0
    with nogil:
        bad = spb_check_lower(<int32_t>n, &indptr[0], &indices[0])
    if bad >= 0:
        raise ValueError(f"row {bad} is not lower-triangular CSR with its diagonal last "
                         "(prepare the matrix with spbench.sptrsv.execute.prepare_lower)")
    with nogil:
        for k in range(n):
            if data[indptr[k + 1] - 1] == 0.0:
                break
    if k < n and data[indptr[k + 1] - 1] == 0.0:
        raise ValueError(f"diagonal entry ({k}, {k}) is zero: the matrix is singular")
    return <int32_t>n


cdef int _check_blocks(int32_t n, const int32_t[::1] block_ptr, int n_steps, int n_cores,
                       double[::1] times) except -1:
    """block_ptr is a non-decreasing 0..n pointer over n_steps*n_cores blocks; returns len(times)."""
    cdef int reps = <int>times.shape[0]
    cdef Py_ssize_t k, n_blocks = <Py_ssize_t>n_steps * n_cores
    if reps < 1:
        raise ValueError("times must have at least one entry")
    if n_steps < 1 or n_cores < 1:
        raise ValueError(f"n_steps and n_cores must be >= 1, got {n_steps} and {n_cores}")
    if block_ptr.shape[0] != n_blocks + 1:
        raise ValueError(f"block_ptr must have n_steps*n_cores+1 = {n_blocks + 1} entries, "
                         f"got {block_ptr.shape[0]}")
    if block_ptr[0] != 0 or block_ptr[n_blocks] != n:
        raise ValueError(f"block_ptr must run from 0 to n = {n}, "
                         f"got {block_ptr[0]} .. {block_ptr[n_blocks]}")
    for k in range(n_blocks):
        if block_ptr[k + 1] < block_ptr[k]:
            raise ValueError(f"block_ptr decreases at block {k}")
    return reps


def serial_solve(const int32_t[::1] indptr, const int32_t[::1] indices, const double[::1] data,
                 const double[::1] b, double[::1] x):
    """Solve L x = b by forward substitution (paper Algorithm 2.1), untimed."""
    cdef int32_t n = _check_system(indptr, indices, data, b, x)
    cdef double[::1] idiag = 1.0 / _np.asarray(data)[_np.asarray(indptr)[1:] - 1]
    with nogil:
        spb_solve_rows(&indptr[0], &indices[0], &data[0], &idiag[0], &b[0], &x[0], 0, n)


def serial_solve_timed(const int32_t[::1] indptr, const int32_t[::1] indices,
                       const double[::1] data, const double[::1] b, double[::1] x,
                       double[::1] times):
    """Run ``len(times)`` forward substitutions, each timed in C (CLOCK_MONOTONIC, seconds)."""
    cdef int32_t n = _check_system(indptr, indices, data, b, x)
    cdef int reps = <int>times.shape[0]
    if reps < 1:
        raise ValueError("times must have at least one entry")
    with nogil:
        spb_serial_solve_timed(n, &indptr[0], &indices[0], &data[0], &b[0], &x[0],
                               &times[0], reps)
    if times[0] < 0:
        raise MemoryError("could not allocate the inverse diagonal")


def bsp_solve_timed(const int32_t[::1] indptr, const int32_t[::1] indices, const double[::1] data,
                    const double[::1] b, double[::1] x, const int32_t[::1] block_ptr,
                    int n_steps, int n_cores, int barrier, double[::1] times):
    """Run ``len(times)`` BSP solves in one OpenMP region (paper §4.2 with staleness 1).

    Rows of superstep s on thread p are ``block_ptr[s*n_cores+p]:block_ptr[s*n_cores+p+1]``;
    ``barrier`` is BARRIER_SPIN (sync.h) or BARRIER_OMP.  Thread 0 times each solve between
    barriers; before each (untimed) every thread sets its rows of x to NaN, so a solve that reads
    a value before it is computed fails the residual check.  Returns the team size OpenMP gave; the solve ran only if it equals ``n_cores``.
    """
    cdef int32_t n = _check_system(indptr, indices, data, b, x)
    cdef int reps = _check_blocks(n, block_ptr, n_steps, n_cores, times)
    if barrier != SPB_BARRIER_SPIN and barrier != SPB_BARRIER_OMP:
        raise ValueError(f"barrier must be {SPB_BARRIER_SPIN} (spin) or {SPB_BARRIER_OMP} (omp), "
                         f"got {barrier}")
    cdef int team
    with nogil:
        team = spb_bsp_solve_timed(&indptr[0], &indices[0], &data[0], &b[0], &x[0],
                                   &block_ptr[0], n_steps, n_cores, barrier, &times[0], reps)
    if team < 0:
        raise MemoryError("could not allocate the barrier counters")
    return team


def ssp_solve_timed(const int32_t[::1] indptr, const int32_t[::1] indices, const double[::1] data,
                    const double[::1] b, double[::1] x, const int32_t[::1] block_ptr,
                    int n_steps, int n_cores, int staleness, double[::1] times):
    """Run ``len(times)`` SSP solves of the given staleness (paper Algorithm 4.1, §4.1 weak barrier).

    Blocks as in :func:`bsp_solve_timed`.  Before superstep s a thread with rows in it waits until
    every other thread has completed superstep s − staleness; it always arrives after s.  The
    schedule must be valid for ``staleness`` (staleness 1 gives BSP semantics with this barrier).
    Returns the team size OpenMP gave; the solve ran only if it equals ``n_cores``.
    """
    cdef int32_t n = _check_system(indptr, indices, data, b, x)
    cdef int reps = _check_blocks(n, block_ptr, n_steps, n_cores, times)
    if staleness < 1:
        raise ValueError(f"staleness must be >= 1, got {staleness}")
    cdef int team
    with nogil:
        team = spb_ssp_solve_timed(&indptr[0], &indices[0], &data[0], &b[0], &x[0],
                                   &block_ptr[0], n_steps, n_cores, staleness, &times[0], reps)
    if team < 0:
        raise MemoryError("could not allocate the barrier counters")
    return team


def p2p_solve_timed(const int32_t[::1] indptr, const int32_t[::1] indices, const double[::1] data,
                    const double[::1] b, double[::1] x, const int32_t[::1] block_ptr,
                    int n_steps, int n_cores, const int32_t[::1] task_parent_ptr,
                    const int32_t[::1] task_parent_idx, double[::1] times):
    """Run ``len(times)`` point-to-point solves (SpMP execution, Park et al. 2014).

    Task t = s*n_cores + p is row block t of ``block_ptr`` (layout of :func:`bsp_solve_timed`),
    run by thread p in order of s.  Its parents are ``task_parent_idx[task_parent_ptr[t]:
    task_parent_ptr[t+1]]``, each a task of another thread with a smaller s (this is checked, so
    the spin waits cannot deadlock).  Returns the team size as :func:`bsp_solve_timed`.
    """
    cdef int32_t n = _check_system(indptr, indices, data, b, x)
    cdef int reps = _check_blocks(n, block_ptr, n_steps, n_cores, times)
    cdef Py_ssize_t t, k, n_tasks = <Py_ssize_t>n_steps * n_cores
    cdef int32_t a
    if task_parent_ptr.shape[0] != n_tasks + 1:
        raise ValueError(f"task_parent_ptr must have n_steps*n_cores+1 = {n_tasks + 1} entries, "
                         f"got {task_parent_ptr.shape[0]}")
    if task_parent_ptr[0] != 0 or task_parent_ptr[n_tasks] != task_parent_idx.shape[0]:
        raise ValueError(f"task_parent_ptr must run from 0 to len(task_parent_idx) = "
                         f"{task_parent_idx.shape[0]}")
    for t in range(n_tasks):
        if task_parent_ptr[t + 1] < task_parent_ptr[t]:
            raise ValueError(f"task_parent_ptr decreases at task {t}")
        for k in range(task_parent_ptr[t], task_parent_ptr[t + 1]):
            a = task_parent_idx[k]
            if a < 0 or a // n_cores >= t // n_cores:
                raise ValueError(f"task {t} (step {t // n_cores}) has parent {a}: parents must be "
                                 "tasks of an earlier step")
    if task_parent_idx.shape[0] == 0:
        task_parent_idx = _NO_PARENT
    cdef int team
    with nogil:
        team = spb_p2p_solve_timed(&indptr[0], &indices[0], &data[0], &b[0], &x[0],
                                   &block_ptr[0], n_steps, n_cores, &task_parent_ptr[0],
                                   &task_parent_idx[0], &times[0], reps)
    if team < 0:
        raise MemoryError("could not allocate the task flags")
    return team


def sync_bench_timed(str kind, int n_cores, int n_steps, int work, int staleness, double[::1] times):
    """Time the kernels' own synchronisation alone, ``len(times)`` runs in one OpenMP region.

    Every thread runs ``n_steps`` supersteps of ``work`` dependent multiply-adds (0: empty
    supersteps), each followed by ``kind`` (:data:`SYNC_KINDS`): "none" (the work alone), "spin"
    (the BSP kernel's barrier), "omp" (OpenMP's), "weak" (the SSP kernel's weak barrier at
    ``staleness``) or "flag" (the P2P kernel's flag wait on task (s - 1, p + 1 mod P)).  Each
    run ends with a spin barrier inside thread 0's clock, for every kind alike.  Returns the team
    size OpenMP gave; the runs happened only if it equals ``n_cores``.
    """
    if kind not in SYNC_KINDS:
        raise ValueError(f"kind must be one of {', '.join(map(repr, SYNC_KINDS))}, got {kind!r}")
    if n_cores < 1 or n_steps < 1 or work < 0 or staleness < 1:
        raise ValueError(f"need n_cores >= 1, n_steps >= 1, work >= 0, staleness >= 1; got "
                         f"{n_cores}, {n_steps}, {work}, {staleness}")
    cdef int reps = <int>times.shape[0]
    if reps < 1:
        raise ValueError("times must have at least one entry")
    cdef int code = SYNC_KINDS[kind]
    cdef int team
    cdef double sink = 0.0
    with nogil:
        team = spb_sync_bench_timed(code, n_cores, n_steps, work, staleness, &times[0], reps, &sink)
    if team < 0:
        raise MemoryError("could not allocate the barrier counters and flags")
    return team
