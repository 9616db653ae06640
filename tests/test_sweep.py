"""Sweep expansion: cartesian product, include/exclude, serial once, stable run ids."""
from spbench.pipeline.config import load_config
from spbench.pipeline.sweep import expand, run_id, run_parameters

CFG = """
name: s
experiment: sptrsv
datasets:
  - lap2d-5pt: {grid: 8}
  - lap3d-7pt: {grid: 4}
sweep:
  algorithm: [serial, wavefront]
  cores: [1, 2]
"""


def test_cartesian_product_and_serial_once(write_config):
    pts = expand(load_config(write_config(CFG)))
    labels = [(p.dataset.name, p.axes["algorithm"], p.axes["cores"]) for p in pts]
    assert len(labels) == len(set(labels)) == 2 * 3  # serial at cores 1 only, wavefront at 1 and 2
    assert all(c == 1 for _, a, c in labels if a == "serial")


def test_exclude_and_include(write_config):
    ds = load_config(write_config(CFG)).datasets[1].name
    text = CFG + f"exclude:\n  - {{algorithm: wavefront, cores: 2}}\ninclude:\n  - {{dataset: '{ds}', algorithm: wavefront, cores: 2}}\n"
    pts = expand(load_config(write_config(text)))
    got = {(p.dataset.name, p.axes["algorithm"], p.axes["cores"]) for p in pts}
    assert (ds, "wavefront", 2) in got
    assert all(not (a == "wavefront" and c == 2) or d == ds for d, a, c in got)
    assert len(pts) == 5


def test_runs_multiply_points_and_ids_are_stable(write_config):
    cfg = load_config(write_config(CFG + "runs: 2\n"))
    pts = expand(cfg)
    assert len(pts) == 12 and {p.repeat for p in pts} == {0, 1}
    ids = [run_id(run_parameters(cfg, p), "abc", "v1") for p in pts]
    assert len(set(ids)) == len(ids)
    assert ids == [run_id(run_parameters(cfg, p), "abc", "v1") for p in expand(cfg)]
    assert run_id(run_parameters(cfg, pts[0]), "abc", "v2") != ids[0]
    assert run_id(run_parameters(cfg, pts[0]), "abd", "v1") != ids[0]


def test_optional_kernel_axis(write_config):
    text = CFG.replace("cores: [1, 2]", "cores: [1, 2]\n  kernel: [auto, bsp]")
    pts = expand(load_config(write_config(text)))
    got = [(p.dataset.name, p.axes["algorithm"], p.axes["cores"], p.axes["kernel"]) for p in pts]
    assert len(got) == len(set(got)) == 2 * (1 + 2)  # serial once (kernel auto); wavefront's auto is bsp
    assert all(k == "auto" for _, a, _, k in got if a == "serial")
    assert {k for _, a, _, k in got if a == "wavefront"} == {"bsp"}
    text = text.replace("[serial, wavefront]", "[serial, elastic_divide]")
    pts = expand(load_config(write_config(text)))
    assert sorted(p.axes["kernel"] for p in pts if p.axes["algorithm"] == "elastic_divide") == ["bsp"] * 4 + ["ssp"] * 4


def test_exclude_scoped_to_an_execution():
    """An exclude item naming an execution applies only when the sweep runs that way: one config
    holds the measured points this machine runs and the simulated ones beyond it."""
    from pathlib import Path
    cfg = load_config(Path(__file__).resolve().parents[1] / "configs" / "tucker_nell2_full.yaml")
    ranks = lambda c: sorted({p.axes["ranks"] for p in expand(c)})  # noqa: E731
    assert ranks(cfg) == [1, 2, 32, 512]
    assert ranks(cfg.with_overrides(execution="measured")) == [1, 2]


