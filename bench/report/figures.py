"""What every figure of both experiments' reports draws with: titles wrapped over their axes, plain
numbers on log axes, one panel per data set, and a figure saved as PNG, PDF and the CSV of exactly
its plotted points, atomically (the figures themselves: ``spbench.<experiment>.report``)."""
from __future__ import annotations

from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import pandas as pd  # noqa: E402

from spbench.report.tables import atomic_output, write_csv  # noqa: E402


def scale_phrase(df: pd.DataFrame) -> str:
    """"--scale small" when the rows come from a reduced ``--scale`` run (its config is named
    ``<name>_<scale>``, :meth:`spbench.pipeline.config.Config.scaled`), "" at full scale."""
    from spbench.pipeline.scales import SCALES, scaled_name

    configs = set(df["config"].dropna().astype(str)) if "config" in df.columns else set()
    scales = sorted({s for s in SCALES if s != "full" for c in configs if c.endswith(scaled_name("", s))})
    return f"--scale {'/'.join(scales)}" if scales else ""


def wrap_title(text: str, width: int = 78) -> str:
    """Each line of ``text`` wrapped at ``width`` characters, so that a title at font size 9 stays
    over its axes and clear of a legend placed right of them."""
    import textwrap

    return "\n".join(part for line in text.split("\n") for part in textwrap.wrap(line, width) or [""])


def figure_title(df: pd.DataFrame, what: str, execution: str, counted: str) -> str:
    """Title lines: what is shown; the sweep, measured or simulated, the scale and the core counts
    or ranks counted; what the data are (real, generated, stand-ins)."""
    from spbench.report.labels import provenance_tag

    configs = sorted(set(df["config"].dropna().astype(str))) if "config" in df.columns else []
    shown = {"simulated": "simulated (cost model)"}.get(execution, execution)
    parts = [configs[0]] if len(configs) == 1 else []
    parts += [shown, *filter(None, [scale_phrase(df)]), counted]
    data = provenance_tag(df)
    return wrap_title(f"{what}\n{', '.join(parts)}" + (f"\n{data}" if data else ""))


def cores_phrase(cores) -> str:
    """"cores 1, 2" / "cores 1-128 (8 counts)" for a title."""
    cores = sorted({int(c) for c in cores})
    if len(cores) <= 6:
        return "cores " + ", ".join(map(str, cores))
    return f"cores {cores[0]}-{cores[-1]} ({len(cores)} counts)"


def plain_log_ticks(axis) -> None:
    """Plain numbers on a log axis (0.5, 2, 60 rather than 5×10^-1); call after the limits are set.
    Less than a factor 3 wide: evenly spread ticks; up to two decades: 1, 2, 5 per decade; up to
    four: 1 and 3 per decade; wider: the powers of ten only, so every point has a labelled tick
    within a factor of about 3."""
    from matplotlib.ticker import FuncFormatter, LogLocator, MaxNLocator, NullFormatter

    def plain(value, _pos):
        for scale, unit in ((1e9, "G"), (1e6, "M"), (1e4, "k")):
            if abs(value) >= scale:
                return f"{value / (1e3 if unit == 'k' else scale):.3g}{unit}"
        return f"{value:.4g}" if abs(value) >= 1 else f"{value:.3g}"

    low, high = sorted(axis.get_view_interval())
    axis.set_minor_formatter(NullFormatter())
    if low > 0 and high / low < 3:
        axis.set_major_locator(MaxNLocator(nbins=5))
    elif low > 0 and high / low < 100:
        axis.set_major_locator(LogLocator(subs=(1.0, 2.0, 5.0)))
    elif low > 0 and high / low < 1e4:
        axis.set_major_locator(LogLocator(subs=(1.0, 3.0)))
    axis.set_major_formatter(FuncFormatter(plain))


def panel_grid(n: int, extra_width: float = 1.4, per_row: int = 3) -> tuple[plt.Figure, list]:
    """One small panel per data set, at most ``per_row`` a row (so five tensors stay readable);
    panels left over are hidden. Returns (figure, the n axes in order); constrained layout."""
    cols = max(1, min(n, per_row))
    rows = -(-n // cols)
    fig, axes = plt.subplots(rows, cols, figsize=(3.2 * cols + extra_width, 3.6 * rows), squeeze=False,
                             layout="constrained")
    flat = list(axes.ravel())
    for ax in flat[n:]:
        ax.set_visible(False)
    return fig, flat[:n]


def save_figure(fig: plt.Figure, out_dir: Path, stem: str, points: pd.DataFrame) -> list[Path]:
    paths = []
    for fmt in ("png", "pdf"):
        path = out_dir / f"{stem}.{fmt}"
        metadata = {"CreationDate": None} if fmt == "pdf" else None
        with atomic_output(path) as tmp:
            fig.savefig(tmp, format=fmt, dpi=150, metadata=metadata)
        paths.append(path)
    plt.close(fig)
    paths.append(write_csv(points, out_dir / f"{stem}.csv"))
    return paths


