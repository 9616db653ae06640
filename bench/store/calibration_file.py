"""One calibration file format for every experiment (`spbench calibrate --experiment NAME`):
the cost-model terms measured on one machine, in a versioned JSON envelope, written and read
by one pair of functions (asv's ``write_json``/``load_json(api_version)``).

``{"kind": "spbench-calibration", "version": 1, "experiment", "machine", "code_version" (of the
code measured), "created", "quick", "terms_version" (the layout of the experiment's terms), "terms"}``.
A file of another kind, experiment or version, or one written before this format, is refused with
one line saying what to do. An experiment's calibrate module turns ``terms`` into what its cost
model reads. Simulated sweeps record the envelope they used in meta.json.
"""
from __future__ import annotations

import json
import math
from pathlib import Path

__all__ = ["KIND", "VERSION", "default_path", "write_calibration", "read_calibration", "relative_difference",
           "finite_number"]

KIND = "spbench-calibration"
VERSION = 1


def default_path(experiment: str) -> Path:
    """Where `spbench calibrate --experiment NAME` keeps this machine's calibration:
    ``$SPBENCH_DATA/calibration/<experiment>-<host>.json``."""
    import socket

    from spbench.store.cache_root import data_dir
    return data_dir() / "calibration" / f"{experiment}-{socket.gethostname()}.json"


def write_calibration(path, experiment: str, terms: dict, *, machine: dict, created: str, quick: bool,
                      terms_version: int) -> Path:
    """Store ``terms`` of ``experiment``'s cost model, measured on ``machine`` at ``created``, atomically."""
    from spbench.store.atomic_files import write_json
    from spbench.store.code_version import code_version

    envelope = {"kind": KIND, "version": VERSION, "experiment": experiment, "machine": machine,
                "code_version": code_version(experiment), "created": created, "quick": bool(quick),
                "terms_version": terms_version, "terms": terms}
    return write_json(path, envelope, indent=1, default=str)


def read_calibration(path, experiment: str, what: str, terms_version: int) -> dict:
    """The envelope stored in ``path`` for ``experiment`` (``what`` names it in messages, "an SpTrSV
    calibration"); ValueError with one line for anything else."""
    rerun = f"rerun `spbench calibrate --experiment {experiment}`"
    try:
        data = json.loads(Path(path).read_text())
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise ValueError(f"{path}: not {what} (not readable JSON: {exc})") from None
    if not isinstance(data, dict) or (data.get("kind") != KIND and "schema_version" not in data):
        raise ValueError(f"{path}: not {what} (expected the JSON file `spbench calibrate --experiment "
                         f"{experiment}` writes)")
    if data.get("kind") != KIND:
        raise ValueError(f"{path}: {what} in the format spbench wrote before calibrations of every experiment "
                         f"shared one; {rerun} to measure it again")
    if data.get("version") != VERSION:
        raise ValueError(f"{path}: calibration format version {data.get('version')!r}; this spbench reads "
                         f"version {VERSION}: {rerun}")
    if data.get("experiment") != experiment:
        raise ValueError(f"{path}: a calibration of {data.get('experiment')!r}; expected {what}")
    if data.get("terms_version") != terms_version:
        raise ValueError(f"{path}: calibration schema {data.get('terms_version')}, expected {terms_version} "
                         f"(made for an older cost model: {rerun})")
    for key, kind, expected in ENVELOPE_TYPES:
        if not isinstance(data.get(key), kind):
            raise ValueError(f"{path}: key {key!r} = {_shown(data.get(key))}, expected {expected} (a calibration "
                             f"edited by hand? {rerun})")
    return data


#: the envelope's keys an experiment's cost model reads, with their JSON types
ENVELOPE_TYPES = (("terms", dict, "a JSON object of cost-model terms"), ("machine", dict, "a JSON object of machine facts"),
                  ("created", str, "the time it was measured, as text"), ("quick", bool, "true or false"))


def _shown(value, limit: int = 60) -> str:
    """A JSON value as a message shows it: its type and the start of its text."""
    text = json.dumps(value)
    return f"{type(value).__name__} {text if len(text) <= limit else text[:limit] + '…'}"


def finite_number(value) -> bool:
    """Whether a term read from a calibration file is a finite JSON number (not a bool, text or null)."""
    return not isinstance(value, bool) and isinstance(value, (int, float)) and math.isfinite(value)


def relative_difference(a: float, b: float) -> float:
    """(b − a) / a, how far a second calibration's figure is from the first's (`spbench calibrate
    --agree`); 0 when both are 0, infinite when only a is."""
    if a == b:
        return 0.0
    return (b - a) / a if a else float("inf")
