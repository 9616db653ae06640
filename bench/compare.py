"""`spbench compare BASE NEW`: is a difference between two result folders real?

Rows are matched by point identity (experiment, data set, execution and the sweep's axes). Per
point: the ratio NEW/BASE of medians of a metric with a bootstrap 95% interval over its raw
samples (:mod:`spbench.profile.intervals`) and a Mann–Whitney U p-value; over all matched points
the geometric-mean ratio with its two-stage interval. A point is flagged only when its interval
excludes 1 and its ratio passes the threshold (asv's rule of a noise factor). Folders measured on
different machines are refused unless asked for.
"""
from __future__ import annotations

import json
import math
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd

from spbench.experiment_registry import ROW_KINDS, get_row_kind
from spbench.profile.intervals import (CONFIDENCE, RESAMPLES, SEED, geomean_interval, mann_whitney,
                                       point_samples, ratio_of_medians)
from spbench.profile.labels import dataset_display
from spbench.profile.tables import format_markdown, write_csv, write_text

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
    """One results folder: its ok and failed rows and its meta.json."""

    path: Path
    rows: pd.DataFrame
    meta: dict

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


def read_folder(path) -> Folder:
    """A results folder of one sweep (runs/ and meta.json, as `spbench run` writes it)."""
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
    rows = []
    for frag in sorted((path / "runs").glob("*.json")):
        try:
            rows.append(json.loads(frag.read_text()))
        except (OSError, UnicodeDecodeError, json.JSONDecodeError):
            raise CompareError(f"{frag}: not a valid result fragment; {expected}") from None
    df = pd.DataFrame(rows)
    if df.empty or not {"experiment", "dataset", "status"} <= set(df.columns):
        raise CompareError(f"{path}: no result rows with experiment, dataset and status; {expected}")
    experiments = sorted(set(df["experiment"].dropna().astype(str)))
    if len(experiments) != 1:
        raise CompareError(f"{path}: rows of experiments {experiments}; expected one sweep of one experiment")
    return Folder(path, df, meta)


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


def _runs_per_point(folder: Folder, keys: list[str]) -> int:
    """The fewest ok runs any point of the folder has."""
    ok = folder.rows[folder.rows["status"] == "ok"]
    return int(ok.astype({k: str for k in keys}).groupby(keys).size().min()) if len(ok) else 0


def _samples(folder: Folder, keys: list[str], metric: str) -> dict[tuple, np.ndarray]:
    ok = folder.rows[folder.rows["status"] == "ok"].copy()
    for k in keys:
        ok[k] = ok[k].astype(object).where(ok[k].notna(), "").astype(str)
    out = {}
    for key, part in ok.groupby(keys, sort=True):
        s = point_samples(part, metric, RAW_COLUMNS.get(metric))
        if s.size:
            out[key] = s
    return out


@dataclass
class Comparison:
    """What `spbench compare` found: the per-point table, the geometric mean and the unmatched points."""

    base: Folder
    new: Folder
    metric: str
    threshold: float
    keys: list[str]
    table: pd.DataFrame
    geomean: tuple[float, float, float]
    only_base: list[tuple] = field(default_factory=list)
    only_new: list[tuple] = field(default_factory=list)
    cross_machine: bool = False
    fewest_runs: int = 1

    @property
    def regressions(self) -> int:
        return int((self.table["flag"] == "regression").sum())


def compare(base_path, new_path, *, metric: str | None = None, threshold: float = 0.05,
            cross_machine: bool = False, seed: int = SEED) -> Comparison:
    """Compare two results folders; CompareError for bad input or different machines (unless allowed)."""
    base, new = read_folder(base_path), read_folder(new_path)
    if base.experiment != new.experiment:
        raise CompareError(f"{new.path}: rows of experiment {new.experiment}; expected {base.experiment} "
                           f"like {base.path}")
    if not threshold >= 0:
        raise CompareError(f"--threshold: expected a non-negative fraction such as 5% or 0.05, got {threshold}")
    differ = base.machines() != new.machines()
    if differ and not cross_machine:
        raise CompareError(f"{new.path}: measured on {_machines_text(new)}, {base.path} on "
                           f"{_machines_text(base)}; expected the same machine (pass --cross-machine "
                           f"to compare anyway)")
    metric = pick_metric(base, new, metric)
    keys = point_columns(base, new)
    a, b = _samples(base, keys, metric), _samples(new, keys, metric)
    records, ratios = [], []
    sources = _sources(base, new)
    for i, key in enumerate(sorted(set(a) & set(b))):
        r = ratio_of_medians(a[key], b[key], seed=seed + i)
        ratios.append(r)
        rec = dict(zip(keys, key))
        rec["dataset"] = dataset_display(rec["dataset"], sources.get(rec["dataset"]))
        rec.update({"metric": metric, "n_base": a[key].size, "n_new": b[key].size,
                    "base_median": float(np.median(a[key])), "new_median": float(np.median(b[key])),
                    "ratio": r.value, "ci_low": r.low, "ci_high": r.high,
                    "p_value": mann_whitney(a[key], b[key]),
                    "flag": flag(r.value, r.low, r.high, threshold, metric in HIGHER_IS_BETTER)})
        records.append(rec)
    table = pd.DataFrame(records, columns=[*keys, "metric", "n_base", "n_new", "base_median", "new_median",
                                           "ratio", "ci_low", "ci_high", "p_value", "flag"])
    table = table.drop(columns=[k for k in ("experiment",) if k in table])
    return Comparison(base, new, metric, threshold, keys, table, geomean_interval(ratios, seed=seed),
                      sorted(set(a) - set(b)), sorted(set(b) - set(a)), differ,
                      min(_runs_per_point(base, keys), _runs_per_point(new, keys)))


