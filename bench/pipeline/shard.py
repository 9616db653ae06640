"""Split one sweep into N disjoint shards (`spbench run --shard I/N`, a Slurm job array's tasks)
and name the Slurm job a row came from (provenance travels with every row).

A shard holds whole points: every repeat of one (data set, axis values) stays in the same shard,
so the runs of a point share a node and a job and their spread is that point's noise, not the
difference between two nodes. Points are dealt round-robin in the sweep's own order, so the shards
differ in size by at most one point, and the split depends only on the config (not on code or data
versions): the same task index gets the same points on every rerun.
"""
from __future__ import annotations

import os
import re
from dataclasses import dataclass

#: the Slurm variables a row records, by row column
SLURM_FIELDS = {"slurm_job_id": "SLURM_JOB_ID", "slurm_array_job_id": "SLURM_ARRAY_JOB_ID",
                "slurm_array_task_id": "SLURM_ARRAY_TASK_ID"}


@dataclass(frozen=True)
class Shard:
    """Shard ``index`` (0-based) of ``count``."""

    index: int
    count: int

    @property
    def label(self) -> str:
        """How rows and file names spell it: 0/4 in rows, 0-of-4 in file names."""
        return f"{self.index}/{self.count}"

    @property
    def tag(self) -> str:
        return f"{self.index}-of-{self.count}"

    def select(self, points: list) -> list:
        """The points of this shard, in the sweep's order."""
        order: dict = {}
        for p in points:
            order.setdefault((p.dataset.name, p.values), len(order))
        return [p for p in points if order[(p.dataset.name, p.values)] % self.count == self.index]


def parse_shard(text: str) -> Shard:
    """'I/N' with 0 <= I < N → Shard; ValueError with a one-line reason otherwise."""
    match = re.fullmatch(r"\s*(\d+)\s*/\s*(\d+)\s*", text or "")
    if not match:
        raise ValueError(f"expected I/N such as 0/4 (shard I of N, counted from 0), got {text!r}")
    index, count = int(match[1]), int(match[2])
    if count < 1 or index >= count:
        raise ValueError(f"expected I/N with 0 <= I < N, got {text!r}")
    return Shard(index, count)


def array_shard(env=None) -> Shard | None:
    """The shard of this Slurm array task (task id minus the array's first id, of the task count);
    None outside an array job."""
    env = os.environ if env is None else env
    if not env.get("SLURM_ARRAY_TASK_COUNT") or not env.get("SLURM_ARRAY_TASK_ID"):
        return None
    first = int(env.get("SLURM_ARRAY_TASK_MIN", "0"))
    return Shard(int(env["SLURM_ARRAY_TASK_ID"]) - first, int(env["SLURM_ARRAY_TASK_COUNT"]))


def slurm_provenance(env=None) -> dict:
    """Row columns naming the Slurm job (and array task) running this sweep; None outside Slurm."""
    env = os.environ if env is None else env
    return {column: env.get(var) or None for column, var in SLURM_FIELDS.items()}
