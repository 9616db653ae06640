"""The papers' claims, one by one (`make claims`): every quantitative or ordering claim of both
papers beside this run's value, with a verdict and its reason, on one page, ``PLOTS/claims/REPORT.md``.

The shared engine: a :class:`Claim` (where the paper says it, the quantity, the paper's value or
ordering, its conditions, and a function computing ours from a DataFrame of result rows), the
verdict kinds (:data:`VERDICTS`) with the judges that give them, running claims over rows and
writing the page. It imports no experiment: each experiment's claims live in
``spbench.<experiment>.report.claims`` (``TITLE``, ``EXPERIMENT``, ``CLAIMS``), found through the
registry's experiment names.

Verdicts: *reproduced* (within the stated tolerance, or the same ordering in every case), *partly*
(which part: the cases that hold, or the same side of 1 but outside the tolerance), *not reproduced*
(by how much), *not measurable* (what is missing: rows, core counts or rank counts, real data, the
machine). Measured and simulated rows are never pooled: a claim is judged on the measured rows
first, then on the simulated ones, then on schedule-only rows; the first that can measure it gives
the verdict and the page says which, with the other's verdict where it differs. Stand-ins
(``dataset_source`` synthetic) are named in the reason; a claim about absolute sizes of the paper's
data sets (seconds, megabytes) is not measurable on stand-ins alone.

The cost model's own error beside the verdicts it decides: an experiment's claims module may name
``MODEL_VALIDATION``, a function of ALL the rows read (the validation benchmarks' rows included)
returning, per modelled component (a column such as ``ttm_time``), one line saying how far the model
was from measurement on that component where it was validated here (or that it was not). A verdict
given on simulated rows whose outcome names the components it rests on (:attr:`Outcome.components`)
gets those lines in its verdict cell (:attr:`Result.validation`).

A second profile of the cost model: an experiment's claims module may name ``MODEL_PROFILE``, a
function of its rows returning a :class:`ModelProfile` (its simulated rows re-modelled under
another machine's costs, beside the same rows under this machine's, and a page section saying how
that profile was found). The claims whose verdict rests on the columns it changes (the verdict on
the rows differs once those columns are blanked) get both verdicts side by side in that section.
"""
from __future__ import annotations

import argparse
import importlib
import math
import sys
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Callable

import pandas as pd

__all__ = ["VERDICTS", "Claim", "Outcome", "Result", "unmeasurable", "within", "judge_value", "judge_range",
           "judge_cases", "judge_cells", "evaluate", "counts", "render", "paper_modules", "read_rows", "main",
           "ModelProfile", "profile_verdicts", "profile_section", "attach_validation"]

REPRODUCED, PARTLY, NOT, UNMEASURABLE = "reproduced", "partly", "not reproduced", "not measurable"
VERDICTS = (REPRODUCED, PARTLY, NOT, UNMEASURABLE)
#: the order executions are tried in: measured evidence first, then the cost model, then schedules only
EXECUTION_ORDER = ("measured", "simulated", "schedule")
EXECUTION_NAME = {"measured": "measured", "simulated": "simulated (cost model)", "schedule": "schedules only"}
#: ``--scale`` in the order a claim is judged on: the matrices' own sizes, the configs' sizes, the quick pass
SCALE_ORDER = ("paper", "full", "small")
#: what a claim's function may raise on rows it cannot use: the claim is then not measurable, saying why
COMPUTE_ERRORS = (ValueError, KeyError, TypeError, IndexError, ArithmeticError)


@dataclass(frozen=True)
class Outcome:
    """One claim's verdict on some rows: the verdict, our value as text, the reason, the rows the
    value comes from (their provenance is added to the reason) and, optionally, what would settle it."""

    verdict: str
    ours: str
    reason: str
    rows: pd.DataFrame | None = None
    settle: str = ""
    #: the modelled components (columns) the verdict rests on, as its reason names them
    components: tuple = ()


