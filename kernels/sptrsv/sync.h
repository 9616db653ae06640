/* Barriers on per-thread superstep counters in C11 atomics (sptrsv-elasticity §4.1).
 *
 * Every thread owns one counter on its own 64-byte cache line and is its only writer; the
 * counter is the number of supersteps the thread has completed.  arrive = release store of
 * own + 1 (no read-modify-write); wait = acquire loads of the other counters until each is
 * >= target, with a per-thread cache of the values last seen so a counter already far enough
 * ahead is not read again.  Spinning uses _mm_pause() on x86 and yields the CPU every
 * SPB_YIELD_AFTER spins, so more threads than cores slow down but never deadlock.
 *
 *   BSP barrier (staleness 1):   t = spb_counters_arrive(c, me); spb_counters_wait(c, me, t);
 *   SSP weak barrier, staleness S, before superstep s (own counter == s):
 *                                spb_counters_wait(c, me, s - (S - 1)); ... work ...;
 *                                spb_counters_arrive(c, me);
 *
 * Counters only grow, so one spb_counters object serves any number of repeated solves as long
 * as every thread arrives the same number of times.  Create and destroy outside parallel code.
 */
#ifndef SPBENCH_SYNC_H
#define SPBENCH_SYNC_H

#ifndef _POSIX_C_SOURCE
#define _POSIX_C_SOURCE 200809L
#endif

#include <sched.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#define SPB_PAUSE() _mm_pause()
#else
#define SPB_PAUSE() atomic_signal_fence(memory_order_seq_cst)
#endif

#define SPB_CACHE_LINE 64
#define SPB_YIELD_AFTER 64

typedef struct {
    _Alignas(SPB_CACHE_LINE) _Atomic int64_t value;
} spb_line;

typedef struct {
    int nthreads;
    int cache_stride;   /* int64 entries per thread's cache row, a whole number of cache lines */
    spb_line *count;    /* count[q].value: supersteps completed by thread q */
    int64_t *cache;     /* cache[me * cache_stride + q]: value of count[q] last seen by me */
} spb_counters;

static inline void *spb_aligned_calloc(size_t bytes)
{
    size_t rounded = (bytes + SPB_CACHE_LINE - 1) / SPB_CACHE_LINE * SPB_CACHE_LINE;
    void *p = aligned_alloc(SPB_CACHE_LINE, rounded ? rounded : SPB_CACHE_LINE);
    if (p) memset(p, 0, rounded ? rounded : SPB_CACHE_LINE);
    return p;
}

/* Counters for nthreads threads, all zero; NULL when out of memory. */
static inline spb_counters *spb_counters_create(int nthreads)
{
    spb_counters *c = (spb_counters *)malloc(sizeof(spb_counters));
    if (!c) return NULL;
    c->nthreads = nthreads;
    c->cache_stride = (int)((nthreads + 7) / 8 * 8);
    c->count = (spb_line *)spb_aligned_calloc((size_t)nthreads * sizeof(spb_line));
    c->cache = (int64_t *)spb_aligned_calloc((size_t)nthreads * c->cache_stride * sizeof(int64_t));
    if (!c->count || !c->cache) {
        free(c->count);
        free(c->cache);
        free(c);
        return NULL;
    }
    for (int q = 0; q < nthreads; ++q) atomic_init(&c->count[q].value, 0);
    return c;
}

static inline void spb_counters_destroy(spb_counters *c)
{
    if (!c) return;
    free(c->count);
    free(c->cache);
    free(c);
}

/* Own counter (only the owner writes it, so a relaxed load is exact). */
static inline int64_t spb_counters_value(const spb_counters *c, int me)
{
    return atomic_load_explicit(&c->count[me].value, memory_order_relaxed);
}

/* Publish one more completed superstep; everything written before is visible to waiters. */
static inline int64_t spb_counters_arrive(spb_counters *c, int me)
{
    int64_t v = atomic_load_explicit(&c->count[me].value, memory_order_relaxed) + 1;
    atomic_store_explicit(&c->count[me].value, v, memory_order_release);
    return v;
}

/* Spin until every other thread's counter is >= target (acquire: their writes become visible). */
static inline void spb_counters_wait(spb_counters *c, int me, int64_t target)
{
    int64_t *seen = c->cache + (size_t)me * c->cache_stride;
    for (int q = 0; q < c->nthreads; ++q) {
        if (q == me || seen[q] >= target) continue;
        int spins = 0;
        int64_t v;
        while ((v = atomic_load_explicit(&c->count[q].value, memory_order_acquire)) < target) {
            if (++spins >= SPB_YIELD_AFTER) {
                sched_yield();
                spins = 0;
            } else {
                SPB_PAUSE();
            }
        }
        seen[q] = v;
    }
}

/* Full (BSP) barrier: arrive, then wait until all threads have arrived as often as me. */
static inline void spb_counters_barrier(spb_counters *c, int me)
{
    spb_counters_wait(c, me, spb_counters_arrive(c, me));
}

#endif /* SPBENCH_SYNC_H */
