"""Points run in a child process, so that a point the operating system kills (the OOM killer's
SIGKILL) ends as an error row and the sweep goes on, instead of taking the sweep down with it.

``run_apart(count, compute)`` forks one child for the points 0 .. count-1 (the points of one data
set: work they share, say a distribution reused across K, is done once). Before each point the
child sends ``("start", i, None)``, after it ``("row", i, fields)`` (``compute(i)``), pickled with
a length prefix over a pipe; the parent yields them as they arrive. When the child dies, the
point it had started ends as ``("row", i, {"status": "error", "error": ...})`` naming the signal
and the child's peak memory (ru_maxrss from os.wait4), and a new child takes the points left.
The child dies with its parent (PR_SET_PDEATHSIG), is the OOM killer's first choice over the
sweep (oom_score_adj), ignores SIGINT (the parent kills it when interrupted) and leaves through
os._exit (none of the parent's exit handlers run twice).

fork is safe here because the parent of these points runs no OpenMP kernel: libgomp's thread
pool does not survive a fork (a parallel region in the child hangs once the parent has run one),
OpenBLAS's threads and Mt-KaHyPar's (TBB) do.
"""
from __future__ import annotations

import ctypes
import os
import pickle
import signal
import struct
import sys
import traceback

from spbench.pipeline.preflight import available_memory, size_text
from spbench.store.row_builder import failure

__all__ = ["run_apart"]

_FRAME = struct.Struct("<Q")
#: the exit code of a child whose own protocol failed (not the point: compute() reports that)
_BROKEN = 70
_PR_SET_PDEATHSIG = 1
#: the child's /proc/self/oom_score_adj (-1000..1000): the OOM killer takes it first
OOM_SCORE_ADJ = 500
#: resolved before any fork: the child only calls it
_LIBC = ctypes.CDLL(None, use_errno=True) if sys.platform.startswith("linux") else None


def run_apart(count: int, compute):
    """Yield ``("start", i, None)`` and ``("row", i, fields)`` for i in 0 .. count-1, each point
    computed by ``compute(i)`` in a child process (see the module docstring)."""
    left = list(range(count))
    while left:
        child = _Child(left, compute)
        current = None
        try:
            for kind, i, fields in child.messages():
                if kind == "start":
                    current = i
                else:
                    left.remove(i)
                    current = None
                yield kind, i, fields
            death = child.wait()
        finally:
            child.stop()
        if left:  # the child ended before the points it was given: the one in flight failed
            i = left[0] if current is None else current
            if current is None:
                yield "start", i, None
            left.remove(i)
            yield "row", i, failure(death or "the point's process ended without its row")


class _Child:
    """One forked child running ``compute`` over ``todo``; the parent's end of its pipe."""

    def __init__(self, todo: list, compute):
        self.available = available_memory()[0]
        read, write = os.pipe()
        for stream in (sys.stdout, sys.stderr):  # no buffered text printed twice
            stream.flush()
        parent = os.getpid()
        pid = os.fork()
        if pid == 0:
            os.close(read)
            _child_main(write, list(todo), compute, parent)
        os.close(write)
        self.pid, self.pipe, self.reaped = pid, os.fdopen(read, "rb"), False

    def messages(self):
        """The child's messages until its end of the pipe closes (a cut message ends them too)."""
        while len(head := self.pipe.read(_FRAME.size)) == _FRAME.size:
            (size,) = _FRAME.unpack(head)
            body = self.pipe.read(size)
            if len(body) < size:
                return
            yield pickle.loads(body)

    def wait(self) -> str | None:
        """Wait for the child; None when it exited 0, else how it ended and its peak memory."""
        _, status, usage = os.wait4(self.pid, 0)
        self.reaped = True
        self.pipe.close()
        return _death(status, usage.ru_maxrss * 1024, self.available)

    def stop(self) -> None:
        """SIGKILL the child unless it is reaped (an interrupted or failing parent), and reap it."""
        self.pipe.close()
        if self.reaped:
            return
        try:
            os.kill(self.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        os.waitpid(self.pid, 0)
        self.reaped = True


def _death(status: int, peak: int, available: int | None) -> str | None:
    """How a child that ended with wait status ``status`` died, as a row's error text."""
    if os.WIFSIGNALED(status):
        sig = os.WTERMSIG(status)
        if sig == signal.SIGKILL:
            of = f" of {size_text(available)} available" if available else ""
            return f"killed by signal 9 (out of memory? peak {size_text(peak)}{of})"
        return f"killed by signal {sig} ({signal.Signals(sig).name}; peak {size_text(peak)})"
    code = os.waitstatus_to_exitcode(status)
    return None if code == 0 else f"the point's process exited {code} (peak {size_text(peak)})"


def _child_main(fd: int, todo: list, compute, parent: int) -> None:
    """The child: run the points, report each over the pipe, leave through os._exit."""
    code = _BROKEN
    try:
        if _LIBC is not None:
            _LIBC.prctl(_PR_SET_PDEATHSIG, int(signal.SIGKILL))
        if os.getppid() != parent:  # the parent died before the death signal was set
            os._exit(_BROKEN)
        _prefer_for_oom()
        signal.signal(signal.SIGINT, signal.SIG_IGN)
        signal.signal(signal.SIGTERM, signal.SIG_DFL)
        with os.fdopen(fd, "wb") as out:
            for i in todo:
                _send(out, ("start", i, None))
                _send(out, ("row", i, compute(i)))
        code = 0
    except BaseException:
        traceback.print_exc()
    finally:
        for stream in (sys.stdout, sys.stderr):
            try:
                stream.flush()
            except Exception:
                pass
        os._exit(code)


def _prefer_for_oom() -> None:
    """Make the OOM killer choose this child before the sweep (or anyone else's process)."""
    try:
        with open("/proc/self/oom_score_adj", "w") as fh:
            fh.write(str(OOM_SCORE_ADJ))
    except OSError:
        pass


def _send(out, message) -> None:
    body = pickle.dumps(message, protocol=pickle.HIGHEST_PROTOCOL)
    out.write(_FRAME.pack(len(body)) + body)
    out.flush()
