"""Build the Cython kernels (C, -O3, OpenMP when the compiler has it) and map the folders.

The import package ``spbench`` is assembled from ``bench/`` (everything but kernels and data),
``kernels/`` (Cython: each experiment's in ``kernels/sptrsv/``, ``kernels/tucker/``, shared ones at
its root) and ``datasets/`` (docs/design.md, "Layout").  Environment switches:
``SPBENCH_NO_OPENMP=1`` builds without OpenMP; ``SPBENCH_DEBUG=1`` turns Cython's bounds,
wrap-around and initialization checks back on (for tests hunting an out-of-range index).
"""
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy
from Cython.Build import cythonize
from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

HERE = Path(__file__).resolve().parent


def _packages():
    """Every folder with an __init__.py under bench/, as a dotted spbench.* name."""
    names = []
    for init in sorted((HERE / "bench").rglob("__init__.py")):
        rel = init.parent.relative_to(HERE / "bench")
        names.append(".".join(("spbench",) + rel.parts) if rel.parts else "spbench")
    kernels = ["spbench.kernels" + "".join(f".{part}" for part in init.parent.relative_to(HERE / "kernels").parts)
               for init in sorted((HERE / "kernels").rglob("__init__.py"))]
    return names + kernels + ["spbench.datasets"]


def _openmp_flags():
    """Compile and link a tiny OpenMP program; return the flags when it works, else none."""
    if os.environ.get("SPBENCH_NO_OPENMP") == "1":
        return [], []
    cc = os.environ.get("CC", "cc")
    if shutil.which(cc.split()[0]) is None:
        return [], []
    src = "#include <omp.h>\nint main(void){int n=0;\n#pragma omp parallel\n{n=omp_get_num_threads();}\nreturn n<1;}\n"
    with tempfile.TemporaryDirectory() as tmp:
        c_file = Path(tmp) / "probe.c"
        c_file.write_text(src)
        res = subprocess.run([*cc.split(), "-fopenmp", str(c_file), "-o", str(Path(tmp) / "probe")],
                             capture_output=True)
    if res.returncode != 0:
        print("spbench: OpenMP not available, building serial kernels", file=sys.stderr)
        return [], []
    return ["-fopenmp"], ["-fopenmp"]


DEBUG = os.environ.get("SPBENCH_DEBUG") == "1"
OMP_COMPILE, OMP_LINK = _openmp_flags()
DIRECTIVES = {
    "language_level": 3,
    "boundscheck": DEBUG,
    "wraparound": DEBUG,
    "initializedcheck": DEBUG,
    "cdivision": not DEBUG,
    "embedsignature": True,
}

# Kernels that link numpy's random distributions (numpy/random/lib/libnpyrandom.a).
NPYRANDOM = {"_standin_draw": {"library_dirs": [str(Path(numpy.get_include()).parents[1] / "random" / "lib")],
                               "libraries": ["npyrandom", "m"]}}

# kernels/<experiment>/_x.pyx is spbench.kernels.<experiment>._x; its folder holds its .h and .pxd
extensions = [
    Extension(
        ".".join(("spbench", *pyx.relative_to(HERE).with_suffix("").parts)),
        [pyx.relative_to(HERE).as_posix()],
        include_dirs=[numpy.get_include(), "kernels", pyx.parent.relative_to(HERE).as_posix()],
        extra_compile_args=["-O3", "-std=c11", *OMP_COMPILE] + (["-O0", "-g"] if DEBUG else []),
        extra_link_args=OMP_LINK,
        define_macros=[("NPY_NO_DEPRECATED_API", "NPY_1_7_API_VERSION")],
        language="c",
        **NPYRANDOM.get(pyx.stem, {}),
    )
    for pyx in sorted((HERE / "kernels").rglob("*.pyx"))
]
KERNEL_DIRS = sorted({pyx.parent.relative_to(HERE).as_posix() for pyx in (HERE / "kernels").rglob("*.pyx")})

JOBS = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)


class ParallelBuildExt(build_ext):
    """Compile the kernels' C files on every usable core (``--parallel`` unless given; a fresh
    install's build is most of `make install`'s time on a small machine)."""

    def finalize_options(self):
        super().finalize_options()
        if not self.parallel:
            self.parallel = JOBS


setup(
    cmdclass={"build_ext": ParallelBuildExt},
    packages=_packages(),
    package_dir={"spbench": "bench", "spbench.kernels": "kernels", "spbench.datasets": "datasets"},
    package_data={".".join(("spbench", *Path(folder).parts)): ["*.pyx", "*.pxd", "*.pxi", "*.h"]
                  for folder in KERNEL_DIRS},
    ext_modules=cythonize(extensions, compiler_directives=DIRECTIVES, include_path=KERNEL_DIRS,  # the .pxd
                          nthreads=JOBS),
    zip_safe=False,
)
