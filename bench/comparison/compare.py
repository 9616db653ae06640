"""`spbench compare BASE NEW`: is a difference between two result folders real?

Rows are matched by point identity (experiment, data set, execution and the sweep's axes). A
point's runs are its rows, each summarised by the median of its repetitions; per point the ratio
NEW/BASE of the runs' geometric means with a t-interval on the runs' log-medians, the p-value of a
change beyond the threshold, Benjamini–Hochberg over all tested points
(:mod:`spbench.comparison.statistics`). A point with one run on a side is inconclusive. Over all
matched points: the geometric-mean ratio with its interval. Folders measured on different machines
are refused unless asked for; both sides' machine load (meta.json's ``load``) is shown. A fragment
that holds no row, or a row not as its kind declares, is left out and listed with its file
(:mod:`spbench.report.row_check`); the other rows are compared.
"""
from __future__ import annotations

import json
import math
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd

from spbench.comparison.statistics import (CONFIDENCE, FDR, MIN_RUNS, adjusted_p_values, compare_point,
                                        geomean_interval, verdict)
from spbench.experiment_registry import ROW_KINDS, get_row_kind
from spbench.machine.load import describe
from spbench.report.intervals import raw_samples
from spbench.report.labels import dataset_display
from spbench.report.row_check import compare_problems, rows_read
from spbench.report.tables import format_markdown, write_text

#: a metric whose rows keep their raw repetitions in another column
RAW_COLUMNS = {"solve_time": "solve_times", "time": "times"}
#: metrics where a larger value is better (every time, volume and memory is smaller-is-better)
HIGHER_IS_BETTER = frozenset({"fit", "bandwidth", "gflops", "elements_per_s"})
#: machine facts that must agree for timings to compare
MACHINE_KEYS = ("host", "cpu", "arch")


class CompareError(ValueError):
    """Bad input: one line naming the folder and what was expected."""


@dataclass
class Folder:
    """One results folder: its ok and failed rows, its meta.json and a line per fragment left out."""

    path: Path
    rows: pd.DataFrame
    meta: dict
    left_out: list = field(default_factory=list)

    @property
    def experiment(self) -> str:
        return str(self.rows["experiment"].dropna().iloc[0])

    def machines(self) -> set[tuple]:
        """(host, cpu, arch) of meta.json's machine, of machines it lists as others, and the rows' hosts."""
        entries = [self.meta.get("machine", {}), *self.meta.get("other_machines", [])]
        found = {tuple(str(m.get(k, "")) for k in MACHINE_KEYS) for m in entries if isinstance(m, dict)}
        main = self.meta.get("machine", {})
        if "host" in self.rows.columns:
            for host in set(self.rows["host"].dropna().astype(str)) - {m[0] for m in found}:
                found.add((host, str(main.get("cpu", "")), str(main.get("arch", ""))))
        return found

    def axes(self) -> list[str]:
        sweep = (self.meta.get("config") or {}).get("sweep")
        if isinstance(sweep, dict):
            return list(sweep)
        if self.experiment not in ROW_KINDS:  # no declared axes: data set and execution name a point
            return []
        return [a for a in get_row_kind(self.experiment).identity_axes() if a in self.rows.columns]

    def commits(self) -> str:
        shas = sorted(set(self.rows["git_sha"].dropna().astype(str).str[:10])) if "git_sha" in self.rows else []
        dirty = "git_dirty" in self.rows and self.rows["git_dirty"].fillna(False).astype(bool).any()
        return (", ".join(shas) or "unknown commit") + (" (dirty tree)" if dirty else "")

    def config_name(self) -> str:
        name = (self.meta.get("config") or {}).get("name")
        if not name and "config" in self.rows:
            name = ", ".join(sorted(set(self.rows["config"].dropna().astype(str))))
        return str(name or "unnamed")

    def load(self) -> dict | None:
        """meta.json's record of the machine's load during the sweep (None when it has none)."""
        load = self.meta.get("load")
        return load if isinstance(load, dict) else None


