"""Was the machine busy while we measured?  One answer for every calibration and measured sweep.

A timing taken while other processes share the cores is a time slice, not a cost: the SpTrSV
calibration once fitted a 9 ns cross-core barrier that way, and the Tucker validation's two-rank
times came out 2x slow.  :class:`LoadWatch` samples, over the whole measurement, what Linux says
about the machine and our own process:

- ``loadavg``: the 1/5/15-minute load averages at the start and the end (``/proc/loadavg``);
- ``steal_fraction``: the share of CPU time the hypervisor gave to other guests (``steal`` in
  ``/proc/stat``) over the interval;
- ``other_cpu_cores``: CPU time the machine's cores spent outside this process and its waited-for
  children (``/proc/stat`` busy jiffies minus ``os.times()``), per second of wall time: 1.0 is one
  core kept busy by someone else;
- ``timing_spread``: the spread of our own repeated timings (:func:`timing_spread`), given by the
  caller.

The CPU shares need an interval of MIN_WALL_S or more (None below: a short point is judged by its
timing spread alone).

:func:`verdict` says ``busy`` with the first reason that applies (thresholds below).  A calibration
refuses a busy verdict (``spbench calibrate --force`` overrides); a measured sweep records the
figures in ``meta.json`` under ``load`` and its report marks the rows.
"""
from __future__ import annotations

import os
import time
from collections.abc import Iterable, Sequence

import numpy as np

__all__ = ["LoadWatch", "MachineBusy", "OTHER_CORES_MAX", "SPREAD_MAX", "STEAL_MAX", "check_now",
           "cpu_counters", "describe", "require_quiet", "timing_spread", "verdict"]

#: other processes' CPU, in cores averaged over the measurement, above which the machine is busy
#: (a quarter of a core: an editor or a shell stays far below, one spinning process gives 1.0)
OTHER_CORES_MAX = 0.25
#: share of CPU time stolen by the hypervisor above which the machine is busy
STEAL_MAX = 0.05
#: relative spread of repeated timings (:func:`timing_spread`) above which the machine is busy
SPREAD_MAX = 0.30

#: intervals shorter than this (seconds) give no CPU shares: /proc/stat counts in 10 ms jiffies
MIN_WALL_S = 0.5

#: /proc/stat's cpu line, in order; busy = all but idle and iowait (guest time is inside user)
_FIELDS = ("user", "nice", "system", "idle", "iowait", "irq", "softirq", "steal")
_BUSY = ("user", "nice", "system", "irq", "softirq")


class MachineBusy(RuntimeError):
    """A measurement taken on a busy machine; the message is the one-line reason."""


def cpu_counters(text: str | None = None) -> dict[str, int] | None:
    """The aggregate ``cpu`` line of ``/proc/stat`` (or of ``text``) in jiffies; None where absent."""
    if text is None:
        try:
            with open("/proc/stat") as fh:
                text = fh.readline()
        except OSError:
            return None
    for line in text.splitlines():
        parts = line.split()
        if parts and parts[0] == "cpu":
            values = [int(v) for v in parts[1:1 + len(_FIELDS)]]
            values += [0] * (len(_FIELDS) - len(values))
            return dict(zip(_FIELDS, values))
    return None


def _loadavg() -> list[float] | None:
    try:
        with open("/proc/loadavg") as fh:
            return [float(v) for v in fh.read().split()[:3]]
    except (OSError, ValueError):
        return None


def _own_cpu_seconds() -> float:
    """CPU seconds of this process (all its threads) and of its children already waited for."""
    t = os.times()
    return t.user + t.system + t.children_user + t.children_system


def timing_spread(groups: Iterable[Sequence[float]]) -> float | None:
    """The median over groups of repeated timings of each group's interquartile range over its
    median: 0.02 on a quiet machine for the calibrations' microbenchmarks, far more when another
    process takes the cores in and out.  None without a group of 4 or more timings."""
    spreads = []
    for g in groups:
        t = np.asarray(g, dtype=float)
        if t.size >= 4 and np.median(t) > 0:
            q1, med, q3 = np.percentile(t, [25, 50, 75])
            spreads.append((q3 - q1) / med)
    return float(np.median(spreads)) if spreads else None


