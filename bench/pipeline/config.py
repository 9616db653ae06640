"""YAML sweep configs → frozen dataclasses, with one-line errors naming the file, the key and what was expected.

The keys are those of docs/design.md "Configs": the common ones here, each experiment's own (its axes, its
top-level keys, its algorithms, its executions) declared by the experiment
(:class:`spbench.experiment.Experiment`), so `barrier:` in a Tucker config is an error. Everything a
run needs is checked here, before anything is written: keys given twice, unknown keys, wrong types,
empty axes, cores/ranks < 1, integers beyond the C types they feed, an exclude that leaves no point,
unknown algorithms and data sets that cannot be resolved (unknown registry names, missing local
files). A flag's bad value is blamed on the flag (:meth:`Config.with_overrides`); what is valid but
likely a slip (parameters of an algorithm the sweep does not run) is a line in ``Config.warnings``.
"""
from __future__ import annotations

from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from spbench.pipeline.config_yaml import YamlProblem, parse_yaml
from spbench.experiment_registry import EXPERIMENTS, ROW_KINDS, get_experiment
from spbench.pipeline.scales import SCALES, scaled_name

#: every execution some experiment supports (each experiment declares its own)
EXECUTIONS = ("measured", "simulate", "schedule")
FALLBACKS = ("error", "standin")
#: keys every config may have; an experiment adds its own (Experiment.options)
COMMON_KEYS = ("name", "experiment", "datasets", "sweep", "include", "exclude", "repeats", "runs",
               "execution", "fallback", "params", "seed", "description", "costs")
#: `--scale`: full = the config as written; small = a quick pass (see Config.scaled)
SMALL_MAX_REPEATS = 10
#: `spbench run` flags named otherwise than the config key they set (else --KEY)
FLAGS = {"costs": "--machine"}
#: integer axis values (cores, ranks, K) and the seed feed C ints (the kernels', MPI's, Mt-KaHyPar's seed)
MAX_C_INT = 2**31 - 1


def flag(key: str) -> str:
    """The `spbench run` flag that sets config key ``key``."""
    return FLAGS.get(key, f"--{key}")


class ConfigError(ValueError):
    """A config that cannot be run; the message is one line naming the file and the key."""