@dataclass(frozen=True)
class Claim:
    """A quantitative or ordering claim of a paper and how to compute ours from result rows."""

    id: str
    where: str  # its quote's location: section, figure, table
    quantity: str
    paper: str  # the paper's value or ordering, as printed
    conditions: str  # machine, cores or ranks, K, data set
    compute: Callable[[pd.DataFrame], Outcome]
    tolerance: str = ""
    settle: str = ""  # what would settle it where not reproduced or not measurable, with the command
    needs_real: bool = False  # absolute sizes of the paper's data sets: stand-ins cannot measure it


@dataclass(frozen=True)
class Result:
    claim: Claim
    outcome: Outcome
    execution: str = ""  # the rows' execution that gave the verdict ("" when none could)
    validation: tuple = ()  # the cost model's validation error of each component the verdict rests on


@dataclass(frozen=True)
class ModelProfile:
    """An experiment's cost model under a second machine profile (its claims module's
    ``MODEL_PROFILE(rows)``): ``rows`` are the simulated rows re-modelled under it, ``baseline`` the
    same rows under this machine's calibration (None, both, when no profile could be found), ``columns``
    the columns the profile changes, ``lines`` the section's Markdown (the profile and how it was
    found), ``label`` and ``base_label`` the two verdict columns' names."""

    title: str
    lines: tuple
    rows: pd.DataFrame | None = None
    baseline: pd.DataFrame | None = None
    columns: tuple = ()
    label: str = "second profile"
    base_label: str = "this machine's calibration"


def unmeasurable(missing: str, rows: pd.DataFrame | None = None, ours: str = "–") -> Outcome:
    """Not measurable: ``missing`` says what is missing."""
    return Outcome(UNMEASURABLE, ours, missing, rows)


def fmt(v: float) -> str:
    """A number for the page: three significant digits."""
    return "–" if v is None or not math.isfinite(v) else f"{v:.3g}"


def within(ours: float, paper: float, tol: float) -> bool:
    """Whether positive ``ours`` is within a factor ``1 + tol`` of ``paper`` (either way)."""
    if not (ours > 0 and paper > 0 and math.isfinite(ours)):
        return False
    return max(ours / paper, paper / ours) <= 1 + tol + 1e-12


def off_by(ours: float, paper: float) -> str:
    """``ours`` against ``paper`` as a signed relative difference: "+42%", "−18%"."""
    return f"{ours / paper - 1:+.0%}".replace("-", "−")


def judge_value(ours: float, paper: float, tol: float, rows=None, *, side: float | None = 1.0,
                where: str = "") -> Outcome:
    """A number against the paper's: reproduced within a factor ``1 + tol``; partly when outside it
    but on the paper's side of ``side`` (a speed-up still above 1); else not reproduced, by how much."""
    text = fmt(ours) + (f" ({where})" if where else "")
    if not math.isfinite(ours):
        return unmeasurable("no finite value in the rows", rows)
    if within(ours, paper, tol):
        return Outcome(REPRODUCED, text, f"{off_by(ours, paper)} from the paper's {fmt(paper)}, within ±{tol:.0%}",
                       rows)
    if side is not None and (ours > side) == (paper > side):
        return Outcome(PARTLY, text, f"same side of {side:g} as the paper's {fmt(paper)} but {off_by(ours, paper)}, "
                                     f"outside ±{tol:.0%}", rows)
    return Outcome(NOT, text, f"{off_by(ours, paper)} from the paper's {fmt(paper)}"
                              + (f", on the other side of {side:g}" if side is not None else ""), rows)


def judge_range(lo: float, hi: float, paper_lo: float, paper_hi: float, tol: float, rows=None) -> Outcome:
    """A range against the paper's: both ends within ``1 + tol`` reproduced; overlapping partly;
    disjoint not reproduced."""
    text = f"{fmt(lo)}–{fmt(hi)}"
    span = f"the paper's {fmt(paper_lo)}–{fmt(paper_hi)}"
    if within(lo, paper_lo, tol) and within(hi, paper_hi, tol):
        return Outcome(REPRODUCED, text, f"both ends within ±{tol:.0%} of {span}", rows)
    if lo <= paper_hi * (1 + tol) and hi >= paper_lo / (1 + tol):
        return Outcome(PARTLY, text, f"overlaps {span}; low end {off_by(lo, paper_lo)}, high end "
                                     f"{off_by(hi, paper_hi)}", rows)
    gap = lo / paper_hi if lo > paper_hi else hi / paper_lo
    return Outcome(NOT, text, f"disjoint from {span} ({off_by(gap, 1.0)} beyond it)", rows)


