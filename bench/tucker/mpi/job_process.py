"""One MPI job as a child process that cannot outlive the sweep that started it.

The launcher (``mpiexec``, ``srun``) starts in its own session, so a Ctrl-C at the terminal
reaches only the sweep, which then stops the job itself. On Linux the launcher also gets a
parent-death signal (``prctl(PR_SET_PDEATHSIG, SIGTERM)``): when the sweep dies in any way,
SIGKILL included (a job's time limit, the OOM killer), the kernel sends SIGTERM to the
launcher, which takes its ranks down (MPICH's hydra and Slurm's srun both forward it). On a
timeout or an exception in the sweep the launcher gets SIGTERM, then SIGKILL after a grace period.
Its output goes to a log file (a pipe nobody reads while waiting would fill and stall the job),
and the job's progress file is read while it runs.
"""
from __future__ import annotations

import ctypes
import os
import signal
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

__all__ = ["JobOutcome", "run_job"]

PR_SET_PDEATHSIG = 1
#: resolved before any fork: the child between fork and exec only calls it
_PRCTL = ctypes.CDLL(None, use_errno=True).prctl if sys.platform.startswith("linux") else None
#: seconds between SIGTERM and SIGKILL when stopping a job, and between looks at its progress
STOP_GRACE = 5.0
POLL_SECONDS = 0.5


@dataclass
class JobOutcome:
    """How a job ended: its exit code (None when it could not start), whether it was stopped at
    the timeout, its wall time and the last meaningful line of its output."""

    returncode: int | None
    timed_out: bool
    seconds: float
    reason: str


def _die_with_parent(parent: int):
    """preexec_fn: SIGTERM when the parent dies; exit now if it already has (the fork raced it)."""
    def set_signal():
        if _PRCTL is not None:
            _PRCTL(PR_SET_PDEATHSIG, int(signal.SIGTERM))
        if os.getppid() != parent:
            os._exit(1)
    return set_signal


def stop(proc: subprocess.Popen) -> None:
    """SIGTERM to the job's process group, SIGKILL if it is still there after STOP_GRACE."""
    for sig, wait in ((signal.SIGTERM, STOP_GRACE), (signal.SIGKILL, None)):
        try:
            os.killpg(proc.pid, sig)
        except ProcessLookupError:
            return
        try:
            proc.wait(timeout=wait)
            return
        except subprocess.TimeoutExpired:
            continue


def _last_reason(log: Path) -> str:
    """The last line of the job's output that names an error, else its last line."""
    try:
        with open(log, "rb") as fh:
            fh.seek(max(0, os.path.getsize(log) - 65536))
            text = fh.read().decode("utf-8", "replace")
    except OSError:
        return ""
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    return next((line for line in reversed(lines) if "Error" in line or "error" in line), lines[-1] if lines else "")


def run_job(cmd: list, env: dict, *, timeout: float, log: Path, on_poll) -> JobOutcome:
    """Run ``cmd`` until it ends or ``timeout`` seconds pass, calling ``on_poll()`` every
    POLL_SECONDS and once at the end (to read its progress); output goes to ``log``."""
    start = time.monotonic()
    try:
        with open(log, "wb") as out:
            proc = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=out, stderr=subprocess.STDOUT, env=env,
                                    start_new_session=True, preexec_fn=_die_with_parent(os.getpid()))
    except OSError as exc:
        return JobOutcome(None, False, 0.0, f"cannot start {cmd[0]}: {exc.strerror}")
    timed_out = False
    try:
        while True:
            try:
                proc.wait(timeout=POLL_SECONDS)
                break
            except subprocess.TimeoutExpired:
                on_poll()
            if time.monotonic() - start > timeout:
                timed_out = True
                stop(proc)
                break
    except BaseException:
        stop(proc)
        raise
    on_poll()
    return JobOutcome(proc.returncode, timed_out, time.monotonic() - start, _last_reason(log))
