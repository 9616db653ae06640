"""The Experiment interface (docs/design.md): what SpTrSV and Tucker each declare and provide, so that
the generic pipeline (config, sweep, runner, results, profile, compare, calibrate, Slurm arrays)
never names an experiment.

An experiment declares its sweep axes, its own top-level config keys (:class:`ConfigKey`, with the
`spbench run` flag of each that has one, :class:`RunFlag`), its algorithms (:class:`Algorithm`:
name, figure label, parameters, SpTrSV's kernel), its row fields, its default compared metrics; it resolves and shrinks its data sets, prepares one data set, runs
one point (or a batch of them), measures and stores its calibration, profiles its rows and sizes a
Slurm task. What every kind of stored rows declares (its profile, compared metrics, identity axes,
row fields) is :class:`RowKind`, which the rows of `spbench bench …` implement too without being
runnable. ``spbench.experiment_registry`` maps names to implementations. This module is a leaf
of the package (it imports only :mod:`spbench.pipeline.parameters`, when checking parameters): experiment
packages import it, it imports none of them.
"""
from __future__ import annotations

import contextlib

from abc import ABC, abstractmethod
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

__all__ = ["RunError", "RunFlag", "ConfigKey", "Algorithm", "Estimate", "RowKind", "Experiment", "choice",
           "positive_int"]


class RunError(RuntimeError):
    """A sweep that cannot start (bad machine for it, unavailable data); one-line message."""


def _same(value):
    return value


#: the kinds of value a `spbench run` flag takes (:class:`RunFlag`)
FLAG_KINDS = ("text", "float", "choice", "switch")


@dataclass(frozen=True)
class RunFlag:
    """How `spbench run` offers one of an experiment's config keys as a flag, ``--KEY`` (a value
    given there wins over the file's): its help, without the closing "(override)." that `spbench
    run` adds to a flag taking a value, and the value it takes: ``text``, ``float``, ``choice``
    (one of its key's ``choices``) or ``switch`` (on when given)."""

    help: str
    kind: str = "text"

    def __post_init__(self):
        if self.kind not in FLAG_KINDS:
            raise ValueError(f"run flag kind {self.kind!r}, expected one of {', '.join(FLAG_KINDS)}")


@dataclass(frozen=True)
class ConfigKey:
    """One of an experiment's own top-level config keys: default, what a valid value looks like,
    whether it is part of a run's identity (run_id), whether it changes a timed run's numbers (a
    sweep setting of measured rows, :func:`spbench.pipeline.sweep.sweep_settings`) and, when
    `spbench run` has a flag setting it, that flag (:class:`RunFlag`)."""

    default: object
    expected: str
    accepts: Callable[[object], bool]
    identity: bool = False  # a different value is a different run (hashed into run_id)
    convert: Callable[[object], object] = _same
    timing: bool = False  # changes a timed run's numbers, not what it computes (an MPI launcher)
    flag: RunFlag | None = None
    choices: tuple = ()  # the values a choice key takes (what its flag lists)

    def __post_init__(self):
        if self.flag is not None and self.flag.kind == "choice" and not self.choices:
            raise ValueError("a choice flag needs its key's choices (make the key with choice())")


def _is_int(value) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def choice(values: tuple, default, identity: bool = False, flag: RunFlag | None = None) -> ConfigKey:
    """A key taking one of ``values``."""
    return ConfigKey(default, f"one of {', '.join(values)}", lambda v: v in values, identity, flag=flag,
                     choices=tuple(values))


def positive_int(default: int, identity: bool = False) -> ConfigKey:
    """A key taking an integer >= 1."""
    return ConfigKey(default, "an integer >= 1", lambda v: _is_int(v) and v >= 1, identity)


@dataclass(frozen=True)
class Estimate:
    """What a sweep will need before it runs (the pre-flight check): one point's peak memory
    (``resource`` "memory", ``point`` set) or the disk a data set's store still takes to make
    ("disk"), in bytes, with a few words on what the figure is made of."""

    resource: str  # "memory" or "disk"
    name: str  # the point's label, or the data set's name
    nbytes: int
    basis: str
    point: object = None  # the sweep.Point of a memory estimate


@dataclass(frozen=True)
class Algorithm:
    """A registered algorithm (a scheduler or a distribution scheme): its name, the paper's
    figure label, its declared parameters (:class:`spbench.pipeline.parameters.Parameter`) and, for
    SpTrSV, the kernel its schedules run on (what ``kernel: auto`` means)."""

    name: str
    label: str
    kind: str  # "scheduler" or "scheme": how messages name it
    parameters: dict = field(default_factory=dict)
    kernel: str | None = None

    def validate(self, params: dict | None) -> dict:
        """``params`` checked against the declaration; ValueError names the algorithm and the key."""
        from spbench.pipeline.parameters import check_parameters
        return check_parameters(f"{self.kind} {self.name!r}", self.parameters, params)