def judge_cases(cases: dict, rows=None, *, noun: str = "cases") -> Outcome:
    """An ordering checked case by case, ``cases``: name → (holds, detail). All hold: reproduced;
    some: partly, naming those that do not; none: not reproduced."""
    if not cases:
        return unmeasurable(f"no {noun} in the rows", rows)
    failing = [f"{name}: {detail}" if detail else str(name) for name, (ok, detail) in cases.items() if not ok]
    held = len(cases) - len(failing)
    ours = f"holds in {held} of {len(cases)} {noun}"
    if not failing:
        shown = "; ".join(f"{n}: {d}" for n, (_, d) in list(cases.items())[:3] if d)
        return Outcome(REPRODUCED, ours, f"the same ordering in every one of {len(cases)} {noun}"
                       + (f" ({shown}{'; …' if len(cases) > 3 else ''})" if shown else ""), rows)
    shown = "; ".join(failing[:4]) + ("; …" if len(failing) > 4 else "")
    return Outcome(PARTLY if held else NOT, ours, f"fails in {len(failing)}: {shown}", rows)


def judge_cells(cells: list, tol: float, rows=None) -> Outcome:
    """A printed table cell by cell, ``cells``: (name, ours, paper). All within ``1 + tol``:
    reproduced; some: partly; none: not reproduced; the worst cell named."""
    cells = [(n, o, p) for n, o, p in cells if p is not None and o is not None and math.isfinite(o) and o > 0]
    if not cells:
        return unmeasurable("no cell of the paper's table in the rows", rows)
    inside = [c for c in cells if within(c[1], c[2], tol)]
    worst = max(cells, key=lambda c: abs(math.log(c[1] / c[2])))
    ours = f"{len(inside)} of {len(cells)} cells within ±{tol:.0%}"
    reason = f"worst {worst[0]}: {fmt(worst[1])} vs {fmt(worst[2])} ({off_by(worst[1], worst[2])})"
    verdict = REPRODUCED if len(inside) == len(cells) else PARTLY if inside else NOT
    return Outcome(verdict, ours, reason, rows)


# -- running claims over rows -----------------------------------------------------------------------
def _scales(df: pd.DataFrame) -> pd.Series:
    """Each row's ``--scale`` (its settings'; ``full`` when it names none)."""
    if "settings" not in df.columns:
        return pd.Series("full", index=df.index)
    return df["settings"].map(lambda s: str(s.get("scale") or "full") if isinstance(s, dict) else "full")


def execution_name(kind: str) -> str:
    """How the page names a kind of rows: the execution, and the scale unless it is ``full``."""
    execution, _, scale = kind.partition(" @ ")
    return EXECUTION_NAME.get(execution, execution) + (f", --scale {scale}" if scale else "")


def _executions(df: pd.DataFrame) -> list[tuple[str, pd.DataFrame]]:
    """The rows split by ``execution`` (rows without one count as measured) and by ``--scale`` (the
    same data set at two sizes is never pooled), in :data:`EXECUTION_ORDER`, then :data:`SCALE_ORDER`."""
    if df.empty:
        return [("", df)]
    kinds = df["execution"].astype(object).where(df["execution"].notna(), "measured").astype(str) \
        if "execution" in df.columns else pd.Series("measured", index=df.index)
    scales = _scales(df)
    kinds = kinds + scales.map(lambda s: "" if s == "full" else f" @ {s}")

    def rank(kind):
        execution, _, scale = kind.partition(" @ ")
        return (EXECUTION_ORDER.index(execution) if execution in EXECUTION_ORDER else 9,
                SCALE_ORDER.index(scale or "full") if (scale or "full") in SCALE_ORDER else 9, kind)
    return [(k, df[kinds == k]) for k in sorted(set(kinds), key=rank)]


