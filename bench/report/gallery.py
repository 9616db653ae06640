"""The figure gallery of ``docs/figures.md``: one small PNG per figure type, copied from the reports
that ``make figures-gallery`` profiles (the demo sweeps, a second smoke sweep for ``spbench compare``),
and the page saying what each figure shows, on what rows, and which command draws it.

Run as ``python -m spbench.report.gallery PLOTS FIGURES_DIR PAGE``; exit 2 with one line when PLOTS
holds none of the figures.
"""
from __future__ import annotations

import os
import sys
import time
from dataclasses import dataclass
from pathlib import Path

from spbench.store.atomic_files import atomic_output, atomic_write_text

WIDTH = 760
"""Width in pixels of a gallery image (the reports' PNGs are 150 dpi, about 1100 px wide)."""


@dataclass(frozen=True)
class Entry:
    """One figure type: the report file it is copied from (a glob under PLOTS, first match), its
    heading, what it shows and the command that draws it in a user's own run."""
    pattern: str
    title: str
    shows: str
    command: str


ENTRIES = (
    Entry("smoke/speedup.png", "SpTrSV speed-up over serial (paper Fig. 6.1)",
          "Geometric mean over matrices of each scheduler's speed-up over the serial solve, one "
          "marker per scheduler and core count: capped bar = 95% bootstrap interval (matrices and "
          "repetitions resampled), pale bar = 25th-75th percentile over matrices.",
          "`make demo` (plots/smoke/speedup.png); `make fig6.1` for the paper's data sets"),
    Entry("smoke/speedup_p10_p90.png", "SpTrSV speed-up, 10-90 percentile bar (paper Fig. 1.1)",
          "The same points with the 10th-90th percentile over matrices as the pale bar.",
          "`make demo`; `make fig1.1`"),
    Entry("smoke/perfprofile.png", "SpTrSV performance profile (paper Fig. 5.1)",
          "Fraction of (matrix, core count) instances with at least 2 cores on which a scheduler is "
          "within tau times the best scheduler's time; serial and 1-core runs are not counted.",
          "`make demo`; `make fig5.1`"),
    Entry("smoke/scheduling_time.png", "Scheduling time against nonzeros (paper Fig. 6.2)",
          "Each scheduler's time to compute its schedule per matrix, log-log, with the fitted slope "
          "when the matrices give 3 or more distinct sizes spanning 4x (the title says how many).",
          "`make demo`; `make fig6.2`"),
    Entry("smoke_simulated/barrier_sweep.png", "SSP over BSP against the barrier latency (paper §6.4)",
          "ElasticDivide's schedule under the BSP and SSP cost models with the barrier latency varied, "
          "geometric mean over matrices of the modelled BSP/SSP time ratio, per core count.",
          "`spbench run CONFIG --execution simulate` after `spbench calibrate`, then `spbench profile`"),
    Entry("compare/compare.png", "spbench compare",
          "NEW/BASE ratio of the runs' median solve times per point with its 95% t-interval over "
          "runs, coloured by verdict after Benjamini-Hochberg; the shaded band is the threshold. The "
          "axis spans the ratios with a margin; an interval running beyond it ends in an arrow. Both "
          "sweeps ran the same code, their runs in passes: any difference here is the machine's noise.",
          "`spbench compare BASE NEW --out DIR`"),
    Entry("smoke_tucker/fig10_*P64_K10.png", "Tucker HOOI time per tensor (paper Fig. 10)",
          "Modelled (cost model calibrated on this machine) HOOI time of each distribution "
          "scheme, normalised per tensor to Lite's.", "`make demo` after `make tucker-calibration`; "
          "`make fig10`"),
    Entry("smoke_tucker/fig11_*P64_K10.png", "Tucker HOOI time breakup (paper Fig. 11)",
          "HOOI time split into TTM, SVD, communication and other, stacked per scheme.",
          "`make fig11`"),
    Entry("smoke_tucker/fig12a_*P64_K10.png", "Tucker TTM load imbalance (paper Fig. 12a)",
          "Exact metric of each scheme's distribution (12b, 12c: SVD redundancy and imbalance, "
          "drawn alike).", "`make demo`; `make fig12`"),
    Entry("smoke_tucker/fig13_*P64_K10.png", "Tucker communication volume (paper Fig. 13)",
          "Words communicated per HOOI iteration, SVD and factor-matrix parts stacked.",
          "`make demo`; `make fig13`"),
    Entry("smoke_tucker/fig15b_*.png", "Lite strong scaling (paper Fig. 15b)",
          "Lite's modelled speed-up over the smallest rank count, log-log, with the ideal line.",
          "`make fig15`"),
    Entry("smoke_tucker/fig17_*P64_K10.png", "Tucker memory per rank (paper Fig. 17)",
          "Average memory per rank, tensor, penultimate and factor-matrix parts stacked.",
          "`make demo`; `make fig17`"),
)