class RowKind(ABC):
    """A kind of stored rows (a row's ``experiment``), as `spbench profile` and `spbench compare`
    read them: its profile, default compared metrics, the axes a point's identity adds to data set
    and execution, and the fields its rows add to the common ones."""

    #: the rows' ``experiment`` value, and how messages and reports name it
    name: str = ""
    title: str = ""
    #: what writes these rows (a message refusing a config that names a kind no sweep runs says it)
    written_by: str = "`spbench run`"
    #: the executions it supports (config ``execution:``); none: no `spbench run` sweep makes these rows
    executions: tuple = ()
    #: metrics `spbench compare` uses when none is asked for (the first present in both folders)
    compare_metrics: tuple = ()
    #: the row fields this kind adds to the common ones, name -> type(s) (:mod:`spbench.store.row_schema`)
    row_fields: dict = {}

    def identity_axes(self) -> tuple:
        """Columns naming a point besides data set and execution, for `spbench compare` when a
        folder's meta.json holds no config naming its sweep axes."""
        return ()

    def row_problems(self, row: dict) -> list[str]:
        """What keeps ``row`` from being a row of this kind (:func:`spbench.store.row_schema.row_problems`
        against the common fields and :attr:`row_fields`); the store writes no row that has any."""
        from spbench.store.row_schema import declared_fields, row_problems

        return row_problems(row, declared_fields(self))

    @abstractmethod
    def write_profile(self, df, out_dir) -> list[Path]:
        """Tables, figures and REPORT.md of one folder's rows; the paths written."""


