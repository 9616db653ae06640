"""The Slurm job array that runs one sweep as N shards (`spbench run CONFIG --slurm-array N`).

Each array task runs the shipped batch template (configs/slurm/spbench.sbatch), which reads its
shard from SLURM_ARRAY_TASK_ID / SLURM_ARRAY_TASK_COUNT and writes into the sweep's one results
folder. A task gets what the sweep's largest point needs, as its experiment says: as many CPUs
as the largest `cores` (SpTrSV) or as many MPI tasks as the largest `ranks` (Tucker).
"""
from __future__ import annotations

import shlex
import subprocess
from pathlib import Path

from spbench.pipeline.config import Config
from spbench.experiment_registry import get_experiment

#: the batch template, beside the package in a checkout
TEMPLATE = Path(__file__).resolve().parents[2] / "configs" / "slurm" / "spbench.sbatch"


def resources(config: Config, points: list) -> list[str]:
    """sbatch options sizing one task for the sweep's largest point (the experiment's own)."""
    return get_experiment(config.experiment).slurm_resources(points)


def array_command(config: Config, config_file: Path, points: list, count: int, run_flags: list[str],
                  template: Path = TEMPLATE) -> list[str]:
    """The sbatch command line submitting the sweep as ``count`` array tasks (0..count-1)."""
    if count < 1:
        raise ValueError(f"--slurm-array: expected a task count >= 1, got {count}")
    if not template.is_file():
        raise ValueError(f"{template}: the batch template is missing (run from a spbench checkout)")
    return ["sbatch", f"--array=0-{count - 1}", f"--job-name=spbench-{config.name}",
            "--output=spbench-%A_%a.out", *resources(config, points), str(template), str(config_file),
            *run_flags]


def submit(command: list[str]) -> str:
    """Run sbatch; its one-line answer ('Submitted batch job N'), or ValueError with sbatch's."""
    try:
        done = subprocess.run(command, capture_output=True, text=True, timeout=60)
    except FileNotFoundError:
        raise ValueError("--submit: sbatch not found (not a Slurm login node?); drop --submit "
                         "to print the command") from None
    if done.returncode != 0:
        raise ValueError(f"sbatch failed: {(done.stderr or done.stdout).strip()}")
    return done.stdout.strip()


def render(command: list[str]) -> str:
    return shlex.join(command)
