"""Machine and build facts for `spbench info` and every results folder's meta.json (as asv's machine file).

MPI is probed in a subprocess: the CLI process never imports mpi4py.MPI, so a
broken or absent MPI runtime cannot take the CLI down with it.
"""
from __future__ import annotations

import os
import platform
import socket
import subprocess
import sys
from contextlib import contextmanager
from functools import lru_cache
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path

PACKAGES = ("numpy", "scipy", "Cython", "mpi4py", "pandas", "matplotlib", "click", "PyYAML")

_MPI_PROBE = """
import mpi4py
mpi4py.rc.initialize = False
mpi4py.rc.finalize = False
from mpi4py import MPI
print(MPI.Get_library_version().rstrip(chr(0)).strip().splitlines()[0])
print("%d.%d" % MPI.Get_version())
"""


def cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


@contextmanager
def unpinned_for_children():
    """While inside, the calling thread may run on every CPU any thread of this process may.

    With OMP_PROC_BIND/OMP_PLACES libgomp pins the main thread to one place, and a child process
    inherits its spawner's mask: a multi-threaded child (an original code run beside ours) would
    put all its threads on that one core. Spawn it inside this, and its own OpenMP binds it as
    ours was (the same environment); the thread's own mask is restored after.
    """
    try:
        mine = os.sched_getaffinity(0)
    except AttributeError:  # not Linux: no masks to widen
        yield
        return
    every = set(mine)
    for tid in os.listdir("/proc/self/task") if os.path.isdir("/proc/self/task") else ():
        try:
            every |= os.sched_getaffinity(int(tid))
        except OSError:  # a thread that ended meanwhile
            pass
    if every == mine:
        yield
        return
    os.sched_setaffinity(0, every)
    try:
        yield
    finally:
        os.sched_setaffinity(0, mine)