class Experiment(RowKind):
    """One experiment as the generic pipeline sees it (see the module docstring)."""

    #: sweep axes every sweep sets; all but ``algorithm`` take integers >= 1
    axes: tuple = ()
    #: sweep axes a sweep may add, with their allowed values
    optional_axes: dict = {}
    #: the experiment's own top-level config keys, name -> ConfigKey (those with a ``flag`` are
    #: `spbench run` flags too)
    options: dict = {}
    #: the executions it supports (config ``execution:``)
    executions: tuple = ("measured", "simulate")
    #: ``--scale small``: stand-in data sets shrink by this factor
    small_factor: float = 1.0
    #: ``--scale paper``: whether its stand-ins have a paper-size variant (``paper_size_dataset``)
    paper_scale: bool = False

    def __init__(self):
        self.calibration = None  # the calibration file simulated rows use, as read (meta.json records it)
        self.costs = None  # its terms as the experiment's cost model reads them

    # -- algorithms and points --------------------------------------------------------------
    @abstractmethod
    def algorithms(self) -> dict[str, Algorithm]:
        """The algorithms a sweep may name, by name."""

    def algorithm_label(self, row) -> str:
        """The paper's label of a row's algorithm (a figure's legend, a table's column): the
        registered algorithm's label, or the row's name when none is registered."""
        name = str(row.get("algorithm"))
        known = self.algorithms().get(name)
        return known.label if known is not None else name

    def normalize(self, axes: dict) -> dict:
        """A point's axis values in canonical form (equal runs get one point); default: as given."""
        return axes

    # -- data sets ---------------------------------------------------------------------------
    @abstractmethod
    def resolve_dataset(self, entry):
        """A config's ``datasets:`` entry as a data set (DatasetError when it cannot be)."""

    def shrink_dataset(self, dataset, factor: float):
        """The data set's stand-in shrunk by ``factor`` (``--scale small``; the data set protocol's
        ``scaled``, :class:`spbench.datasets.dataset.Dataset`)."""
        return dataset.scaled(factor)

    def paper_size_dataset(self, dataset):
        """The data set at the paper's size (``--scale paper``); default: as it is."""
        return dataset

    def dataset_fields(self, prepared) -> dict:
        """Row fields describing the prepared data set."""
        return {"dataset_source": prepared.source, "dataset_checksum": prepared.checksum}

    # -- running -----------------------------------------------------------------------------
    @abstractmethod
    def check_points(self, config, points) -> None:
        """Refuse (RunError), before anything runs, points this machine cannot run; load the
        calibration simulated points need."""

    @abstractmethod
    def prepare(self, dataset, config):
        """Load one data set for every point of it (ValueError/OSError when it cannot be)."""

    @abstractmethod
    def run(self, point, prepared, config) -> dict:
        """One point's measurement: the row fields it adds to the point's, status among them (the
        runner joins them, :func:`spbench.store.row_builder.build_row`, and stores the row)."""

    def work_per_point(self, config) -> str:
        """What each point runs, as ``--dry-run`` says it; default: the config's timed runs when
        measured, none when modelled."""
        if config.execution == "measured":
            return f"{config.repeats} timed run{'s' if config.repeats != 1 else ''} each"
        return "modelled, no timed runs"

    def sweep_scratch(self, config):
        """A context the sweep's points run in: scratch space they share (a point reusing what the
        one before left) and that is released when the sweep ends; default none."""
        return contextlib.nullcontext()

    def batch_runner(self, config):
        """None, or ``run(pending, prepared, config, store, progress)`` running one data set's
        pending (point, point fields) pairs as one job and yielding each one's row as it ends, built
        with :func:`spbench.store.row_builder.build_row`; the runner stores every row it yields
        (``store``: the results folder, which the job's own processes may write into too)."""
        return None

    def estimate_points(self, config, points) -> list[Estimate]:
        """Each point's peak memory and each data set's disk still to fill, from sizes known
        without loading or generating anything; default none (nothing is checked or refused)."""
        return []

    # -- calibration -------------------------------------------------------------------------
    @abstractmethod
    def measure_calibration(self, quick: bool, cores: tuple, force: bool = False) -> dict:
        """Measure the cost model's terms on this machine (ValueError for core counts it cannot use);
        ``force``: keep terms the experiment would refuse as implausible, noting why in the result."""

    #: the module holding the experiment's calibration: ``default_calibration_path()``, ``save(measured,
    #: path)`` and ``load(path)`` over :mod:`spbench.store.calibration_file`'s format (imported when used)
    calibration_module: str = ""

    def _calibration(self):
        import importlib
        return importlib.import_module(self.calibration_module)

    def calibration_path(self) -> Path:
        """Where `spbench calibrate` keeps this machine's calibration by default."""
        return self._calibration().default_calibration_path()

    #: whether a simulated sweep needs a calibration (SpTrSV: its times are nothing without one),
    #: or runs without one, its times left null (Tucker: the distributions' metrics stand alone)
    calibration_required: bool = True

    def costs_path(self, config) -> Path:
        """The calibration a simulated sweep models with: the config's ``costs`` (`--machine`), else
        this machine's default one."""
        return Path(config.costs).expanduser() if config.costs else self.calibration_path()

    def load_costs(self, config) -> None:
        """Read the calibration of :meth:`costs_path` into ``calibration`` (the file as read, which
        meta.json and the rows' settings record) and ``costs`` (what the cost model reads); a
        RunError naming where it was asked for when it is missing (and required, or named) or not
        a calibration of this experiment."""
        path = self.costs_path(config)
        if not path.exists():
            if config.costs or self.calibration_required:
                raise RunError(f"{config.where('costs')}: no {self.title} calibration at {path}; run "
                               f"`spbench calibrate --experiment {self.name}` first (it measures this machine's "
                               f"{self.title} costs)")
            return
        module = self._calibration()
        try:
            self.calibration = module.load_calibration(path)
            self.costs = module.model_costs(self.calibration)
        except (OSError, ValueError) as exc:
            raise RunError(f"{config.where('costs')}: {exc}") from None

    def save_calibration(self, measured: dict, path) -> Path:
        """Store a measured calibration (:mod:`spbench.store.calibration_file`'s format)."""
        return self._calibration().save(measured, path)

    def read_calibration(self, path) -> dict:
        """A stored calibration as :meth:`measure_calibration` returned it (OSError, or ValueError
        with one line, when it cannot be read)."""
        return self._calibration().load(path)

    #: `spbench calibrate --validate SIZE`: the `spbench bench` command putting the calibrated model
    #: beside measurement, and the option of it SIZE sets
    validation: tuple[str, str] = ()

    def calibration_summary(self, measured: dict) -> list[tuple[str, str]]:
        """(quantity, value) lines `spbench calibrate` prints; default none."""
        return []

    def calibration_agreement(self, a: dict, b: dict, on_point=None) -> list[dict]:
        """Two calibrations of this experiment side by side (`spbench calibrate --agree`): rows with
        ``quantity``, ``a``, ``b`` and ``rel_diff`` = (b − a) / a, plus what identifies the point.
        Default: every numeric term both hold (dotted paths into nested terms); an experiment whose
        terms trade against each other compares its predictions instead."""
        from spbench.store.calibration_file import relative_difference

        def leaves(d, prefix=""):
            for k, v in d.items():
                if isinstance(v, dict):
                    yield from leaves(v, f"{prefix}{k}.")
                elif isinstance(v, (int, float)) and not isinstance(v, bool):
                    yield f"{prefix}{k}", float(v)

        terms_a, terms_b = dict(leaves(a.get("costs", a))), dict(leaves(b.get("costs", b)))
        return [{"quantity": k, "a": terms_a[k], "b": terms_b[k],
                 "rel_diff": relative_difference(terms_a[k], terms_b[k])} for k in terms_a if k in terms_b]

    # -- results and batch jobs ----------------------------------------------------------------
    def identity_axes(self) -> tuple:
        """Its sweep axes, the optional ones after."""
        return (*self.axes, *self.optional_axes)

    @abstractmethod
    def slurm_resources(self, points) -> list[str]:
        """sbatch options sizing one array task for the largest of ``points``."""

    def batch_job(self, environ) -> tuple[list[str], dict]:
        """What a batch job of this experiment adds (``spbench run CONFIG --batch-job``, read by
        configs/slurm/spbench.sbatch): `spbench run` flags and environment variables, from the job's
        environment ``environ``; default none."""
        return [], {}
