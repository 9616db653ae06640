"""The pre-flight check of a sweep: every point's estimated peak memory against the memory this
machine has free, and the stores still to generate against the disk of ``$SPBENCH_DATA``, before
any data set is loaded or generated (a point the kernel's OOM killer would stop is refused in one
line instead). The estimates are the experiment's (:meth:`spbench.experiment.Experiment.estimate_points`).
"""
from __future__ import annotations

import os
import shutil
from pathlib import Path

from spbench.store.atomic_files import WriteFailed, probe_folder
from spbench.store.cache_root import data_dir
from spbench.datasets.resources import available_memory, size_text  # one figure for the data layer's checks too

from spbench.experiment import Estimate, RunError

__all__ = ["available_memory", "free_disk", "data_disk", "check", "skipped", "size_text", "SKIP_ENV"]

#: set to 1 to skip the refusal (as `spbench run --no-preflight`)
SKIP_ENV = "SPBENCH_NO_PREFLIGHT"
def free_disk(path) -> tuple[Path, int]:
    """(the existing folder at or above ``path``, the bytes free on its file system)."""
    here = Path(path).expanduser().absolute()
    while not here.exists() and here != here.parent:
        here = here.parent
    return here, shutil.disk_usage(here).free


def data_disk() -> tuple[Path, int]:
    """``free_disk`` of ``$SPBENCH_DATA``, where stores are generated."""
    return free_disk(data_dir())


def check(estimates: list[Estimate], source: str) -> None:
    """Refuse (a one-line RunError) a sweep with a point over the free memory or stores that do
    not fit on the disk of ``$SPBENCH_DATA``."""
    memory = [e for e in estimates if e.resource == "memory"]
    available, where = available_memory()
    over = [e for e in memory if available is not None and e.nbytes > available]
    if over:
        worst = max(over, key=lambda e: e.nbytes)
        others = f" ({len(over)} of {len(memory)} points are over)" if len(over) > 1 else ""
        raise RunError(f"{source}: point '{worst.name}' needs about {size_text(worst.nbytes)} of memory at its "
                       f"peak ({worst.basis}) but {size_text(available)} is available ({where}){others}; run a "
                       f"smaller sweep (--scale small, fewer or smaller data sets) or `execution: measured` "
                       f"across nodes (--launcher 'srun -n {{ranks}}'); --no-preflight runs it anyway")
    disk = [e for e in estimates if e.resource == "disk" and e.nbytes > 0]
    need = sum(e.nbytes for e in disk)
    if disk:
        try:   # a file, a read-only folder: said now, not once the sweep has started
            probe_folder(data_dir())
        except WriteFailed as exc:
            names = ", ".join(e.name for e in disk)
            raise RunError(f"$SPBENCH_DATA: {exc}; the sweep writes data there ({names}): point $SPBENCH_DATA "
                           f"at a folder that can be written") from None
        folder, free = data_disk()
        if need > free:
            names = ", ".join(f"{e.name} {size_text(e.nbytes)}" for e in disk)
            raise RunError(f"{source}: the data to write (tensor stores, the model's spill) need about "
                           f"{size_text(need)} ({names}) "
                           f"but {folder} has {size_text(free)} free; point $SPBENCH_DATA at a larger disk, or "
                           f"run --scale small or fewer data sets; --no-preflight runs it anyway")


def skipped(flag: bool) -> bool:
    """Whether the check is off: ``--no-preflight``, or $SPBENCH_NO_PREFLIGHT set to 1."""
    return flag or os.environ.get(SKIP_ENV, "") not in ("", "0")
