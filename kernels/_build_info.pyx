"""What the kernels were built with: OpenMP or not, and the thread count OpenMP would use."""

cdef extern from *:
    """
    #ifdef _OPENMP
    #include <omp.h>
    static int spbench_openmp_enabled(void) { return 1; }
    static int spbench_max_threads(void) { return omp_get_max_threads(); }
    #else
    static int spbench_openmp_enabled(void) { return 0; }
    static int spbench_max_threads(void) { return 1; }
    #endif
    """
    int spbench_openmp_enabled()
    int spbench_max_threads()


def openmp_enabled():
    """True when the kernels were compiled with OpenMP."""
    return bool(spbench_openmp_enabled())


def max_threads():
    """Threads an OpenMP parallel region would start now (OMP_NUM_THREADS, cgroups)."""
    return spbench_max_threads()