def read_folder(path) -> Folder:
    """A results folder of one sweep (runs/ and meta.json, as `spbench run` writes it); a fragment that
    holds no row, a row not as its kind declares or of another experiment is left out, with its line."""
    path = Path(path)
    expected = "expected a results folder of one sweep (runs/*.json and meta.json, as `spbench run` writes)"
    if not (path / "runs").is_dir():
        raise CompareError(f"{path}: no runs/ folder; {expected}")
    try:
        meta = json.loads((path / "meta.json").read_text())
    except FileNotFoundError:
        raise CompareError(f"{path}: no meta.json (machine facts); {expected}") from None
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise CompareError(f"{path}/meta.json: not readable JSON ({exc}); {expected}") from None
    if not isinstance(meta, dict):
        raise CompareError(f"{path}/meta.json: expected a JSON object of machine facts")
    read, left_out = [], []
    for frag in sorted((path / "runs").glob("*.json")):
        try:
            read.append((frag, json.loads(frag.read_bytes().decode("utf-8"))))
        except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
            left_out.append(f"{frag}: not a valid result fragment ({exc})")
    config = meta.get("config")
    sweep = config.get("sweep") if isinstance(config, dict) else None
    axes = [a for a in sweep if any(isinstance(row, dict) and a in row for _, row in read)] \
        if isinstance(sweep, dict) else []  # an axis some rows carry names every row's point
    df = pd.DataFrame(rows_read(read, meta, lambda row: compare_problems(row, axes), left_out))
    if df.empty:
        gone = f" ({len(left_out)} left out, the first: {left_out[0]})" if left_out else ""
        raise CompareError(f"{path}: no result rows{gone}; {expected}")
    return Folder(path, df, meta, left_out)


def point_columns(base: Folder, new: Folder) -> list[str]:
    """experiment, dataset, execution, then every sweep axis either folder has in its rows."""
    axes = []
    for a in [*base.axes(), *new.axes()]:
        if a not in axes and a in base.rows.columns and a in new.rows.columns:
            axes.append(a)
    return ["experiment", "dataset", "execution", *axes]


def pick_metric(base: Folder, new: Folder, metric: str | None) -> str:
    """The metric asked for, or the experiment's default present in both folders' ok rows."""
    candidates = (metric,) if metric else _default_metrics(base.experiment)
    for m in candidates:
        missing = [f for f in (base, new) if not _has_values(f.rows, m)]
        if not missing:
            return m
        if metric:
            have = sorted(c for c in missing[0].rows.columns if _has_values(missing[0].rows, c)
                          and c.endswith(("_time", "_volume", "_mb")))
            raise CompareError(f"{missing[0].path}: no ok row with a positive {metric}; expected one of "
                               f"the metrics its rows hold: {', '.join(have) or 'none'}")
    raise CompareError(f"{(missing or [base])[0].path}: no ok row with a positive "
                       f"{' or '.join(candidates)}; expected measured rows (pass --metric)")


def _default_metrics(experiment: str) -> tuple:
    """The metrics compared when none is asked for: those the rows' kind declares."""
    return _row_kind(experiment).compare_metrics


def _row_kind(experiment: str):
    """The kind of rows (:mod:`spbench.experiment_registry`); CompareError when none is registered."""
    if experiment not in ROW_KINDS:
        raise CompareError(f"rows of experiment {experiment!r}; expected one of {', '.join(ROW_KINDS)} "
                           f"(or pass --metric)")
    return get_row_kind(experiment)


def _has_values(rows: pd.DataFrame, metric: str) -> bool:
    if metric not in rows.columns:
        return False
    ok = rows[rows["status"] == "ok"]
    return bool((pd.to_numeric(ok[metric], errors="coerce") > 0).any())


def run_values(folder: Folder, keys: list[str], metric: str) -> dict[tuple, np.ndarray]:
    """Per point, one value per run (ok row): the median of its raw repetitions (``solve_times``),
    or the metric itself where the row keeps none."""
    ok = folder.rows[folder.rows["status"] == "ok"].copy()
    for k in keys:
        ok[k] = ok[k].astype(object).where(ok[k].notna(), "").astype(str)
    raw = RAW_COLUMNS.get(metric)
    out = {}
    for key, part in ok.groupby(keys, sort=True):
        values = []
        for _, row in part.iterrows():
            reps = raw_samples(row[raw]) if raw and raw in part.columns else np.empty(0)
            value = float(np.median(reps)) if reps.size else pd.to_numeric(row.get(metric), errors="coerce")
            if value is not None and np.isfinite(value) and value > 0:
                values.append(float(value))
        if values:
            out[key] = np.asarray(values)
    return out


@dataclass
class Comparison:
    """What `spbench compare` found: the per-point table, the geometric mean and the unmatched points."""

    base: Folder
    new: Folder
    metric: str
    threshold: float
    fdr: float
    keys: list[str]
    table: pd.DataFrame
    geomean: tuple[float, float, float]
    only_base: list[tuple] = field(default_factory=list)
    only_new: list[tuple] = field(default_factory=list)
    cross_machine: bool = False

    def count(self, name: str) -> int:
        return int((self.table["flag"] == name).sum())

    @property
    def regressions(self) -> int:
        return self.count("regression")


