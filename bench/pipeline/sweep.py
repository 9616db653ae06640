"""Expand a config into points: the cartesian product of data sets and axes, then include/exclude.

A point is one (data set, axis values, repeat index), its axis values in the experiment's
canonical form (:meth:`spbench.experiment.Experiment.normalize`: serial SpTrSV is one point at one
core); its stable key and its `run_id` (a content hash of the canonical parameters, among them the
experiment's own keys that change a run, the data set checksum and the code version)
let a rerun skip what is already stored.

A measured sweep runs its runs in passes: pass r runs run r of every point, so the runs of one
point are spread over the whole sweep instead of following one another. `spbench compare` takes the
run as its unit of replication: a change of the machine's state (load, frequency) that lasts
minutes then shows as spread between a point's runs, not as a shift of all of them that reads as a
regression (docs/design.md, "Running a point").
"""
from __future__ import annotations

import hashlib
import itertools
import json
from dataclasses import dataclass
from typing import TYPE_CHECKING

from spbench.experiment_registry import get_experiment
from spbench.store.row_schema import SCHEMA_VERSION

if TYPE_CHECKING:  # annotations only: config checks that a sweep keeps a point through expand()
    from spbench.pipeline.config import Config


@dataclass(frozen=True)
class Point:
    """One run to make: a data set, the axis values (algorithm, cores, ...) and the repeat index."""

    dataset: object  # spbench.datasets.dataset.Dataset
    values: tuple  # ((axis, value), ...) in the config's axis order
    repeat: int = 0

    @property
    def axes(self) -> dict:
        return dict(self.values)

    @property
    def label(self) -> str:
        """Human-readable point name for progress lines and --dry-run."""
        vals = " ".join(f"{k}={v}" for k, v in self.values)
        rep = f" repeat={self.repeat}" if self.repeat else ""
        return f"{self.dataset.name} {vals}{rep}"


def _matches(values: dict, dataset_name: str, pattern: dict) -> bool:
    return all((dataset_name == v) if k == "dataset" else (values.get(k) == v) for k, v in pattern.items())


#: executions that time their runs on this machine: their runs go in passes over the sweep
TIMED_EXECUTIONS = frozenset({"measured"})


def expand(config: Config) -> list[Point]:
    """All points of a sweep, in a stable order, each exactly once: every run of a point after the
    other when nothing is timed (a data set's points then run together), run r of every point in
    pass r when the runs are timed (measured)."""
    axes = [a for a, _ in config.sweep]
    combos = [dict(zip(axes, vals)) for vals in itertools.product(*(v for _, v in config.sweep))]
    sites, seen = [], set()
    # an include/exclude item naming an execution applies only when the sweep runs that way (one
    # config holds the measured points this machine can run and the simulated ones beyond it)
    live = lambda items: [{k: v for k, v in it.items() if k != "execution"} for it in items  # noqa: E731
                          if it.get("execution", config.execution) == config.execution]
    exclude, include = live(config.exclude), live(config.include)
    experiment = get_experiment(config.experiment)
    for ds in config.datasets:
        candidates = [c for c in combos if not any(_matches(c, ds.name, ex) for ex in exclude)]
        first = {a: vals[0] for a, vals in config.sweep}  # an include may leave optional axes out
        candidates += [{a: inc.get(a, first[a]) for a in axes} for inc in include
                       if inc.get("dataset", ds.name) == ds.name]
        for values in candidates:
            values = experiment.normalize(values)
            key = (ds.name, tuple((a, values[a]) for a in axes))
            if key in seen:
                continue
            seen.add(key)
            sites.append((ds, key[1]))
    if config.execution in TIMED_EXECUTIONS:
        return [Point(dataset=ds, values=values, repeat=rep) for rep in range(config.runs) for ds, values in sites]
    return [Point(dataset=ds, values=values, repeat=rep) for ds, values in sites for rep in range(config.runs)]


#: environment variables that change a timed row's numbers without changing what it computes:
#: thread binding (sptrsv-elasticity §5.1 pins threads) and what idle OpenMP threads do
TIMING_ENVIRONMENT = ("OMP_PROC_BIND", "OMP_PLACES", "OMP_WAIT_POLICY", "GOMP_SPINCOUNT")