def test_run_parameters_are_the_experiments_identity_keys():
    """What a run_id hashes, per experiment: the common parameters plus the experiment's own keys
    that change a run (SpTrSV: barrier, schedule_repeats; Tucker: invocations, init, lanczos and ttm unless swept),
    never launcher, timeout or oversubscribe; stored rows keep their run_ids across versions."""
    from spbench.pipeline.config import parse_config
    sptrsv = parse_config({"name": "a", "experiment": "sptrsv", "datasets": ["lap2d-5pt"],
                           "sweep": {"algorithm": ["serial", "growlocal"], "cores": [2], "kernel": ["auto"]},
                           "params": {"growlocal": {"sync_cost": 400}}})
    common = {"experiment": "sptrsv", "dataset": "lap2d-5pt", "repeat": 0, "repeats": 100,
              "execution": "measured", "seed": 0}
    assert [run_parameters(sptrsv, p) for p in expand(sptrsv)] == [
        {**common, "axes": {"algorithm": "serial", "cores": 1, "kernel": "auto"}, "algorithm_params": {},
         "barrier": "auto", "schedule_repeats": 5},
        {**common, "axes": {"algorithm": "growlocal", "cores": 2, "kernel": "bsp"},
         "algorithm_params": {"sync_cost": 400}, "barrier": "auto", "schedule_repeats": 5}]
    assert run_id(run_parameters(sptrsv, expand(sptrsv)[1]), "abc", "v1") == "1922ef886314b3de18d0"
    base = {"name": "b", "experiment": "tucker", "datasets": [{"nell2": {"nnz": 2000, "standin": True}}],
            "sweep": {"algorithm": ["lite"], "ranks": [2], "K": [3]}, "launcher": "srun -n {ranks}",
            "timeout": 60, "oversubscribe": True}
    common = {**common, "experiment": "tucker", "dataset": "nell2", "algorithm_params": {}, "invocations": 1,
              "lanczos": "paper"}
    tucker = parse_config(base)
    assert [run_parameters(tucker, p) for p in expand(tucker)] == [
        {**common, "axes": {"algorithm": "lite", "ranks": 2, "K": 3}, "init": "random", "ttm": "csf"}]
    swept = parse_config({**base, "sweep": {**base["sweep"], "ttm": ["paper"]}, "init": "hosvd"})
    small = swept.with_overrides(scale="small")
    assert [run_parameters(small, p) for p in expand(swept)] == [
        {**common, "axes": {"algorithm": "lite", "ranks": 2, "K": 3, "ttm": "paper"}, "init": "hosvd",
         "repeats": 10, "scale": "small"}]


def test_measured_runs_go_in_passes_simulated_runs_together(write_config):
    """A measured sweep runs run r of every point in pass r (a point's runs spread over the sweep);
    a simulated one keeps a point's runs, and a data set's points, together. Shards deal the same
    points either way."""
    from spbench.pipeline.shard import Shard
    cfg = load_config(write_config(CFG + "runs: 3\n"))
    measured = expand(cfg)
    assert [p.repeat for p in measured] == [0] * 6 + [1] * 6 + [2] * 6
    first_pass = [(p.dataset.name, p.values) for p in measured[:6]]
    assert all([(p.dataset.name, p.values) for p in measured[6 * r:6 * r + 6]] == first_pass for r in (1, 2))
    simulated = expand(cfg.with_overrides(execution="simulate"))
    assert [p.repeat for p in simulated] == [0, 1, 2] * 6
    assert sorted(measured, key=str) == sorted(simulated, key=str)
    shard = Shard(1, 4)
    assert sorted(shard.select(measured), key=str) == sorted(shard.select(simulated), key=str)


def test_measured_sweep_in_passes_resumes_each_row_once(write_config, tmp_path, spbench_cmd):
    """The progress lines of a measured sweep with runs: 2 show pass 1 after every point's first
    run; a rerun after rows of pass 1 were lost runs just those, and each point keeps two rows."""
    import json
    import subprocess
    cfg = write_config(CFG.replace("lap2d-5pt: {grid: 8}", "lap2d-5pt: {grid: 6}") + "runs: 2\nrepeats: 2\n")
    out = tmp_path / "res"
    res = subprocess.run([*spbench_cmd, "run", str(cfg), "--out", str(out)], capture_output=True, text=True)
    assert res.returncode == 0, res.stderr
    began = [line for line in res.stderr.splitlines() if line.startswith("[")]
    assert len(began) == 12 and not any("repeat=1" in line for line in began[:6])
    assert all("repeat=1" in line for line in began[6:])
    rows = {p: json.loads(p.read_text()) for p in (out / "runs").glob("*.json")}
    lost = [p for p, r in rows.items() if r["repeat"] == 1][:4]
    for p in lost:
        p.unlink()
    again = subprocess.run([*spbench_cmd, "run", str(cfg), "--out", str(out)], capture_output=True, text=True)
    assert again.returncode == 0 and "8 already stored, 4 run" in again.stderr, again.stderr
    keys = [(r["dataset"], r["algorithm"], r["cores"], r["repeat"])
            for r in (json.loads(p.read_text()) for p in (out / "runs").glob("*.json"))]
    assert len(keys) == len(set(keys)) == 12