def compare(base_path, new_path, *, metric: str | None = None, threshold: float = 0.05, fdr: float = FDR,
            cross_machine: bool = False) -> Comparison:
    """Compare two results folders; CompareError for bad input, no matched point, or different
    machines (unless allowed)."""
    base, new = read_folder(base_path), read_folder(new_path)
    if base.experiment != new.experiment:
        raise CompareError(f"{new.path}: rows of experiment {new.experiment}; expected {base.experiment} "
                           f"like {base.path}")
    if not threshold >= 0:
        raise CompareError(f"--threshold: expected a non-negative fraction such as 5% or 0.05, got {threshold}")
    if not 0 < fdr < 1:
        raise CompareError(f"--fdr: expected a rate between 0 and 1 such as 5% or 0.05, got {fdr}")
    differ = base.machines() != new.machines()
    if differ and not cross_machine:
        raise CompareError(f"{new.path}: measured on {_machines_text(new)}, {base.path} on "
                           f"{_machines_text(base)}; expected the same machine (pass --cross-machine "
                           f"to compare anyway)")
    metric = pick_metric(base, new, metric)
    keys = point_columns(base, new)
    a, b = run_values(base, keys, metric), run_values(new, keys, metric)
    matched = sorted(set(a) & set(b))
    if not matched:
        raise CompareError(f"{new.path}: none of its {len(b)} points (config {new.config_name()}) matches one of "
                           f"the {len(a)} of {base.path} (config {base.config_name()}) by "
                           f"{', '.join(k for k in keys if k != 'experiment')}; expected two sweeps over the "
                           f"same points")
    tests = [compare_point(a[key], b[key], threshold) for key in matched]
    adjusted = adjusted_p_values(tests)
    sources = _sources(base, new)
    records = []
    for key, t, p_adj in zip(matched, tests, adjusted):
        rec = dict(zip(keys, key))
        rec["dataset"] = dataset_display(rec["dataset"], sources.get(rec["dataset"]))
        rec.update({"metric": metric, "runs_base": t.runs_base, "runs_new": t.runs_new,
                    "base_median": _geomean(a[key]), "new_median": _geomean(b[key]),
                    "ratio": t.ratio, "ci_low": t.low, "ci_high": t.high, "p_value": t.p_value,
                    "p_adjusted": p_adj, "flag": verdict(t, p_adj, fdr, metric in HIGHER_IS_BETTER)})
        records.append(rec)
    table = pd.DataFrame(records).drop(columns=["experiment"])
    return Comparison(base, new, metric, threshold, fdr, keys, table, geomean_interval(tests),
                      sorted(set(a) - set(b)), sorted(set(b) - set(a)), differ)


def _geomean(values: np.ndarray) -> float:
    return float(np.exp(np.mean(np.log(values))))


def _sources(base: Folder, new: Folder) -> dict[str, str]:
    rows = pd.concat([base.rows, new.rows], ignore_index=True)
    if "dataset_source" not in rows:
        return {}
    return rows.dropna(subset=["dataset_source"]).groupby("dataset")["dataset_source"].first().astype(str).to_dict()


def _machines_text(folder: Folder) -> str:
    return " and ".join(f"{h} ({cpu}, {arch})" for h, cpu, arch in sorted(folder.machines()))


def _point_text(keys: list[str], key: tuple, sources: dict[str, str]) -> str:
    return " ".join(dataset_display(v, sources.get(v)) if k == "dataset" else f"{k}={v}"
                    for k, v in zip(keys, key) if k != "experiment")


def load_text(load: dict | None) -> str:
    """meta.json's record of the machine's load in one line (:func:`spbench.machine.load.describe`)."""
    return "load not recorded" if load is None else describe(load)


def busy_sides(c: Comparison) -> list[str]:
    """BASE and/or NEW where meta.json says the machine was busy during the sweep."""
    return [name for name, f in (("BASE", c.base), ("NEW", c.new)) if (f.load() or {}).get("busy")]


def summary_line(c: Comparison) -> str:
    """The counts of the verdicts: flagged (regressions, improvements), inconclusive, unchanged."""
    flagged = c.count("regression") + c.count("improvement")
    return (f"{flagged} flagged ({c.count('regression')} regression(s), {c.count('improvement')} "
            f"improvement(s)), {c.count('inconclusive')} inconclusive, {c.count('unchanged')} unchanged")