def verdict(figures: dict) -> tuple[bool, str | None]:
    """(busy, the first reason) from :meth:`LoadWatch.figures`'s dict; missing figures say nothing."""
    other = figures.get("other_cpu_cores")
    if other is not None and other > OTHER_CORES_MAX:
        return True, (f"other processes used {other:.2f} cores on average while we measured "
                      f"(more than {OTHER_CORES_MAX})")
    steal = figures.get("steal_fraction")
    if steal is not None and steal > STEAL_MAX:
        return True, (f"the hypervisor stole {100 * steal:.1f}% of the CPU time while we measured "
                      f"(more than {100 * STEAL_MAX:.0f}%)")
    spread = figures.get("timing_spread")
    if spread is not None and spread > SPREAD_MAX:
        return True, (f"repeated timings spread {100 * spread:.0f}% (interquartile range over median; "
                      f"more than {100 * SPREAD_MAX:.0f}%)")
    return False, None


class LoadWatch:
    """Load figures over an interval: ``watch = LoadWatch()`` (or ``with LoadWatch() as watch``)
    starts it, :meth:`figures` ends it and returns the dict (module docstring) with ``busy`` and
    ``reason``.  ``hz`` is the kernel's USER_HZ (jiffies per second)."""

    def __init__(self, hz: int | None = None):
        self.hz = hz or os.sysconf("SC_CLK_TCK")
        self.start()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False

    def start(self) -> None:
        self._t0 = time.monotonic()
        self._cpu0 = cpu_counters()
        self._own0 = _own_cpu_seconds()
        self._load0 = _loadavg()

    def figures(self, timing_spread: float | None = None) -> dict:
        """The load figures from :meth:`start` to now, with the verdict."""
        wall = time.monotonic() - self._t0
        cpu1, own1 = cpu_counters(), _own_cpu_seconds()
        out = {"wall_s": round(wall, 3), "loadavg_start": self._load0, "loadavg_end": _loadavg(),
               "steal_fraction": None, "other_cpu_cores": None,
               "timing_spread": None if timing_spread is None else round(float(timing_spread), 4)}
        if self._cpu0 is not None and cpu1 is not None and wall >= MIN_WALL_S:
            d = {k: cpu1[k] - self._cpu0[k] for k in _FIELDS}
            total = sum(d.values())
            if total > 0:
                out["steal_fraction"] = round(d["steal"] / total, 4)
            if wall > 0:
                others = sum(d[k] for k in _BUSY) / self.hz - (own1 - self._own0)
                out["other_cpu_cores"] = round(max(0.0, others) / wall, 3)
        busy, reason = verdict(out)
        out["busy"], out["reason"] = busy, reason
        return out


def describe(figures: dict) -> str:
    """One line of :meth:`LoadWatch.figures`, for a calibration summary or a report."""
    def fmt(v, spec):
        return "n/a" if v is None else format(v, spec)
    la = figures.get("loadavg_start") or [None]
    return (f"load average {fmt(la[0], '.2f')}, other processes {fmt(figures.get('other_cpu_cores'), '.2f')} "
            f"cores, steal {fmt(figures.get('steal_fraction'), '.1%')}, timing spread "
            f"{fmt(figures.get('timing_spread'), '.1%')}"
            + (f": BUSY ({figures['reason']})" if figures.get("busy") else ": quiet"))


def check_now(seconds: float = 1.0) -> dict:
    """Load figures over the next ``seconds`` (this process idle): whether someone else is busy
    before a long measurement starts."""
    watch = LoadWatch()
    time.sleep(seconds)
    return watch.figures()


def require_quiet(figures: dict, what: str) -> None:
    """Raise :class:`MachineBusy` (one line naming ``what``) when ``figures`` say busy."""
    if figures.get("busy"):
        raise MachineBusy(f"{what}: the machine was busy ({figures['reason']}); nothing written. "
                          "Rerun on a quiet machine, or pass --force to keep it anyway")