@dataclass(frozen=True)
class Config:
    """One validated sweep (docs/design.md, "Configs"): what to run, on which data, how often. The experiment's
    own keys are in ``options`` (its declared defaults filled in) and read as attributes
    (``config.barrier``, ``config.launcher``)."""

    name: str
    experiment: str
    datasets: tuple  # of the experiment's data sets (registry entries or local files)
    sweep: tuple  # ((axis, (values...)), ...) in file order
    include: tuple = ()  # tuple of dicts: extra points
    exclude: tuple = ()  # tuple of dicts: points matching all given keys are dropped
    repeats: int = 100  # timed runs per point (paper §5.1)
    runs: int = 1  # independent repetitions of each point (the `repeat` column)
    execution: str = "measured"
    fallback: str = "error"  # a real data set that is not cached: error, or use its stand-in
    params: dict = field(default_factory=dict)  # per-algorithm parameters
    seed: int = 0
    description: str = ""
    costs: str = ""  # simulate: calibration file ("" = the default one `spbench calibrate` writes)
    options: dict = field(default_factory=dict)  # the experiment's own keys (Experiment.options)
    scale: str = "full"  # `--scale`: full, or small (Config.scaled: smaller stand-ins, fewer repeats)
    source: str = "<config>"
    raw: dict = field(default_factory=dict)  # the parsed YAML, copied into meta.json
    warnings: tuple = ()  # one-line warnings about the file (params of an algorithm it does not run)
    from_flags: tuple = ()  # the keys `spbench run` flags set (Config.where names them by flag)

    def __getattr__(self, key):
        """The experiment's own keys as attributes; AttributeError for a key it does not have."""
        try:
            options = object.__getattribute__(self, "options")
        except AttributeError:
            raise AttributeError(key) from None
        if key in options:
            return options[key]
        raise AttributeError(f"a {object.__getattribute__(self, 'experiment')} config has no key {key!r}")

    def with_overrides(self, **overrides) -> "Config":
        """CLI flags given explicitly win over the file (YAML keys mirror the flags' names); a bad
        value is a ConfigError naming the flag (:data:`FLAGS`), not the key. The result must keep a
        point: the excludes that apply depend on the execution, which a flag may set."""
        given = {k: v for k, v in overrides.items() if v is not None}
        scale = given.pop("scale", None)
        config = self
        if scale is not None and scale != self.scale:
            if scale not in SCALES:
                raise ConfigError(f"--scale: expected one of {', '.join(SCALES)}, got {scale!r}")
            if self.scale != "full":
                raise ConfigError(f"--scale: cannot go back from {self.scale} to {scale}")
            config = self.scaled(scale)
        experiment = get_experiment(self.experiment)
        own = {k: given.pop(k) for k in list(given) if k in experiment.options}
        for key in given:
            if key not in COMMON_KEYS:
                raise ConfigError(_foreign_key(self.source, experiment, key, flag(key)))
        if "costs" in given:
            _check_machine_file(given["costs"])
        # explicit --repeats / --runs win over the scale
        checked = _check_scalars(self.source, experiment, given, flags=True)
        options = {**config.options, **_check_options(self.source, experiment, own, flags=True)}
        config = replace(config, options=options, from_flags=tuple({*config.from_flags, *given, *own}), **checked)
        _check_some_point(config)
        return config

    def where(self, key: str) -> str:
        """How a message names where ``key``'s value came from: its flag when a flag set it, else
        ``FILE: key 'KEY'``."""
        return flag(key) if key in self.from_flags else f"{self.source}: key '{key}'"

    def scaled(self, scale: str) -> "Config":
        """The quick variant of this sweep: ``small`` keeps every point but runs ``min(repeats, 10)``
        timed runs, ``runs: 1``, stand-ins shrunk by the experiment's ``small_factor`` (SpTrSV: about
        1/8 of the rows; Tucker: 1/100 of the nonzeros; real data sets, when cached, stay as they
        are) and the name ``<name>_small``, so its rows land in their own folder and ``scale`` is
        part of every run_id. ``paper`` (SpTrSV) keeps repeats and runs and puts every paper
        matrix's stand-in at the matrix's own rows (``<name>_paper``)."""
        if scale == "full":
            return self
        experiment = get_experiment(self.experiment)
        if scale == "paper":
            if not experiment.paper_scale:
                raise ConfigError(f"--scale: paper is for experiments with stand-ins at the paper's sizes (sptrsv); "
                                  f"the full scale of {self.source}, a {self.experiment} config, already is")
            return replace(self, scale=scale, name=scaled_name(self.name, scale),
                           datasets=tuple(experiment.paper_size_dataset(d) for d in self.datasets))
        return replace(self, scale=scale, name=scaled_name(self.name, scale),
                       datasets=tuple(experiment.shrink_dataset(d, experiment.small_factor) for d in self.datasets),
                       repeats=min(self.repeats, SMALL_MAX_REPEATS), runs=1)


def load_config(path) -> Config:
    """Read and validate a YAML config; raise ConfigError with a one-line message."""
    path = Path(path)
    src = str(path)
    try:
        raw = path.read_bytes()
    except OSError as exc:
        raise ConfigError(f"{src}: cannot read config ({exc.strerror})") from None
    try:
        data = parse_yaml(raw, src)
    except YamlProblem as exc:
        raise ConfigError(str(exc)) from None
    return parse_config(data, src, base_dir=path.parent)


