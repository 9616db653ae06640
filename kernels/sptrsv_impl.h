/* SpTrSV hot loops: serial forward substitution and the BSP kernel (sptrsv-elasticity §2.1, §4.2).
 *
 * The matrix is a lower-triangular CSR with the diagonal as the LAST entry of each row.  The BSP
 * kernel expects rows permuted so that block (s, p) of the schedule is the contiguous row range
 * block_ptr[s*P + p] .. block_ptr[s*P + p + 1].  b is never written, so repeated solves need no
 * reset; x is the output.
 */
#ifndef SPBENCH_SPTRSV_IMPL_H
#define SPBENCH_SPTRSV_IMPL_H

#ifndef _POSIX_C_SOURCE
#define _POSIX_C_SOURCE 200809L
#endif

#include <stdint.h>
#include <time.h>

#ifdef _OPENMP
#include <omp.h>
#endif

#include "sync.h"

#define SPB_BARRIER_SPIN 0
#define SPB_BARRIER_OMP 1

static inline double spb_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* OpenMP places (OMP_PLACES / OMP_PROC_BIND); 0 without binding or without OpenMP.  With binding
 * libgomp pins the initial thread to one place, so the affinity mask alone undercounts. */
static int spb_omp_num_places(void)
{
#ifdef _OPENMP
    return omp_get_num_places();
#else
    return 0;
#endif
}

/* First row whose entries are not (columns < row ..., row), or -1 when the CSR is well formed. */
static int64_t spb_check_lower(int32_t n, const int32_t *indptr, const int32_t *indices)
{
    if (indptr[0] != 0) return 0;
    for (int32_t i = 0; i < n; ++i) {
        int32_t lo = indptr[i], hi = indptr[i + 1];
        if (hi <= lo || indices[hi - 1] != i) return i;
        for (int32_t k = lo; k < hi - 1; ++k)
            if (indices[k] < 0 || indices[k] >= i) return i;
    }
    return -1;
}

/* Algorithm 2.1 on rows r0..r1-1. */
static inline void spb_solve_rows(const int32_t *restrict indptr, const int32_t *restrict indices,
                                  const double *restrict data, const double *restrict b,
                                  double *x, int32_t r0, int32_t r1)
{
    for (int32_t i = r0; i < r1; ++i) {
        int32_t k = indptr[i];
        const int32_t diag = indptr[i + 1] - 1;
        double t = b[i];
        for (; k < diag; ++k) t -= data[k] * x[indices[k]];
        x[i] = t / data[diag];
    }
}

static void spb_serial_solve_timed(int32_t n, const int32_t *indptr, const int32_t *indices,
                                   const double *data, const double *b, double *x,
                                   double *times, int reps)
{
    for (int r = 0; r < reps; ++r) {
        double t0 = spb_now();
        spb_solve_rows(indptr, indices, data, b, x, 0, n);
        times[r] = spb_now() - t0;
    }
}

static inline void spb_sync(spb_counters *c, int me, int kind)
{
    if (kind == SPB_BARRIER_OMP) {
#ifdef _OPENMP
#pragma omp barrier
#endif
    } else {
        spb_counters_barrier(c, me);
    }
}

/* One thread's part of reps BSP solves: a start barrier (untimed), then per superstep its block
 * and a barrier; thread 0 times from the start barrier to the last superstep's barrier. */
static void spb_bsp_worker(const int32_t *indptr, const int32_t *indices, const double *data,
                           const double *b, double *x, const int32_t *block_ptr, int n_steps,
                           int n_cores, int me, int kind, spb_counters *c, double *times,
                           int reps)
{
    for (int r = 0; r < reps; ++r) {
        spb_sync(c, me, kind);
        double t0 = me == 0 ? spb_now() : 0.0;
        for (int s = 0; s < n_steps; ++s) {
            const int32_t *blk = block_ptr + (int64_t)s * n_cores + me;
            spb_solve_rows(indptr, indices, data, b, x, blk[0], blk[1]);
            spb_sync(c, me, kind);
        }
        if (me == 0) times[r] = spb_now() - t0;
    }
}

/* reps BSP solves in one parallel region of n_cores threads.  Returns the team size OpenMP
 * actually gave (the solve ran only if it equals n_cores; 1 without OpenMP), -1 when out of memory. */
static int spb_bsp_solve_timed(const int32_t *indptr, const int32_t *indices, const double *data,
                               const double *b, double *x, const int32_t *block_ptr, int n_steps,
                               int n_cores, int kind, double *times, int reps)
{
    int team = 1;
    spb_counters *c = NULL;
    if (kind == SPB_BARRIER_SPIN) {
        c = spb_counters_create(n_cores);
        if (!c) return -1;
    }
#ifdef _OPENMP
#pragma omp parallel num_threads(n_cores)
    {
        int nt = omp_get_num_threads();
#pragma omp single
        team = nt;
        if (nt == n_cores)
            spb_bsp_worker(indptr, indices, data, b, x, block_ptr, n_steps, n_cores,
                           omp_get_thread_num(), kind, c, times, reps);
    }
#else
    if (n_cores == 1)
        spb_bsp_worker(indptr, indices, data, b, x, block_ptr, n_steps, 1, 0, kind, c, times,
                       reps);
#endif
    spb_counters_destroy(c);
    return team;
}

#endif /* SPBENCH_SPTRSV_IMPL_H */