def provenance(rows: pd.DataFrame | None) -> str:
    """What the rows behind a value are: their data sets (real or stand-in), the cost model's
    extrapolated core counts, oversubscribed measurements, the results folders."""
    if rows is None or rows.empty or "dataset" not in rows:
        return ""
    first = rows.drop_duplicates("dataset")
    synthetic = (first["dataset_source"].astype(str) == "synthetic") if "dataset_source" in first else \
        pd.Series(False, index=first.index)
    parts = []
    if (~synthetic).any():
        parts.append(f"{int((~synthetic).sum())} real data set{'s' if (~synthetic).sum() != 1 else ''}")
    if synthetic.any():
        parts.append(f"{int(synthetic.sum())} stand-in{'s' if synthetic.sum() != 1 else ''} (synthetic)")
    for column, what in (("model_extrapolated", "extrapolated beyond the calibration's core counts"),
                         ("oversubscribed", "measured oversubscribed (time slices, not costs)")):
        if column in rows:
            n = int(rows[column].fillna(False).astype(bool).sum())
            if n:
                parts.append(f"{n} rows {what}")
    if "results_folder" in rows:
        folders = sorted(set(rows["results_folder"].dropna().astype(str)))
        parts.append("from " + ", ".join(folders[:4]) + (" …" if len(folders) > 4 else ""))
    return "; ".join(parts)


def _all_standins(rows: pd.DataFrame | None) -> bool:
    return rows is not None and not rows.empty and "dataset_source" in rows and \
        bool((rows["dataset_source"].astype(str) == "synthetic").all())


def _run(claim: Claim, rows: pd.DataFrame) -> Outcome:
    try:
        out = claim.compute(rows)
    except COMPUTE_ERRORS as exc:
        return unmeasurable(f"could not compute from these rows ({type(exc).__name__}: {exc})")
    if claim.needs_real and out.verdict != UNMEASURABLE and _all_standins(out.rows):
        return replace(out, verdict=UNMEASURABLE, reason=f"needs the paper's real data sets: the value comes "
                                                         f"from stand-ins, not comparable in size ({out.reason})")
    return out


def evaluate(claims, df: pd.DataFrame) -> list[Result]:
    """Each claim's verdict on ``df``: judged on each execution's rows in :data:`EXECUTION_ORDER` (and
    each scale's in :data:`SCALE_ORDER`), the first that can measure it giving the verdict (the
    others' differing verdicts noted)."""
    results = []
    for claim in claims:
        tried = [(kind, _run(claim, rows)) for kind, rows in _executions(df)]
        measured = [(k, o) for k, o in tried if o.verdict != UNMEASURABLE]
        if not measured:
            kind, out = tried[0]
            reasons = list(dict.fromkeys(o.reason for _, o in tried))
            out = replace(out, reason="; ".join(reasons))
            results.append(Result(claim, out, ""))
            continue
        kind, out = measured[0]
        others = [f"{execution_name(k)} rows: {o.verdict} ({o.ours})" for k, o in measured[1:]
                  if o.verdict != out.verdict]
        if others:
            out = replace(out, reason=out.reason + "; " + "; ".join(others))
        results.append(Result(claim, out, kind))
    return results


def attach_validation(results: list[Result], lines: dict) -> list[Result]:
    """``results`` with, for every verdict given on simulated rows that rests on modelled components,
    each such component's validation line from ``lines`` (component → text; a component it lacks
    gets none): the model's error on what decides the verdict, printed beside it."""
    out = []
    for r in results:
        simulated = r.execution.partition(" @ ")[0] == "simulated"
        found = tuple(lines[c] for c in dict.fromkeys(r.outcome.components) if c in lines) if simulated else ()
        out.append(replace(r, validation=found))
    return out