def parse_config(data: Any, src: str = "<config>", base_dir: Path | None = None) -> Config:
    """Validate an already-parsed mapping (the YAML document)."""
    if not isinstance(data, dict):
        raise ConfigError(f"{src}: expected a mapping of keys at top level, got {_kind(data)}")
    experiment = get_experiment(data["experiment"]) if data.get("experiment") in EXPERIMENTS else None
    for key in data:
        if key not in COMMON_KEYS and (experiment is None or key not in experiment.options):
            raise ConfigError(_foreign_key(src, experiment, key, f"key '{key}'"))
    for key in ("name", "experiment", "datasets", "sweep"):
        if key not in data:
            raise ConfigError(f"{src}: missing key '{key}'")
    name = data["name"]
    if not isinstance(name, str) or not name or any(c in name for c in "/\\") or name.startswith("."):
        raise ConfigError(f"{src}: key 'name': expected a non-empty string usable as a folder name, got {name!r}")
    if experiment is None:
        value = data["experiment"]
        rows_only = (f" (the rows {ROW_KINDS[value]().written_by} writes: no sweep runs them)"
                     if isinstance(value, str) and value in ROW_KINDS else "")
        raise ConfigError(f"{src}: key 'experiment': expected one of {', '.join(EXPERIMENTS)}, "
                          f"got {value!r}{rows_only}")
    scalars = _check_scalars(src, experiment, {k: data[k] for k in ("repeats", "runs", "execution", "fallback",
                                                                     "seed", "costs") if k in data})
    options = {k: decl.default for k, decl in experiment.options.items()}
    options.update(_check_options(src, experiment, {k: data[k] for k in experiment.options if k in data}))
    sweep = _check_sweep(src, experiment, data["sweep"])
    include = _check_point_list(src, experiment, "include", data.get("include", []))
    exclude = _check_point_list(src, experiment, "exclude", data.get("exclude", []))
    params = _check_params(src, experiment, data.get("params", {}))
    datasets = _check_datasets(src, experiment, data["datasets"], base_dir)
    names = {d.name for d in datasets}
    for key, items in (("include", include), ("exclude", exclude)):
        for i, item in enumerate(items):
            if "dataset" in item and item["dataset"] not in names:
                raise ConfigError(f"{src}: key '{key}[{i}].dataset': expected one of the config's data sets "
                                  f"({', '.join(sorted(names))}), got {item['dataset']!r}")
    description = data.get("description", "")
    if not isinstance(description, str):
        raise ConfigError(f"{src}: key 'description': expected a string, got {_kind(description)}")
    config = Config(name=name, experiment=experiment.name, datasets=datasets, sweep=sweep, include=include,
                    exclude=exclude, params=params, description=description, options=options, source=src,
                    raw=data, warnings=_unused_params(src, sweep, include, params), **scalars)
    if not any("execution" in item for item in include + exclude):  # else it waits for the flags
        _check_some_point(config)
    return config


def _unused_params(src: str, sweep: tuple, include: tuple, params: dict) -> tuple:
    """Warnings for ``params`` of algorithms that neither the sweep nor an include runs."""
    running = set(dict(sweep).get("algorithm", ())) | {item["algorithm"] for item in include if "algorithm" in item}
    return tuple(f"{src}: params.{alg}: {alg} is not in the sweep; its parameters are unused"
                 for alg in params if alg not in running)


def _check_some_point(config: Config) -> None:
    """ConfigError when the excludes leave the sweep without a point (it would run nothing and
    still write a results folder)."""
    from spbench.pipeline.sweep import expand

    if not expand(config):
        scoped = any("execution" in item for item in config.exclude)
        raise ConfigError(f"{config.source}: key 'exclude': it removes every point of the sweep"
                          + (f" (execution {config.execution})" if scoped else ""))


def _check_machine_file(path: str) -> None:
    """`--machine FILE` names a file that is there (the calibration is read when the sweep starts)."""
    if isinstance(path, str) and path and not Path(path).expanduser().is_file():
        what = "a folder, expected a calibration file" if Path(path).expanduser().is_dir() else "no such file"
        raise ConfigError(f"{flag('costs')}: {path}: {what}")


def _foreign_key(src: str, experiment, key: str, where: str) -> str:
    """The message for a key (``where`` a flag: the flag setting it) the config's experiment does
    not take (another experiment's, or none's)."""
    owners = [name for name in EXPERIMENTS if key in get_experiment(name).options]
    if experiment is not None and owners:
        own = ', '.join(experiment.options) or 'none'
        if where.startswith("--"):
            return (f"{where}: an option of {' and '.join(owners)} sweeps, not of a {experiment.name} sweep "
                    f"({src}; its own keys: {own})")
        return (f"{src}: {where}: an option of {' and '.join(owners)} sweeps, not of a {experiment.name} sweep "
                f"(its own keys: {own})")
    known = COMMON_KEYS + tuple(experiment.options if experiment is not None else
                                dict.fromkeys(k for n in EXPERIMENTS for k in get_experiment(n).options))
    return f"{src}: unknown key '{key}' (expected one of: {', '.join(known)})"