def shrink_png(source: Path, target: Path, width: int = WIDTH) -> Path:
    """``source`` scaled to ``width`` pixels and reduced to 256 colours (a few tens of kB), written
    atomically to ``target``."""
    from PIL import Image

    with Image.open(source) as image:
        image = image.convert("RGB")
        if image.width > width:
            image = image.resize((width, round(image.height * width / image.width)), Image.LANCZOS)
        small = image.quantize(colors=256)
    with atomic_output(target) as tmp:
        small.save(tmp, format="PNG", optimize=True)
    return target


def build_gallery(plots: Path, figures_dir: Path, page: Path) -> list[Path]:
    """Copy each :data:`ENTRIES` figure found under ``plots`` into ``figures_dir`` (shrunk) and write
    ``page``; a figure type not found is listed with the command that draws it. Returns the written
    paths; raises ValueError when none was found."""
    found = {e: next(iter(sorted(plots.glob(e.pattern))), None) for e in ENTRIES}
    if not any(found.values()):
        raise ValueError(f"{plots}: none of the gallery's figures (expected e.g. {ENTRIES[0].pattern})")
    figures_dir.mkdir(parents=True, exist_ok=True)
    written = []
    load = "/".join(f"{v:.2f}" for v in os.getloadavg())
    rel = os.path.relpath(figures_dir, page.parent)
    lines = ["# Figure gallery", "",
             "One example of every figure type `spbench profile` and `spbench compare` draw, from the "
             "demo sweeps: `configs/smoke.yaml` (SpTrSV, two generated matrices, measured at 1 and 2 "
             "cores, run twice with `--runs 3` for the compare figure, and simulated with a quick calibration of "
             "this machine) and `configs/smoke_tucker.yaml` "
             "(Tucker, two 50k-nonzero stand-ins, simulated at 8 and 64 ranks, HOOI times from this "
             "machine's Tucker calibration). Small examples, not results: see docs/reproducing.md for "
             "the paper's runs.", "",
             "Regenerate (about a minute, fresh results folder under `build/gallery/`):", "",
             "```", "make figures-gallery", "```", "",
             f"Last generated {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())} on a "
             f"{os.cpu_count()}-core machine, load average {load} at the end (uptime); the SpTrSV "
             "times were measured on it, so on a busy machine they vary run to run.", ""]
    for entry, source in found.items():
        lines += [f"## {entry.title}", "", entry.shows, "", f"Drawn by: {entry.command}.", ""]
        if source is None:
            lines += ["*(not drawn by the gallery's runs)*", ""]
            continue
        target = figures_dir / source.name
        written.append(shrink_png(source, target))
        lines += [f"![{entry.title}]({rel}/{target.name})", ""]
    written.append(atomic_write_text(page, "\n".join(lines)))
    return written


def main(argv: list[str]) -> int:
    if len(argv) != 3:
        print("usage: python -m spbench.report.gallery PLOTS FIGURES_DIR PAGE", file=sys.stderr)
        return 2
    try:
        paths = build_gallery(Path(argv[0]), Path(argv[1]), Path(argv[2]))
    except (ValueError, OSError) as exc:
        print(f"spbench gallery: {exc}", file=sys.stderr)
        return 2
    print(f"spbench gallery: {len(paths) - 1} figures and {paths[-1]}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