def profile_verdicts(claims, profile: ModelProfile) -> list[tuple[Claim, Outcome, Outcome]]:
    """(claim, verdict on ``profile.baseline``, verdict on ``profile.rows``) for every claim whose
    verdict rests on ``profile.columns``: its outcome on the baseline rows changes when those
    columns are blanked. Empty without a profile."""
    if profile.rows is None or profile.baseline is None or profile.baseline.empty:
        return []
    base = evaluate(claims, profile.baseline)
    blank = profile.baseline.assign(**{c: float("nan") for c in profile.columns if c in profile.baseline})
    without = evaluate(claims, blank)
    other = evaluate(claims, profile.rows)
    key = lambda o: (o.verdict, o.ours, o.reason)  # noqa: E731
    return [(b.claim, b.outcome, o.outcome) for b, w, o in zip(base, without, other)
            if key(b.outcome) != key(w.outcome)]


def profile_section(claims, profile: ModelProfile) -> list[str]:
    """The profile's page section: its own lines, then each claim resting on the columns it changes
    with the verdict under this machine's calibration and under the profile, and the changes."""
    lines = [f"## {profile.title}", "", *profile.lines]
    pairs = profile_verdicts(claims, profile)
    if not pairs:
        return lines + ([""] if profile.rows is None else
                        ["", "No claim's verdict rests on the columns the profile changes in these rows.", ""])
    base, other = counts(Result(c, b) for c, b, _ in pairs), counts(Result(c, o) for c, _, o in pairs)
    changed = [f"`{c.id}` {b.verdict} → {o.verdict}" for c, b, o in pairs if b.verdict != o.verdict]
    lines += ["", f"{len(pairs)} claims rest on the modelled times ({', '.join(profile.columns)}) of these rows. "
              f"Under {profile.base_label}: {_count_line(base)}; under the {profile.label}: {_count_line(other)}. "
              + (f"Verdicts that change: {'; '.join(changed)}." if changed else "No verdict changes."), "",
              f"| claim | paper | verdict, {profile.base_label} | ours | verdict, {profile.label} | ours | reason, "
              f"{profile.label} |", "|---|---|---|---|---|---|---|"]
    for c, b, o in pairs:
        lines.append("| " + " | ".join(_cell(x) for x in (f"`{c.id}` {c.quantity}", c.paper, f"**{b.verdict}**",
                                                          b.ours, f"**{o.verdict}**", o.ours, o.reason)) + " |")
    return lines + [""]


def counts(results) -> dict:
    """Verdict → number of claims, every kind present (0 when none)."""
    found = {v: 0 for v in VERDICTS}
    for r in results:
        found[r.outcome.verdict] += 1
    return found


# -- the page -----------------------------------------------------------------------------------------
def _cell(text) -> str:
    return str(text).replace("|", "\\|").replace("\n", " ")


def _count_line(found: dict) -> str:
    return ", ".join(f"{found[v]} {v}" for v in VERDICTS)


def render(sections: list, sources: list, notes: list | None = None, extra: list | None = None) -> str:
    """The page: a count at the top, then one table per paper; ``sections``: (title, results);
    ``extra``: more sections' Markdown lines after the tables (:func:`profile_section`)."""
    everything = [r for _, results in sections for r in results]
    lines = ["# The papers' claims beside ours", "",
             f"**{len(everything)} claims: {_count_line(counts(everything))}.**", "",
             "Rows read: " + (", ".join(f"`{s}`" for s in sources) or "none") + ".", "",
             "Verdicts: *reproduced* within the stated tolerance or with the same ordering in every case; *partly* "
             "(which part); *not reproduced* (by how much); *not measurable* (what is missing). A claim is judged on "
             "measured rows first, else on simulated (cost model) rows, else on schedule-only rows; which one is "
             "in the verdict column, and beside a verdict on simulated rows the cost model's validation error on "
             "each component the verdict rests on, where this machine measured it. The paper's machines (a "
             "Power-8 cluster; ARM Kunpeng 920, x86 EPYC 7763, x86 Xeon 6238T) are not this one: every value is this machine's or its cost model's.", ""]
    lines += [f"- {n}" for n in notes or []] + ([""] if notes else [])
    for title, results in sections:
        lines += [f"## {title}", "", f"{len(results)} claims: {_count_line(counts(results))}.", "",
                  "| claim | where | paper | conditions | ours | verdict | reason | would settle it |",
                  "|---|---|---|---|---|---|---|---|"]
        for r in results:
            c, o = r.claim, r.outcome
            verdict = f"**{o.verdict}**" + (f" ({execution_name(r.execution)})" if r.execution else "")
            verdict += "".join(f"; {line}" for line in r.validation)
            reason = o.reason + (f" [rows: {provenance(o.rows)}]" if provenance(o.rows) else "")
            reason += f" Tolerance: {c.tolerance}." if c.tolerance else ""
            settle = "" if o.verdict == REPRODUCED else (o.settle or c.settle)
            lines.append("| " + " | ".join(_cell(x) for x in (f"`{c.id}` {c.quantity}", c.where, c.paper,
                                                                  c.conditions, o.ours, verdict, reason, settle))
                         + " |")
        lines.append("")
    for more in extra or []:
        lines += more
    return "\n".join(lines)