def _kind(value) -> str:
    return "nothing" if value is None else type(value).__name__ + f" {value!r}"


def _is_int(value) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _blame(src: str, key: str, flags: bool):
    """Where a bad value came from and how to show it: the flag and the value as typed, or the
    file's key and the value with its YAML type."""
    if flags:
        return flag(key), repr
    return f"{src}: key '{key}'", _kind


def _check_scalars(src: str, experiment, values: dict, flags: bool = False) -> dict:
    """The common scalar keys, checked (execution against what ``experiment`` supports); ``flags``:
    the values came from `spbench run` flags, which the messages name."""
    out = {}
    for key, value in values.items():
        where, shown = _blame(src, key, flags)
        if key == "costs":
            if not isinstance(value, str) or not value:
                raise ConfigError(f"{where}: expected the path of a calibration file, got {shown(value)}")
        elif key in ("repeats", "runs"):
            if not _is_int(value) or value < 1:
                raise ConfigError(f"{where}: expected an integer >= 1, got {shown(value)}")
        elif key == "seed":
            if not _is_int(value) or value < 0:
                raise ConfigError(f"{where}: expected an integer >= 0, got {shown(value)}")
            if value > MAX_C_INT:
                raise ConfigError(f"{where}: expected an integer in [0, {MAX_C_INT}] (a C int), got {shown(value)}")
        elif key in ("execution", "fallback"):
            allowed = experiment.executions if key == "execution" else FALLBACKS
            if key == "execution":  # aliases: a simulated run; a measured Tucker run is an MPI run
                value = {"simulated": "simulate", "mpi": "measured"}.get(value, value)
            if value not in allowed:
                suffix = f" for a {experiment.name} sweep" if key == "execution" and value in EXECUTIONS else ""
                raise ConfigError(f"{where}: expected one of {', '.join(allowed)}{suffix}, got {shown(value)}")
        out[key] = value
    return out


def _check_options(src: str, experiment, values: dict, flags: bool = False) -> dict:
    """The experiment's own keys, checked against its declarations (Experiment.options); ``flags``
    as in :func:`_check_scalars`."""
    out = {}
    for key, value in values.items():
        decl = experiment.options[key]
        if not decl.accepts(value):
            where, shown = _blame(src, key, flags)
            raise ConfigError(f"{where}: expected {decl.expected}, got {shown(value)}")
        out[key] = decl.convert(value)
    return out


def _check_axis_value(src: str, experiment, where: str, axis: str, value):
    if axis == "algorithm":
        known = tuple(experiment.algorithms())
        if not isinstance(value, str) or value not in known:
            raise ConfigError(f"{src}: key '{where}': expected an algorithm out of {', '.join(known)}, "
                              f"got {_kind(value)}")
    elif axis in experiment.optional_axes:
        allowed = experiment.optional_axes[axis]
        if value not in allowed:
            raise ConfigError(f"{src}: key '{where}': expected one of {', '.join(allowed)}, got {_kind(value)}")
    elif axis in experiment.axes:  # cores, ranks, K
        if not _is_int(value) or value < 1:
            raise ConfigError(f"{src}: key '{where}': expected an integer >= 1, got {_kind(value)}")
        if value > MAX_C_INT:
            raise ConfigError(f"{src}: key '{where}': expected an integer in [1, {MAX_C_INT}] (a C int), "
                              f"got {_kind(value)}")
    return value


