"""Progress of a long data set conversion on stderr: a ``.tns`` file read into a store, a stand-in
drawn into one. It shows what is done (bytes of the file and lines, or
nonzeros), the rate and an ETA, rewritten in place on a terminal and every few seconds as a
new line otherwise (a log). ``reporting(stream)`` makes it the default of the conversions
started inside the block: a sweep loading its data sets turns it on, ``--quiet`` leaves it off.
"""
from __future__ import annotations

import contextvars
import sys
import time
from contextlib import contextmanager

__all__ = ["ConversionProgress", "reporting", "current"]

SILENT_SECONDS = 1.0     # nothing is shown before (a small file converts silently)
_MB = 2**20              # MB as the benchmarks count them
LOG_EVERY = 10.0         # seconds between lines when the stream is no terminal (0.5 on one)

_CURRENT: contextvars.ContextVar = contextvars.ContextVar("spbench_conversion_progress", default=None)


def _duration(seconds: float) -> str:
    seconds = int(round(seconds))
    return f"{seconds // 60}m{seconds % 60:02d}s" if seconds >= 60 else f"{seconds}s"


class ConversionProgress:
    """``progress(stage, done, total, lines=None)``: ``done``/``total`` are bytes while reading
    (``lines`` then counts the lines parsed) and nonzeros in the other stages."""

    def __init__(self, name: str, stream=None):
        self.name, self.stream, self.delay = name, stream or sys.stderr, SILENT_SECONDS
        self.tty = bool(getattr(self.stream, "isatty", lambda: False)())
        self.every = 0.5 if self.tty else LOG_EVERY
        self.begun = time.monotonic()
        self.stage, self.stage_start, self.last, self.shown = None, self.begun, 0.0, False

    def __call__(self, stage: str, done: int, total: int | None, lines: int | None = None) -> None:
        now = time.monotonic()
        if stage != self.stage:           # the first stage runs from the start, the others from their first call
            self.stage, self.stage_start = stage, self.begun if self.stage is None else now
        if now - self.begun < self.delay or now - self.last < self.every:
            return
        self.last = now
        self._show(self.line(stage, done, total, lines, now - self.stage_start, now - self.begun))

    @staticmethod
    def line(stage: str, done: int, total: int | None, lines: int | None, stage_seconds: float,
             seconds: float) -> str:
        """The text shown: amounts, share, rate, elapsed time and ETA of the stage."""
        rate = done / stage_seconds if stage_seconds > 0 else 0.0
        share = f" ({100 * done / total:.0f}%)" if total else ""
        if lines is not None:                        # bytes of the file, and lines parsed
            parts = [f"{done / _MB:,.0f}" + (f"/{total / _MB:,.0f}" if total else "") + f" MB{share}",
                     f"{lines:,} lines"]
            if stage_seconds > 0:
                parts.append(f"{rate / _MB:,.0f} MB/s, {lines / stage_seconds / 1e6:,.2f}M lines/s")
        else:
            parts = [f"{done:,}" + (f" of {total:,}" if total else "") + share]
            if stage_seconds > 0:
                parts.append(f"{rate:,.0f}/s")
        parts.append(_duration(seconds))
        if total and rate > 0 and done < total:
            parts.append(f"ETA {_duration((total - done) / rate)}")
        return f"{stage} " + ", ".join(parts)

    def _show(self, text: str) -> None:
        if self.tty:
            print(f"\r{self.name}: {text}   ", end="", file=self.stream, flush=True)
        else:
            print(f"{self.name}: {text}", file=self.stream, flush=True)
        self.shown = True

    def end(self) -> None:
        """Finish the line rewritten in place, if one was shown."""
        if self.shown and self.tty:
            print("", file=self.stream, flush=True)
        self.shown = False


@contextmanager
def reporting(stream=None, *, enabled: bool = True):
    """Inside the block, conversions with no progress callback of their own report on ``stream``
    (default stderr); ``enabled=False`` (``--quiet``) keeps them silent."""
    token = _CURRENT.set((lambda name: ConversionProgress(name, stream)) if enabled else None)
    try:
        yield
    finally:
        _CURRENT.reset(token)


def current(name: str) -> ConversionProgress | None:
    """A progress reporter for the conversion of ``name`` when inside ``reporting``, else None."""
    make = _CURRENT.get()
    return make(name) if make is not None else None
