"""A sweep split into shards (`spbench run --shard I/N`, a Slurm job array's tasks) stores exactly the
unsharded sweep's rows, once each, with the shards writing into one folder at the same time; rows
and meta.json name the Slurm job; the batch template picks its shard from the array variables."""
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from spbench.pipeline.config import load_config
from spbench.store.results import ResultsBusy, ResultStore
from spbench.pipeline.shard import Shard, array_shard, parse_shard, slurm_provenance
from spbench.pipeline.sweep import expand

CFG = """
name: sharded
experiment: sptrsv
datasets:
  - lap2d-5pt: {grid: 30}
  - lap2d-9pt: {grid: 25}
sweep:
  algorithm: [serial, wavefront, hdagg]
  cores: [1, 2]
repeats: 3
runs: 2
"""
TEMPLATE = Path(__file__).resolve().parent.parent / "configs" / "slurm" / "spbench.sbatch"
SLURM_ENV = {"SLURM_JOB_ID": "4242", "SLURM_ARRAY_JOB_ID": "4240", "SLURM_ARRAY_TASK_ID": "2"}


def _key(row_or_point):
    if isinstance(row_or_point, dict):
        r = row_or_point
        return (r["dataset"], r["algorithm"], int(r["cores"]), int(r["repeat"]))
    p = row_or_point
    return (p.dataset.name, p.axes["algorithm"], int(p.axes["cores"]), p.repeat)


def _rows(out):
    return [json.loads(p.read_text()) for p in (out / "runs").glob("*.json")]


def _env(**extra):
    env = {k: v for k, v in os.environ.items() if not k.startswith("SLURM_")}
    return {**env, **extra}


@pytest.mark.parametrize("count", [1, 2, 3, 7, 40])
def test_shards_partition_the_sweep_point_for_point(write_config, count):
    points = expand(load_config(write_config(CFG)))
    shards = [Shard(i, count).select(points) for i in range(count)]
    union = [_key(p) for part in shards for p in part]
    assert sorted(union) == sorted(_key(p) for p in points) and len(set(union)) == len(points)
    sizes = [len({(p.dataset.name, p.values) for p in part}) for part in shards]
    assert max(sizes) - min(sizes) <= 1
    for part in shards:  # every repeat of a point lands in the same shard
        for p in part:
            assert {q.repeat for q in part if (q.dataset.name, q.values) == (p.dataset.name, p.values)} == {0, 1}
    assert [_key(p) for p in Shard(1, count % 5 + 2).select(points)] == \
        [_key(p) for p in Shard(1, count % 5 + 2).select(expand(load_config(write_config(CFG))))]


@pytest.mark.parametrize("text", ["3", "2/2", "-1/2", "a/b", "1/0", ""])
def test_bad_shard_is_rejected(text):
    with pytest.raises(ValueError, match="I/N"):
        parse_shard(text)


def test_array_task_gives_its_shard_and_provenance():
    env = {**SLURM_ENV, "SLURM_ARRAY_TASK_COUNT": "3", "SLURM_ARRAY_TASK_MIN": "1"}
    assert array_shard(env) == Shard(1, 3)
    assert array_shard({}) is None
    assert slurm_provenance(env) == {"slurm_job_id": "4242", "slurm_array_job_id": "4240", "slurm_array_task_id": "2"}
    assert slurm_provenance({}) == {"slurm_job_id": None, "slurm_array_job_id": None, "slurm_array_task_id": None}