def _check_sweep(src: str, experiment, sweep) -> tuple:
    axes = experiment.axes + tuple(experiment.optional_axes)
    if not isinstance(sweep, dict) or not sweep:
        raise ConfigError(f"{src}: key 'sweep': expected a mapping of axes ({', '.join(axes)}) to lists")
    out = []
    for axis, values in sweep.items():
        if axis not in axes:
            raise ConfigError(f"{src}: key 'sweep.{axis}': unknown axis (expected one of: {', '.join(axes)})")
        if not isinstance(values, list):
            values = [values]
        if not values:
            raise ConfigError(f"{src}: key 'sweep.{axis}': expected a non-empty list")
        checked = tuple(_check_axis_value(src, experiment, f"sweep.{axis}[{i}]", axis, v)
                        for i, v in enumerate(values))
        if len(set(checked)) != len(checked):
            raise ConfigError(f"{src}: key 'sweep.{axis}': expected distinct values, got {list(checked)}")
        out.append((axis, checked))
    missing = [a for a in experiment.axes if a not in dict(out)]
    if missing:
        raise ConfigError(f"{src}: key 'sweep': missing axis '{missing[0]}'")
    return tuple(out)


def _check_point_list(src: str, experiment, key: str, items) -> tuple:
    if not isinstance(items, list):
        raise ConfigError(f"{src}: key '{key}': expected a list of mappings, got {_kind(items)}")
    out = []
    for i, item in enumerate(items):
        if not isinstance(item, dict) or not item:
            raise ConfigError(f"{src}: key '{key}[{i}]': expected a non-empty mapping of axis to value")
        for axis, value in item.items():
            if axis == "dataset":
                if not isinstance(value, str):
                    raise ConfigError(f"{src}: key '{key}[{i}].dataset': expected a data set name")
                continue
            if axis == "execution":     # the item applies only when the sweep runs this way
                if value not in experiment.executions:
                    raise ConfigError(f"{src}: key '{key}[{i}].execution': expected one of "
                                      f"{', '.join(experiment.executions)}, got {_kind(value)}")
                continue
            if axis not in experiment.axes and axis not in experiment.optional_axes:
                raise ConfigError(f"{src}: key '{key}[{i}].{axis}': unknown axis "
                                  f"(expected one of: dataset, {', '.join(experiment.axes)}"
                                  f"{''.join(', ' + a for a in experiment.optional_axes)})")
            _check_axis_value(src, experiment, f"{key}[{i}].{axis}", axis, value)
        if key == "include" and any(a not in item for a in experiment.axes):
            absent = [a for a in experiment.axes if a not in item]
            raise ConfigError(f"{src}: key '{key}[{i}]': missing axis '{absent[0]}'")
        out.append(dict(item))
    return tuple(out)


def _check_params(src: str, experiment, params) -> dict:
    if not isinstance(params, dict):
        raise ConfigError(f"{src}: key 'params': expected a mapping of algorithm to parameters")
    known = experiment.algorithms()
    for alg, values in params.items():
        if alg not in known:
            raise ConfigError(f"{src}: key 'params.{alg}': unknown algorithm (expected one of: {', '.join(known)})")
        if not isinstance(values, dict):
            raise ConfigError(f"{src}: key 'params.{alg}': expected a mapping of parameter to value")
        for key, value in values.items():  # one at a time, so the message names the key
            try:
                known[alg].validate({key: value})
            except ValueError as exc:
                raise ConfigError(f"{src}: key 'params.{alg}.{key}': {exc}") from None
    return {alg: dict(v) for alg, v in params.items()}


def _check_datasets(src: str, experiment, entries, base_dir: Path | None) -> tuple:
    from spbench.datasets.errors import DatasetError

    if not isinstance(entries, list) or not entries:
        raise ConfigError(f"{src}: key 'datasets': expected a non-empty list")
    out = []
    for i, entry in enumerate(entries):
        if isinstance(entry, dict) and "path" in entry and base_dir is not None:
            p = Path(str(entry["path"])).expanduser()
            if not p.is_absolute() and not p.exists():
                p = base_dir / p  # a relative path is relative to the config file's folder
            entry = {**entry, "path": str(p)}
        try:
            out.append(experiment.resolve_dataset(entry))
        except DatasetError as exc:
            raise ConfigError(f"{src}: key 'datasets[{i}]': {exc}") from None
    names = [d.name for d in out]
    dup = next((n for n in names if names.count(n) > 1), None)
    if dup is not None:
        raise ConfigError(f"{src}: key 'datasets': data set '{dup}' is listed twice")
    return tuple(out)