def usable_cores() -> int:
    """Cores this process may run on (affinity- and cgroup-aware where the OS tells). With
    OMP_PROC_BIND/OMP_PLACES, libgomp pins the main thread to one place once the kernels load, so
    the number of OpenMP places counts too."""
    try:
        n = len(os.sched_getaffinity(0))
    except AttributeError:
        n = os.cpu_count() or 1
    try:
        from spbench.kernels.sptrsv._sptrsv import omp_num_places
        n = max(n, omp_num_places())
    except ImportError:
        pass
    quota = Path("/sys/fs/cgroup/cpu.max")
    try:
        q, period = quota.read_text().split()
        if q != "max":
            n = max(1, min(n, int(int(q) // int(period))))
    except (OSError, ValueError):
        pass
    return n


def topology(sys_root: str = "/sys/devices/system") -> dict:
    """Sockets, NUMA domains and cores per domain of the online CPUs (sysfs:
    ``cpu/cpu*/topology/physical_package_id``, ``node/node*/cpulist``); unknown counts are 1."""
    root = Path(sys_root)
    try:  # online CPUs, not this thread's affinity: libgomp pins the main thread to one place
        cpus = _cpu_list((root / "cpu/online").read_text())
    except (OSError, ValueError):
        cpus = list(range(os.cpu_count() or 1))
    sockets = set()
    for c in cpus:
        try:
            sockets.add(int((root / f"cpu/cpu{c}/topology/physical_package_id").read_text()))
        except (OSError, ValueError):
            pass
    domains = []
    for node in sorted(root.glob("node/node[0-9]*")):
        try:
            mine = set(_cpu_list((node / "cpulist").read_text())) & set(cpus)
        except (OSError, ValueError):
            continue
        if mine:
            domains.append(len(mine))
    n_domains = max(1, len(domains))
    return {"sockets": max(1, len(sockets)), "numa_domains": n_domains,
            "cores_per_domain": max(domains) if domains else len(cpus)}


def _cpu_list(text: str) -> list[int]:
    """``0-3,8,10-11`` -> [0, 1, 2, 3, 8, 10, 11] (the sysfs cpulist format)."""
    out = []
    for part in text.strip().split(","):
        if part:
            lo, _, hi = part.partition("-")
            out.extend(range(int(lo), int(hi or lo) + 1))
    return out


def proc_kb(path: str, key: str) -> int | None:
    """The ``key:`` line of a Linux /proc file (``/proc/self/status``, ``/proc/meminfo``) in KiB,
    None where the file or the line is missing."""
    try:
        with open(path) as fh:
            for line in fh:
                if line.startswith(key + ":"):
                    return int(line.split()[1])
    except (OSError, ValueError, IndexError):
        pass
    return None


def memory_gib() -> float | None:
    kb = proc_kb("/proc/meminfo", "MemTotal")
    return round(kb / 2**20, 1) if kb is not None else None


def package_versions() -> dict:
    """Python's and each package's version; ``cython`` is the Cython that generated the kernels
    (recorded in them at build time, so it shows where Cython is not installed), else the one installed."""
    out = {"python": platform.python_version()}
    for name in PACKAGES:
        try:
            out[name.lower()] = version(name)
        except PackageNotFoundError:
            out[name.lower()] = None
    try:
        from spbench.kernels._build_info import cython_version
        out["cython"] = cython_version()
    except ImportError:
        pass
    return out


@lru_cache(maxsize=1)
def mpi_info() -> dict:
    """MPI library vendor line and standard version, read in a child process (never initialized here)."""
    try:
        res = subprocess.run([sys.executable, "-c", _MPI_PROBE], capture_output=True, text=True, timeout=60)
    except (OSError, subprocess.TimeoutExpired) as exc:
        return {"library": None, "standard": None, "error": str(exc)}
    if res.returncode != 0:
        last = (res.stderr.strip().splitlines() or ["mpi4py failed"])[-1]
        return {"library": None, "standard": None, "error": last}
    lines = res.stdout.strip().splitlines()
    return {"library": lines[0] if lines else None, "standard": lines[1] if len(lines) > 1 else None}


#: the environment that decides how OpenMP threads run, recorded with every result: the binding
#: steadies measured solves, the wait policy removes idle threads' spinning (docs/performance.md)
OPENMP_ENVIRONMENT = ("OMP_NUM_THREADS", "OMP_PROC_BIND", "OMP_PLACES", "OMP_WAIT_POLICY", "GOMP_SPINCOUNT")


def openmp_info() -> dict:
    """Whether kernels were built with OpenMP, how many threads a parallel region gets, and the
    OpenMP environment (``OPENMP_ENVIRONMENT``; unset ones as None)."""
    try:
        from spbench.kernels import _build_info
    except ImportError as exc:
        return {"enabled": False, "threads": None, "error": f"kernels not built: {exc}"}
    return {"enabled": _build_info.openmp_enabled(), "threads": _build_info.max_threads(),
            **{name: os.environ.get(name) for name in OPENMP_ENVIRONMENT}}


@lru_cache(maxsize=1)
def git_state() -> dict:
    """Commit and dirty flag of the source tree spbench was installed from (None outside git)."""
    src = Path(__file__).resolve().parent
    try:
        sha = subprocess.run(["git", "rev-parse", "HEAD"], cwd=src, capture_output=True, text=True, timeout=10)
        if sha.returncode != 0:
            return {"sha": None, "dirty": None}
        status = subprocess.run(["git", "status", "--porcelain", "--untracked-files=no"], cwd=src,
                                capture_output=True, text=True, timeout=10)
        return {"sha": sha.stdout.strip(), "dirty": bool(status.stdout.strip())}
    except (OSError, subprocess.TimeoutExpired):
        return {"sha": None, "dirty": None}


def machine_facts(with_mpi: bool = True) -> dict:
    """Everything meta.json and `spbench info` report about this machine and build."""
    from spbench import __version__

    facts = {
        "host": socket.gethostname(),
        "cpu": cpu_model(),
        "arch": platform.machine(),
        "cores": usable_cores(),
        "logical_cpus": os.cpu_count(),
        "memory_gib": memory_gib(),
        "os": platform.platform(),
        "spbench": __version__,
        "openmp": openmp_info(),
        "versions": package_versions(),
        "git": git_state(),
    }
    if with_mpi:
        facts["mpi"] = mpi_info()
    return facts