@pytest.mark.slow
def test_concurrent_shards_store_the_unsharded_rows_once(write_config, tmp_path, spbench_cmd):
    cfg = write_config(CFG)
    whole, split = tmp_path / "whole", tmp_path / "split"
    res = subprocess.run([*spbench_cmd, "run", str(cfg), "--out", str(whole), "-q"], capture_output=True,
                         text=True, timeout=300, env=_env())
    assert res.returncode == 0, res.stderr
    procs = [subprocess.Popen([*spbench_cmd, "run", str(cfg), "--out", str(split), "--shard", f"{i}/3", "-q"],
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                              env=_env(SLURM_JOB_ID=str(100 + i), SLURM_ARRAY_JOB_ID="100",
                                       SLURM_ARRAY_TASK_ID=str(i)))
             for i in range(3)]
    for proc in procs:
        _, err = proc.communicate(timeout=300)
        assert proc.returncode == 0, err
    rerun = subprocess.run([*spbench_cmd, "run", str(cfg), "--out", str(split), "--shard", "1/3"],
                           capture_output=True, text=True, timeout=300, env=_env())
    assert rerun.returncode == 0 and " 0 run " in rerun.stderr, rerun.stderr
    rows, reference = _rows(split), _rows(whole)
    assert sorted(_key(r) for r in rows) == sorted(_key(r) for r in reference)
    assert len({_key(r) for r in rows}) == len(rows) and all(r["status"] == "ok" for r in rows)
    assert {r["run_id"] for r in rows} == {r["run_id"] for r in reference}
    assert {(r["shard"], r["slurm_job_id"], r["slurm_array_task_id"]) for r in rows} == \
        {(f"{i}/3", str(100 + i), str(i)) for i in range(3)}
    assert all(r["slurm_array_job_id"] == "100" for r in rows)
    assert all(r["shard"] is None and r["slurm_job_id"] is None for r in reference)
    jobs = json.loads((split / "meta.json").read_text())["slurm_jobs"]
    assert sorted(j["slurm_job_id"] for j in jobs) == ["100", "101", "102"]
    assert not list(split.glob(".lock*")) and not list(split.glob(".jobs*"))


def test_whole_sweep_and_shard_exclude_each_other(tmp_path):
    root = tmp_path / "res"
    with ResultStore(root).lock():
        with pytest.raises(ResultsBusy, match="whole sweep"):
            with ResultStore(root, shard="0-of-2").lock():
                pass
    with ResultStore(root, shard="0-of-2").lock():
        with ResultStore(root, shard="1-of-2").lock():
            with pytest.raises(ResultsBusy, match="a shard"):
                with ResultStore(root).lock():
                    pass


def test_fresh_shard_is_refused(write_config, tmp_path, spbench_cmd):
    res = subprocess.run([*spbench_cmd, "run", str(write_config(CFG)), "--out", str(tmp_path / "r"),
                          "--shard", "0/2", "--fresh"], capture_output=True, text=True, timeout=120)
    assert res.returncode == 2 and "--fresh" in res.stderr and not (tmp_path / "r").exists()


def test_slurm_array_prints_the_array_job(write_config, spbench_cmd):
    cfg = write_config(CFG)
    res = subprocess.run([*spbench_cmd, "run", str(cfg), "--slurm-array", "3", "--repeats", "5"],
                         capture_output=True, text=True, timeout=120)
    assert res.returncode == 0, res.stderr
    assert res.stdout.split() == ["sbatch", "--array=0-2", "--job-name=spbench-sharded", "--output=spbench-%A_%a.out",
                                  "--ntasks=1", "--cpus-per-task=2", str(TEMPLATE), str(cfg), "--repeats", "5"]


@pytest.mark.slow
def test_batch_template_runs_its_array_shard(write_config, tmp_path):
    """The template as an array task runs (plain bash, the Slurm variables set by hand): shard 1 of 2."""
    cfg = write_config(CFG)
    env = _env(SLURM_ARRAY_TASK_ID="6", SLURM_ARRAY_TASK_MIN="5", SLURM_ARRAY_TASK_COUNT="2",
               SLURM_JOB_ID="77", SLURM_ARRAY_JOB_ID="75", SLURM_CPUS_PER_TASK="2",
               SLURM_SUBMIT_DIR=str(tmp_path), SPBENCH_RESULTS=str(tmp_path / "res"),
               SPBENCH_VENV=str(Path(sys.executable).parent.parent))
    res = subprocess.run(["bash", str(TEMPLATE), str(cfg), "-q"], capture_output=True, text=True, timeout=300, env=env)
    assert res.returncode == 0, res.stderr
    rows = _rows(tmp_path / "res" / "sharded")
    expected = Shard(1, 2).select(expand(load_config(cfg)))
    assert sorted(_key(r) for r in rows) == sorted(_key(p) for p in expected)
    assert {(r["shard"], r["slurm_job_id"], r["slurm_array_job_id"], r["slurm_array_task_id"]) for r in rows} == \
        {("1/2", "77", "75", "6")}
