/* SpTrSV hot loops: serial forward substitution, the BSP, SSP and point-to-point kernels
 * (sptrsv-elasticity §2.1, §4.1, §4.2; SpMP).
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

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
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

/* This thread's number in its team (0 outside a parallel region or without OpenMP). */
static inline int spb_thread_num(void)
{
#ifdef _OPENMP
    return omp_get_thread_num();
#else
    return 0;
#endif
}

/* SPB_ON_TEAM(team, n_cores, clauses, call): `call` (a worker call, spb_thread_num() its thread)
 * on every thread of one parallel region of n_cores threads (`clauses`: further OpenMP clauses of
 * that region, may be empty); `team` is set to the team size OpenMP gave, and `call` runs only if
 * it equals n_cores.  Without OpenMP `call` runs once when n_cores == 1 (`team` stays as it was:
 * callers start it at 1).  No allocation happens inside. */
#define SPB_PRAGMA(text) _Pragma(#text)
#ifdef _OPENMP
#define SPB_ON_TEAM(team, n_cores, clauses, call)                                                  \
    SPB_PRAGMA(omp parallel num_threads(n_cores) clauses)                                          \
    {                                                                                              \
        const int spb_team_size = omp_get_num_threads();                                           \
        SPB_PRAGMA(omp single)                                                                     \
        (team) = spb_team_size;                                                                    \
        if (spb_team_size == (n_cores)) call;                                                      \
    }
#else
#define SPB_ON_TEAM(team, n_cores, clauses, call) \
    if ((n_cores) == 1) call
#endif

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

/* Algorithm 2.1 on rows r0..r1-1, multiplying by the precomputed inverse diagonal (as SpMP does):
 * a division on the row-to-row dependency chain would bound a natural-order solve by its latency. */
static inline void spb_solve_rows(const int32_t *restrict indptr, const int32_t *restrict indices,
                                  const double *restrict data, const double *restrict idiag,
                                  const double *restrict b, double *x, int32_t r0, int32_t r1)
{
    for (int32_t i = r0; i < r1; ++i) {
        int32_t k = indptr[i];
        const int32_t diag = indptr[i + 1] - 1;
        double t = b[i];
        for (; k < diag; ++k) t -= data[k] * x[indices[k]];
        x[i] = t * idiag[i];
    }
}

/* The inverse diagonal of a lower CSR with its diagonal last; NULL when out of memory.  Computed
 * once per kernel call, before any timed solve. */
static double *spb_inverse_diagonal(int32_t n, const int32_t *indptr, const double *data)
{
    double *idiag = (double *)malloc((size_t)(n > 0 ? n : 1) * sizeof(double));
    if (!idiag) return NULL;
    for (int32_t i = 0; i < n; ++i) idiag[i] = 1.0 / data[indptr[i + 1] - 1];
    return idiag;
}

/* Before each repetition (untimed) a thread sets its own rows of x to NaN, so a solve that read
 * a value not yet computed in this repetition shows up in the residual instead of reusing the
 * previous repetition's answer (the paper resets b before every run, §5.1). */
static inline void spb_poison_rows(double *x, const int32_t *block_ptr, int n_steps, int n_cores,
                                   int me)
{
    for (int s = 0; s < n_steps; ++s) {
        const int32_t *blk = block_ptr + (int64_t)s * n_cores + me;
        for (int32_t i = blk[0]; i < blk[1]; ++i) x[i] = NAN;
    }
}