def paper_modules() -> list:
    """Each experiment's claims module (``spbench.<name>.report.claims``), found through the
    registry's names: this module names no experiment."""
    from spbench.experiment_registry import EXPERIMENTS

    found = []
    for name in EXPERIMENTS:
        try:
            found.append(importlib.import_module(f"spbench.{name}.report.claims"))
        except ModuleNotFoundError as exc:
            if exc.name != f"spbench.{name}.report.claims":
                raise
    return found


def read_rows(paths) -> tuple[pd.DataFrame, list[str], list[str]]:
    """The rows of every sweep folder under ``paths`` as one frame (column ``results_folder`` added),
    the folders read and one note per fragment or folder left out."""
    from spbench.store.results import find_result_dirs, stored_rows

    rows, sources, notes = [], [], []
    for path in paths:
        for folder in find_result_dirs(path):
            corrupt: list = []
            try:
                found = [dict(row, results_folder=folder.name) for _, row in stored_rows(folder, corrupt=corrupt)]
            except ValueError as exc:  # rows of another schema version
                notes.append(f"left out {folder}: {exc}")
                continue
            notes += [f"left out: {c}" for c in corrupt]
            rows += found
            sources.append(str(folder))
    return pd.DataFrame(rows), sources, notes


def write_page(paths, out_dir) -> tuple[Path, dict]:
    """Read the rows under ``paths``, judge every paper's claims and write ``out_dir/REPORT.md``
    atomically; the page's path and the counts."""
    from spbench.store.atomic_files import atomic_write_text

    df, sources, notes = read_rows(paths)
    sections, extra = [], []
    for module in paper_modules():
        rows = df[df["experiment"] == module.EXPERIMENT] if "experiment" in df else df.iloc[0:0]
        results = evaluate(module.CLAIMS, rows.reset_index(drop=True))
        validation = getattr(module, "MODEL_VALIDATION", None)
        if validation is not None:
            results = attach_validation(results, validation(df))
        sections.append((module.TITLE, results))
        hook = getattr(module, "MODEL_PROFILE", None)
        if hook is not None:
            extra.append(profile_section(module.CLAIMS, hook(rows.reset_index(drop=True))))
    if not sources:
        notes.insert(0, "no sweep folder (one with runs/) under " + ", ".join(map(str, paths)))
    page = Path(out_dir) / "REPORT.md"
    atomic_write_text(page, render(sections, sources, notes, extra) + "\n")
    return page, counts([r for _, results in sections for r in results])


def main(argv=None) -> int:
    """``python -m spbench.report.claims RESULTS... --out PLOTS/claims``; exit 2 for a missing folder."""
    parser = argparse.ArgumentParser(prog="python -m spbench.report.claims",
                                     description="Every claim of both papers beside this run's value, with a verdict.")
    parser.add_argument("results", nargs="+", help="results folders (sweep folders, or folders holding them)")
    parser.add_argument("--out", required=True, help="folder the page REPORT.md is written into")
    args = parser.parse_args(argv)
    missing = [p for p in args.results if not Path(p).is_dir()]
    if missing:
        print(f"spbench claims: no results folder {', '.join(missing)}", file=sys.stderr)
        return 2
    try:
        page, found = write_page(args.results, args.out)
    except OSError as exc:
        print(f"spbench claims: {exc}", file=sys.stderr)
        return 2
    print(f"{page}: {sum(found.values())} claims, {_count_line(found)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
