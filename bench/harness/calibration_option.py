"""The ``--calibration`` option of the cost-model benchmarks (`spbench bench sptrsv-model|tucker-model`)
and the file it names read as the experiment's cost model reads it."""
from __future__ import annotations

from spbench.harness.options import BadOption, Option

__all__ = ["CALIBRATION", "read_calibration"]

#: ``--calibration``: the file a cost-model benchmark reads (:func:`read_calibration`)
CALIBRATION = Option("--calibration", "file", None, "Calibration file (default this machine's, from spbench "
                     "calibrate).", as_path=True, show_default=False)


def read_calibration(experiment: str, path):
    """A ``--calibration`` file as ``experiment``'s cost model reads it (default: this machine's), and
    its path as text; BadOption when it cannot be read."""
    from spbench.experiment_registry import get_experiment

    chosen = get_experiment(experiment)
    path = path or chosen.calibration_path()
    try:
        return chosen.read_calibration(path), str(path)
    except (OSError, ValueError) as exc:
        raise BadOption(f"--calibration: {exc}") from None