def report_lines(c: Comparison) -> list[str]:
    """The Markdown text `spbench compare` prints and writes to compare.md."""
    gm, lo, hi = c.geomean
    up = "larger" if c.metric in HIGHER_IS_BETTER else "smaller"
    tested = int((c.table["flag"] != "inconclusive").sum())
    lines = [f"# spbench compare: {c.metric}, NEW / BASE", "",
             f"- BASE: {c.base.path} (commit {c.base.commits()}, {_machines_text(c.base)}; {load_text(c.base.load())})",
             f"- NEW: {c.new.path} (commit {c.new.commits()}, {_machines_text(c.new)}; {load_text(c.new.load())})",
             f"- Per point: each run's median of its repetitions; ratio of the runs' geometric means with a "
             f"{CONFIDENCE:.0%} t-interval (Welch) on the runs' log-medians; p-value of a change beyond the "
             f"threshold band [1/(1 + {c.threshold:.0%}), 1 + {c.threshold:.0%}], adjusted by "
             f"Benjamini–Hochberg over the {tested} tested points at a false discovery rate of {c.fdr:.0%}. "
             f"A point is flagged when its adjusted p-value is at most {c.fdr:.0%}; a point with fewer than "
             f"{MIN_RUNS} runs on a side is inconclusive (one run has no spread between runs to test "
             f"against). {up.capitalize()} is better for {c.metric}.",
             f"- **{summary_line(c)}** of {len(c.table)} matched points.",
             _geomean_line(c.table, gm, lo, hi)]
    lines.append("- A measured sweep runs a point's runs in passes over the whole sweep: its interval covers "
                 "the machine's changes within a sweep, not a change of state between the two sweeps (other "
                 "work, frequency); read both sides' load above before calling a flagged point real.")
    inconclusive = c.count("inconclusive")
    if inconclusive:
        lines.append(f"- {inconclusive} point(s) inconclusive: needs ≥ {MIN_RUNS} runs per side "
                     f"(`spbench run … --runs {max(MIN_RUNS, 3)}` on both sides).")
    busy = busy_sides(c)
    if busy:
        whose = "their" if len(busy) > 1 else "its"
        lines.append(f"- **Warning: {' and '.join(busy)} ran on a busy machine**: {whose} timings carry other "
                     f"work's share of the cores; rerun on a quiet machine before calling a change real.")
    if c.cross_machine:
        lines.append("- **Cross-machine comparison** (--cross-machine): BASE and NEW ran on different "
                     "machines, so the ratios include the machines' difference, not only the code's.")
    left_out = [*c.base.left_out, *c.new.left_out]
    if left_out:
        lines.append(f"- **{len(left_out)} fragment(s) left out** (no row, or a row not as its kind declares; "
                     f"listed below): their points are compared without them.")
    lines += ["", format_markdown(c.table)]
    sources = _sources(c.base, c.new)
    for name, keys in (("BASE", c.only_base), ("NEW", c.only_new)):
        if keys:
            lines += [f"Points only in {name} ({len(keys)}, not compared):", "",
                      *[f"- {_point_text(c.keys, k, sources)}" for k in keys], ""]
    if left_out:
        lines += [f"Fragments left out ({len(left_out)}):", "", *[f"- {line}; left out of the comparison"
                                                                  for line in left_out], ""]
    return lines


def _geomean_line(table: pd.DataFrame, gm: float, lo: float, hi: float) -> str:
    head = f"- Geometric mean of the ratio over {len(table)} matched points: **{gm:.3f}**"
    if math.isfinite(lo):
        return head + (f" [{lo:.3f}, {hi:.3f}] ({CONFIDENCE:.0%} t-interval over these points' runs, "
                       f"Welch–Satterthwaite).")
    return head + f" (no interval: some points have fewer than {MIN_RUNS} runs on a side)."


def _runs_text(runs: pd.Series) -> str:
    low, high = int(runs.min()), int(runs.max())
    return f"{low} run{'s' if high > 1 else ''}" if low == high else f"{low}-{high} runs"


def write_outputs(c: Comparison, out_dir) -> list[Path]:
    """compare.md, and the figure compare.png/.pdf (ratio per point with its interval) with its
    table compare.csv."""
    from spbench.report.compare_figure import ratio_figure

    out_dir = Path(out_dir)
    written = [write_text(out_dir / "compare.md", "\n".join(report_lines(c)))]
    title = (f"{c.metric}: {c.new.path.name} / {c.base.path.name} ({_runs_text(c.table['runs_base'])} BASE, "
             f"{_runs_text(c.table['runs_new'])} NEW per point; BH at FDR {c.fdr:.0%})")
    written += ratio_figure(c.table, c.keys, c.threshold, title, out_dir / "compare")
    return written
