"""What a measured Tucker run costs on each rank, computed where the data is (tucker-lite-
distribution §4, §7.3 Fig. 17; issue: "metrics computed where the data is").

* Peak memory per scheme: Linux keeps one peak resident size per process (VmHWM); writing ``5``
  to ``/proc/self/clear_refs`` resets it, so the worker resets it before each scheme and reads it
  after, and a row's ``peak_rss_mb_max`` is THAT scheme's largest per-rank peak.
* The distribution's exact metrics (E_n^p, R_n^p, L_n, volumes, memory components) from the
  ranks' own mode plans: each rank contributes its counts, rank 0 aggregates them with the same
  function the serial simulation uses (:func:`.metrics.metrics_from_counts`), so the launching
  process never needs the tensor.
"""
from __future__ import annotations

import gc
import resource

import numpy as np

from spbench.machine.facts import proc_kb

__all__ = ["reset_peak_rss", "peak_rss_mb", "proc_kb", "distributed_metrics"]


def reset_peak_rss() -> bool:
    """Collect garbage and reset this process's peak resident size; False where unsupported."""
    gc.collect()
    try:
        with open("/proc/self/clear_refs", "w") as fh:
            fh.write("5")
        return True
    except OSError:
        return False


def peak_rss_mb() -> float:
    """Peak resident size since the last reset, in MB (10^6 bytes): VmHWM, else ru_maxrss."""
    kb = proc_kb("/proc/self/status", "VmHWM")
    if kb is None:
        kb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return kb * 1024 / 1e6


def distributed_metrics(comm, dt, plans, K, Q, *, root: int = 0):
    """The run's :class:`.metrics.TuckerMetrics` on ``root`` (None elsewhere), from per-rank
    counts of the mode plans (``Q``: queries per mode, as measured)."""
    from .metrics import metrics_from_counts

    mine = np.array([[pl.e_p, pl.r_p, pl.held, pl.fm_recv_local.size] for pl in plans], dtype=np.int64)
    allc = comm.gather(mine, root=root)
    bad = [int(comm.allreduce(int(np.count_nonzero(_shared(comm, pl))))) for pl in plans]
    if comm.rank != root:
        return None
    C = np.stack(allc)                       # (P, N, 4)
    per_mode = [{"e_p": C[:, n, 0], "r_p": C[:, n, 1], "held_p": C[:, n, 2],
                 "slices": int(pl.m), "fm_rows": int(C[:, n, 3].sum()), "bad_slices": bad[n]}
                for n, pl in enumerate(plans)]
    return metrics_from_counts(tuple(dt.dims), int(dt.nnz), K, Q, bool(dt.multi_policy), per_mode)


def _shared(comm, pl) -> np.ndarray:
    """Owned slices with more than one sharer (bad slices, counted once at the owner)."""
    got = np.bincount(pl.recv_pos, minlength=pl.r_p) if pl.recv_pos.size else np.zeros(pl.r_p, np.int64)
    return got[pl.own_idx] > 0
