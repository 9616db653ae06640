"""What the kernels were built with: OpenMP or not, the thread count OpenMP would use, and the
Cython that generated them (read from the generated C, so no Cython is needed at run time)."""

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

cdef extern from *:
    """
    /* CYTHON_HEX_VERSION: 0xMMmmppLS (major, minor, patch, release level A/B/C/F and serial),
       defined by the Cython that wrote this file */
    static unsigned long spbench_cython_hex(void) { return (unsigned long)CYTHON_HEX_VERSION; }
    """
    unsigned long spbench_cython_hex()


def openmp_enabled():
    """True when the kernels were compiled with OpenMP."""
    return bool(spbench_openmp_enabled())


def max_threads():
    """Threads an OpenMP parallel region would start now (OMP_NUM_THREADS, cgroups)."""
    return spbench_max_threads()


def cython_version():
    """The version of the Cython that generated the kernels, as ``3.0.11`` (``3.1.0b1`` for a
    pre-release)."""
    cdef unsigned long v = spbench_cython_hex()
    text = f"{(v >> 24) & 0xFF}.{(v >> 16) & 0xFF}.{(v >> 8) & 0xFF}"
    level, serial = (v >> 4) & 0xF, v & 0xF
    return text + ({0xA: "a", 0xB: "b", 0xC: "rc"}.get(level, "") + str(serial) if level != 0xF else "")