static void spb_serial_solve_timed(int32_t n, const int32_t *indptr, const int32_t *indices,
                                   const double *data, const double *b, double *x,
                                   double *times, int reps)
{
    double *idiag = spb_inverse_diagonal(n, indptr, data);
    if (!idiag) {
        times[0] = -1.0;
        return;
    }
    for (int r = 0; r < reps; ++r) {
        for (int32_t i = 0; i < n; ++i) x[i] = NAN;
        double t0 = spb_now();
        spb_solve_rows(indptr, indices, data, idiag, b, x, 0, n);
        times[r] = spb_now() - t0;
    }
    free(idiag);
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

/* The end of a timed repetition: thread 0 stores the time since t0 in *time, with wait_all once
 * every thread has arrived after its last superstep (the SSP and P2P kernels; the BSP kernel's
 * last barrier already waited for them). */
static inline void spb_stop_clock(spb_counters *c, int me, int wait_all, double t0, double *time)
{
    if (me != 0) return;
    if (wait_all) spb_counters_wait(c, me, spb_counters_value(c, me));
    *time = spb_now() - t0;
}

/* One thread's part of reps BSP solves: a start barrier (untimed), then per superstep its block
 * and a barrier; thread 0 times from the start barrier to the last superstep's barrier. */
static void spb_bsp_worker(const int32_t *indptr, const int32_t *indices, const double *data,
                           const double *idiag,
                           const double *b, double *x, const int32_t *block_ptr, int n_steps,
                           int n_cores, int me, int kind, spb_counters *c, double *times,
                           int reps)
{
    for (int r = 0; r < reps; ++r) {
        spb_poison_rows(x, block_ptr, n_steps, n_cores, me);
        spb_sync(c, me, kind);
        double t0 = me == 0 ? spb_now() : 0.0;
        for (int s = 0; s < n_steps; ++s) {
            const int32_t *blk = block_ptr + (int64_t)s * n_cores + me;
            spb_solve_rows(indptr, indices, data, idiag, b, x, blk[0], blk[1]);
            spb_sync(c, me, kind);
        }
        spb_stop_clock(c, me, 0, t0, &times[r]);
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
    double *idiag = spb_inverse_diagonal(block_ptr[(int64_t)n_steps * n_cores], indptr, data);
    if (!idiag) return -1;
    if (kind == SPB_BARRIER_SPIN) {
        c = spb_counters_create(n_cores);
        if (!c) {
            free(idiag);
            return -1;
        }
    }
    SPB_ON_TEAM(team, n_cores, ,
                spb_bsp_worker(indptr, indices, data, idiag, b, x, block_ptr, n_steps, n_cores,
                               spb_thread_num(), kind, c, times, reps));
    spb_counters_destroy(c);
    free(idiag);
    return team;
}

/* ---- SSP kernel (paper Algorithm 4.1, weak barrier of §4.1) -------------------------------
 *
 * Thread p's counter counts the supersteps it has completed (sync.h), over all repetitions.
 * Every repetition begins with a full barrier (untimed start, all counters equal), so at the
 * start of superstep s every thread's own counter is base + s.  Before superstep s a thread with
 * rows in it waits until every other counter is >= own − (S − 1), i.e. the others have finished
 * superstep s − S (for S = 1 this is the BSP barrier, for S = 2 the paper's wait(p, s − 2));
 * a thread with no rows in superstep s skips the wait.  After the superstep it always arrives
 * (release).  The cached copies of the other counters live in the spb_counters object, refreshed
 * only by acquire loads inside spb_counters_wait.  Thread 0 stops its clock once every thread has
 * arrived after the last superstep. */
static void spb_ssp_worker(const int32_t *indptr, const int32_t *indices, const double *data,
                           const double *idiag,
                           const double *b, double *x, const int32_t *block_ptr, int n_steps,
                           int n_cores, int staleness, int me, spb_counters *c, double *times,
                           int reps)
{
    const int64_t lag = (int64_t)staleness - 1;
    for (int r = 0; r < reps; ++r) {
        spb_poison_rows(x, block_ptr, n_steps, n_cores, me);
        spb_counters_barrier(c, me);
        double t0 = me == 0 ? spb_now() : 0.0;
        for (int s = 0; s < n_steps; ++s) {
            const int32_t *blk = block_ptr + (int64_t)s * n_cores + me;
            if (blk[1] > blk[0]) {
                spb_counters_wait(c, me, spb_counters_value(c, me) - lag);
                spb_solve_rows(indptr, indices, data, idiag, b, x, blk[0], blk[1]);
            }
            spb_counters_arrive(c, me);
        }
        spb_stop_clock(c, me, 1, t0, &times[r]);
    }
}

/* reps SSP solves of staleness >= 1 in one parallel region; return value as spb_bsp_solve_timed. */
static int spb_ssp_solve_timed(const int32_t *indptr, const int32_t *indices, const double *data,
                               const double *b, double *x, const int32_t *block_ptr, int n_steps,
                               int n_cores, int staleness, double *times, int reps)
{
    int team = 1;
    spb_counters *c = spb_counters_create(n_cores);
    double *idiag = spb_inverse_diagonal(block_ptr[(int64_t)n_steps * n_cores], indptr, data);
    if (!c || !idiag) {
        spb_counters_destroy(c);
        free(idiag);
        return -1;
    }
    SPB_ON_TEAM(team, n_cores, ,
                spb_ssp_worker(indptr, indices, data, idiag, b, x, block_ptr, n_steps, n_cores,
                               staleness, spb_thread_num(), c, times, reps));
    spb_counters_destroy(c);
    free(idiag);
    return team;
}

/* ---- Point-to-point kernel (SpMP, Park et al. 2014) ----------------------------------------
 *
 * Task t = s*P + p is the row block block_ptr[t] .. block_ptr[t+1] (same layout as the BSP
 * kernel); thread p runs its tasks s = 0, 1, ... in order.  Before a non-empty task it spins
 * (acquire) on the finished flag of every task in task_parent_idx[task_parent_ptr[t] ..
 * task_parent_ptr[t+1]]; after it, it stores (release) its own flag.  Flags sit on their own
 * cache lines and hold the number of the repetition that finished the task (1, 2, ...), so no
 * reset is needed between repetitions: a task of repetition r waits for flags >= r + 1.  A full
 * barrier starts each repetition; thread 0 stops its clock once every thread has arrived after
 * its last task. */
static inline void spb_flag_wait(spb_line *flags, int32_t task, int64_t target)
{
    int spins = 0;
    while (atomic_load_explicit(&flags[task].value, memory_order_acquire) < target) {
        if (++spins >= SPB_YIELD_AFTER) {
            sched_yield();
            spins = 0;
        } else {
            SPB_PAUSE();
        }
    }
}

static void spb_p2p_worker(const int32_t *indptr, const int32_t *indices, const double *data,
                           const double *idiag,
                           const double *b, double *x, const int32_t *block_ptr, int n_steps,
                           int n_cores, const int32_t *parent_ptr, const int32_t *parent_idx,
                           int me, spb_counters *c, spb_line *flags, double *times, int reps)
{
    for (int r = 0; r < reps; ++r) {
        const int64_t epoch = (int64_t)r + 1;
        spb_poison_rows(x, block_ptr, n_steps, n_cores, me);
        spb_counters_barrier(c, me);
        double t0 = me == 0 ? spb_now() : 0.0;
        for (int s = 0; s < n_steps; ++s) {
            const int32_t t = (int32_t)((int64_t)s * n_cores + me);
            if (block_ptr[t + 1] > block_ptr[t]) {
                for (int32_t k = parent_ptr[t]; k < parent_ptr[t + 1]; ++k)
                    spb_flag_wait(flags, parent_idx[k], epoch);
                spb_solve_rows(indptr, indices, data, idiag, b, x, block_ptr[t], block_ptr[t + 1]);
            }
            atomic_store_explicit(&flags[t].value, epoch, memory_order_release);
        }
        spb_counters_arrive(c, me);
        spb_stop_clock(c, me, 1, t0, &times[r]);
    }
}

/* reps point-to-point solves in one parallel region; return value as spb_bsp_solve_timed. */
static int spb_p2p_solve_timed(const int32_t *indptr, const int32_t *indices, const double *data,
                               const double *b, double *x, const int32_t *block_ptr, int n_steps,
                               int n_cores, const int32_t *parent_ptr, const int32_t *parent_idx,
                               double *times, int reps)
{
    int team = 1;
    const int64_t n_tasks = (int64_t)n_steps * n_cores;
    spb_counters *c = spb_counters_create(n_cores);
    spb_line *flags = (spb_line *)spb_aligned_calloc((size_t)n_tasks * sizeof(spb_line));
    double *idiag = spb_inverse_diagonal(block_ptr[n_tasks], indptr, data);
    if (!c || !flags || !idiag) {
        spb_counters_destroy(c);
        free(flags);
        free(idiag);
        return -1;
    }
    for (int64_t t = 0; t < n_tasks; ++t) atomic_init(&flags[t].value, 0);
    SPB_ON_TEAM(team, n_cores, ,
                spb_p2p_worker(indptr, indices, data, idiag, b, x, block_ptr, n_steps, n_cores,
                               parent_ptr, parent_idx, spb_thread_num(), c, flags, times, reps));
    spb_counters_destroy(c);
    free(flags);
    free(idiag);
    return team;
}

/* ---- Synchronisation microbenchmark --------------------------------------------------------
 *
 * The kernels' own synchronisation timed alone (sptrsv-elasticity §4.1): every thread runs
 * n_steps supersteps, each a fixed work item (`work` dependent multiply-adds on a register, no
 * memory traffic; 0 = an empty superstep) and then, by `kind`:
 *   SPB_SYNC_NONE  nothing (the work alone: the compute reference),
 *   SPB_SYNC_SPIN  the BSP kernel's spin barrier (spb_counters_barrier),
 *   SPB_SYNC_OMP   OpenMP's barrier,
 *   SPB_SYNC_WEAK  the SSP kernel's weak barrier at `staleness`, in the kernel's order: wait
 *                  until the others completed superstep s - staleness, work, arrive,
 *   SPB_SYNC_FLAG  the P2P kernel's flag wait: task (s, p) waits for the flag of task
 *                  (s - 1, (p + 1) mod P), works, then stores its own flag (release).
 * Each repetition starts with a spin barrier (untimed) and ends with one, inside thread 0's
 * clock for every kind alike, so the difference of two kinds holds no start or end cost.  Nothing
 * is allocated inside the parallel region. */
#define SPB_SYNC_NONE 0
#define SPB_SYNC_SPIN 1
#define SPB_SYNC_OMP 2
#define SPB_SYNC_WEAK 3
#define SPB_SYNC_FLAG 4

static inline double spb_work_item(double v, int work)
{
    for (int k = 0; k < work; ++k) v = v * 0.999999 + 1e-9;
    return v;
}

static double spb_sync_worker(int kind, int n_cores, int n_steps, int work, int staleness, int me,
                              spb_counters *c, spb_line *flags, double *times, int reps)
{
    double v = 1.0 + me;
    const int64_t lag = (int64_t)staleness - 1;
    const int next = (me + 1) % n_cores;
    for (int r = 0; r < reps; ++r) {
        const int64_t epoch = (int64_t)r + 1;
        spb_counters_barrier(c, me);
        double t0 = me == 0 ? spb_now() : 0.0;
        for (int s = 0; s < n_steps; ++s) {
            if (kind == SPB_SYNC_WEAK) {
                spb_counters_wait(c, me, spb_counters_value(c, me) - lag);
                v = spb_work_item(v, work);
                spb_counters_arrive(c, me);
            } else if (kind == SPB_SYNC_FLAG) {
                if (s > 0) spb_flag_wait(flags, (int32_t)((int64_t)(s - 1) * n_cores + next), epoch);
                v = spb_work_item(v, work);
                atomic_store_explicit(&flags[(int64_t)s * n_cores + me].value, epoch,
                                      memory_order_release);
            } else {
                v = spb_work_item(v, work);
                if (kind == SPB_SYNC_SPIN) spb_counters_barrier(c, me);
                else if (kind == SPB_SYNC_OMP) spb_sync(c, me, SPB_BARRIER_OMP);
            }
        }
        spb_counters_barrier(c, me);
        spb_stop_clock(c, me, 0, t0, &times[r]);
    }
    return v;
}

/* reps timed runs of the microbenchmark in one parallel region; return value as
 * spb_bsp_solve_timed.  *sink receives the work items' result (so they cannot be elided). */
static int spb_sync_bench_timed(int kind, int n_cores, int n_steps, int work, int staleness,
                                double *times, int reps, double *sink)
{
    int team = 1;
    spb_counters *c = spb_counters_create(n_cores);
    spb_line *flags = (spb_line *)spb_aligned_calloc((size_t)n_steps * n_cores * sizeof(spb_line));
    if (!c || !flags) {
        spb_counters_destroy(c);
        free(flags);
        return -1;
    }
    for (int64_t t = 0; t < (int64_t)n_steps * n_cores; ++t) atomic_init(&flags[t].value, 0);
    double total = 0.0;
    SPB_ON_TEAM(team, n_cores, reduction(+ : total),
                total += spb_sync_worker(kind, n_cores, n_steps, work, staleness, spb_thread_num(),
                                         c, flags, times, reps));
    *sink = total;
    spb_counters_destroy(c);
    free(flags);
    return team;
}

#endif /* SPBENCH_SPTRSV_IMPL_H */