def flag(ratio: float, low: float, high: float, threshold: float, higher_is_better: bool = False) -> str:
    """"regression", "improvement" or "": the interval excludes 1 and the ratio is beyond 1 + threshold
    (or below 1 / (1 + threshold)); for a larger-is-better metric the names swap."""
    if not (math.isfinite(low) and math.isfinite(high)):
        return ""
    up = low > 1 and ratio > 1 + threshold
    down = high < 1 and ratio < 1 / (1 + threshold)
    if not (up or down):
        return ""
    return "improvement" if up == higher_is_better else "regression"


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


def report_lines(c: Comparison) -> list[str]:
    """The Markdown text `spbench compare` prints and writes to compare.md."""
    gm, lo, hi = c.geomean
    up = "larger" if c.metric in HIGHER_IS_BETTER else "smaller"
    lines = [f"# spbench compare: {c.metric}, NEW / BASE", "",
             f"- BASE: {c.base.path} (commit {c.base.commits()}, {_machines_text(c.base)})",
             f"- NEW: {c.new.path} (commit {c.new.commits()}, {_machines_text(c.new)})",
             f"- Ratio of medians per point; {CONFIDENCE:.0%} bootstrap percentile interval "
             f"({RESAMPLES} resamples) over the raw repetitions, or over the runs where a point has "
             f"several; Mann–Whitney U two-sided p-value. A point is flagged when its interval excludes 1 "
             f"and its ratio is beyond 1 + {c.threshold:.0%} or below 1 / (1 + {c.threshold:.0%}); "
             f"{up} is better for {c.metric}.",
             f"- Geometric mean of the ratio over {len(c.table)} matched points: **{gm:.3f}** "
             f"[{lo:.3f}, {hi:.3f}] (bootstrap over points and repetitions).",
             f"- Flagged: {c.regressions} regression(s), {int((c.table['flag'] == 'improvement').sum())} "
             f"improvement(s)."]
    if c.fewest_runs < 2:
        lines.append("- Points with one run on a side: their intervals cover the spread of that run's "
                     "repetitions, not the drift between two sweeps (machine load, frequency, memory "
                     "placement). Run both sides with `--runs 3` or more to get intervals over runs, or "
                     "raise --threshold.")
    if c.cross_machine:
        lines.append("- **Cross-machine comparison** (--cross-machine): BASE and NEW ran on different "
                     "machines, so the ratios include the machines' difference, not only the code's.")
    lines += ["", format_markdown(c.table)]
    sources = _sources(c.base, c.new)
    for name, keys in (("BASE", c.only_base), ("NEW", c.only_new)):
        if keys:
            lines += [f"Points only in {name} ({len(keys)}, not compared):", "",
                      *[f"- {_point_text(c.keys, k, sources)}" for k in keys], ""]
    return lines


def write_outputs(c: Comparison, out_dir) -> list[Path]:
    """compare.md, compare.csv and the figure compare.png/.pdf (ratio per point with its interval)."""
    from spbench.profile.compare_figure import ratio_figure

    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    written = [write_text(out_dir / "compare.md", "\n".join(report_lines(c))),
               write_csv(c.table, out_dir / "compare.csv")]
    if len(c.table):
        written += ratio_figure(c.table, c.keys, c.threshold, f"{c.metric}: {c.new.path.name} / {c.base.path.name}",
                                out_dir / "compare")
    return written
