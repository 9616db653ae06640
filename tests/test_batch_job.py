"""`spbench run CONFIG --batch-job`: what configs/slurm/spbench.sbatch asks of the config's experiment
(results folder name, run flags, environment), as shell lines the template evaluates."""
import os
import subprocess
from pathlib import Path

import pytest

SPTRSV = """
name: b_sptrsv
experiment: sptrsv
datasets: [lap2d-5pt]
sweep: {algorithm: [serial], cores: [1]}
"""
TUCKER = """
name: b_tucker
experiment: tucker
datasets: [enron]
sweep: {algorithm: [lite], ranks: [2], K: [10]}
"""
TEMPLATE = Path(__file__).resolve().parents[1] / "configs" / "slurm" / "spbench.sbatch"


def evaluated(spbench_cmd, config, env, *flags):
    """The template's own lines on the command's output: NAME, FLAGS and the environment, as bash sees them."""
    script = ('JOB=$("$@" --batch-job) && eval "$JOB" && printf "%s\\n" "$NAME" "${#FLAGS[@]}" "${FLAGS[@]}" '
              '"OMP=${OMP_NUM_THREADS:-unset}"')
    done = subprocess.run(["bash", "-c", script, "-", *spbench_cmd, "run", str(config), *flags],
                          capture_output=True, text=True, timeout=60, env=env)
    return done.returncode, done.stdout.splitlines(), done.stderr


@pytest.fixture
def job_env():
    """This environment without the variables a job's settings come from."""
    return {k: v for k, v in os.environ.items() if k not in ("SPBENCH_LAUNCHER", "SLURM_CPUS_PER_TASK",
                                                             "OMP_NUM_THREADS")}


def test_sptrsv_job_gets_the_tasks_cpus(spbench_cmd, write_config, job_env):
    rc, out, err = evaluated(spbench_cmd, write_config(SPTRSV), {**job_env, "SLURM_CPUS_PER_TASK": "6"},
                             "--scale", "small")
    assert rc == 0, err
    assert out == ["b_sptrsv_small", "0", "OMP=6"]


def test_tucker_job_runs_measured_under_srun_or_the_sites_launcher(spbench_cmd, write_config, job_env):
    config = write_config(TUCKER)
    rc, out, err = evaluated(spbench_cmd, config, job_env)
    assert rc == 0, err
    assert out == ["b_tucker", "4", "--execution", "measured", "--launcher", "srun -n {ranks}", "OMP=unset"]
    rc, out, err = evaluated(spbench_cmd, config, {**job_env, "SPBENCH_LAUNCHER": "srun --mpi=pmi2 -n {ranks}"})
    assert rc == 0 and out[5] == "srun --mpi=pmi2 -n {ranks}", err


def test_a_bad_config_stops_the_job(spbench_cmd, write_config, job_env):
    rc, out, err = evaluated(spbench_cmd, write_config(SPTRSV.replace("sptrsv\n", "nope\n")), job_env)
    assert rc == 2 and out == [] and "key 'experiment'" in err and len(err.strip().splitlines()) == 1


def test_the_template_asks_the_experiment():
    text = TEMPLATE.read_text()
    assert 'JOB=$("$VENV/bin/spbench" run "$CONFIG" --batch-job "$@")' in text and 'eval "$JOB"' in text
    assert "tucker" not in text.split("set -euo pipefail", 1)[1]  # no experiment named in the job's commands