def sweep_settings(config: Config, calibration: dict | None = None, environ=None) -> dict:
    """Everything besides a point's own values that changes the numbers of a sweep's rows, as one
    flat mapping of JSON scalars (stored in every row and in meta.json; a rerun whose settings
    differ from the stored rows' is refused or, with ``--fresh``, replaces them as a whole): the
    timed runs per point, the seed, the scale, every algorithm's parameters and the experiment's
    keys that change a run; timed executions add the keys that change timings (an MPI launcher)
    and the thread binding and wait policy of the environment; simulated ones the content hash of
    the cost model's calibration (None when it models none)."""
    import os

    environ = os.environ if environ is None else environ
    experiment = get_experiment(config.experiment)
    axes = {axis for axis, _ in config.sweep}
    timed = config.execution in TIMED_EXECUTIONS or config.execution == "schedule"
    settings = {"repeats": config.repeats, "seed": config.seed, "scale": config.scale,
                "params": json.dumps(config.params, sort_keys=True, default=str)}
    for key, decl in experiment.options.items():
        if key not in axes and (decl.identity or (timed and decl.timing)):
            settings[key] = config.options[key]
    if timed:
        settings.update({name: environ.get(name) for name in TIMING_ENVIRONMENT})
    else:
        settings["calibration"] = calibration_digest(calibration)
        settings["calibration_forced"] = calibration_forced(calibration)
    return json.loads(json.dumps(settings, default=str))


def calibration_forced(calibration: dict | None) -> str | None:
    """Why a calibration was kept only with `spbench calibrate --force` (measured on a busy
    machine, or a term that cannot be right), None when it was not: every report it feeds says so."""
    terms = (calibration or {}).get("terms") or {}
    load = terms.get("load") if isinstance(terms.get("load"), dict) else {}
    reasons = ([f"measured on a busy machine ({load.get('reason') or 'load above the quiet limit'})"]
               if load.get("busy") else []) + ([str(terms["implausible"])] if terms.get("implausible") else [])
    return "; ".join(reasons) or None


def calibration_digest(calibration: dict | None) -> str | None:
    """A calibration as a row's setting: the hash of its content and when it was measured."""
    if calibration is None:
        return None
    blob = json.dumps(calibration, sort_keys=True, default=str).encode()
    return f"{hashlib.sha256(blob).hexdigest()[:12]} (measured {calibration.get('created', '?')})"


def run_parameters(config: Config, point: Point, settings: dict | None = None) -> dict:
    """The canonical parameters that define a run (what its run_id hashes, besides data and code);
    with the sweep's ``settings`` (:func:`sweep_settings`), those too."""
    axes = point.axes
    params = {
        "experiment": config.experiment,
        "dataset": point.dataset.name,
        "axes": axes,
        "repeat": point.repeat,
        "repeats": config.repeats,
        "execution": config.execution,
        "algorithm_params": config.params.get(axes.get("algorithm"), {}),
        "seed": config.seed,
    }
    # the experiment's own keys that change what a run computes (SpTrSV's barrier; Tucker's HOOI
    # invocations, init, Lanczos iterations (tucker-lite §7.1) and TTM kernel, unless that is an axis)
    declared = get_experiment(config.experiment).options
    params.update({key: config.options[key] for key, decl in declared.items() if decl.identity and key not in axes})
    if config.scale != "full":  # only when not full, so full runs keep their run_ids
        params["scale"] = config.scale
    if settings is not None:
        params["settings"] = settings
    return params


def run_id(parameters: dict, dataset_checksum: str | None, code_version: str) -> str:
    """Content hash of parameters + data set checksum + code version + schema version: the one run
    identity of every row, a sweep's (:func:`run_parameters`) and a benchmark item's
    (:func:`spbench.harness.rows.store_items`, whose items hash no data set file: ``None``)."""
    blob = {"p": parameters, "code": code_version, "schema": SCHEMA_VERSION}
    if dataset_checksum is not None:
        blob["data"] = dataset_checksum
    return hashlib.sha256(json.dumps(blob, sort_keys=True, default=str).encode()).hexdigest()[:20]
