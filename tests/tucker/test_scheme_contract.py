"""The contract every registered distribution scheme keeps (tucker-lite §5-§6), run over the
registry so that registering a scheme is what puts it under test: every policy owns every nonzero
exactly once on a rank in [0, P); a bound the scheme claims through its extra row fields holds
(Lite: Theorem 6.1); the streamed form (a simulated point's) equals the in-memory form; the parallel form under ``mpiexec -n 2`` equals the serial form, and distributed HOOI over
it equals the single-process HOOI. A toy scheme registered from tests/tucker/plugins/ runs the
same contract, and a simulated ``spbench run`` over it writes its rows, and so does a measured one
under ``mpiexec -n 2`` (the plugin named in ``$SPBENCH_PLUGINS``, which the MPI worker loads too)."""
import importlib.util
import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from spbench.tucker.schemes import SCHEMES

HERE = Path(__file__).parent
PLUGIN = HERE / "plugins" / "round_robin.py"
SCRIPT = HERE / "mpi_scripts" / "check_scheme_forms.py"
MPIEXEC = Path(sys.executable).parent / "mpiexec"
TIMEOUT = 20
#: the schemes' parameters for a deterministic run (HyperG: Mt-KaHyPar's deterministic preset, one thread)
PARAMS = {"hyper": {"preset": "deterministic", "threads": 1}}


def _load_plugin():
    spec = importlib.util.spec_from_file_location("round_robin_plugin", PLUGIN)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _usable(scheme) -> bool:
    """Whether the scheme's optional dependency (a module-level ``available()``, HyperG's) is installed."""
    available = getattr(sys.modules[scheme.serial.__module__], "available", None)
    return available is None or available()


def _schemes() -> list:
    return [pytest.param(name, marks=() if _usable(s) else pytest.mark.skip(reason=f"{name}: dependency missing"))
            for name, s in sorted(SCHEMES.items())] + [pytest.param(None, id="plugin")]


@pytest.fixture(params=_schemes())
def scheme(request, monkeypatch):
    """A registered scheme, or (id ``plugin``) the toy scheme registered for this test only."""
    if request.param is None:
        plugin = _load_plugin()
        monkeypatch.setitem(SCHEMES, plugin.NAME, plugin.ROUND_ROBIN)
        return plugin.ROUND_ROBIN
    return SCHEMES[request.param]


@pytest.mark.parametrize("P", [1, 2, 5, 64])
@pytest.mark.parametrize("dims", [(13, 9, 40), (7, 11, 5, 6)])
def test_every_nonzero_owned_once_per_policy(scheme, dims, P, make_tensor):
    t = make_tensor(P, dims=dims, nnz=400)
    d = scheme(t, P, seed=2, **PARAMS.get(scheme.name, {}))
    assert d.nparts == P and len(d.policies) == t.nmodes and d.multi_policy == scheme.multi_policy
    for pol in d.policies:
        assert pol.dtype == np.int32 and pol.shape == (t.nnz,)
        assert pol.min() >= 0 and pol.max() < P
    if not d.multi_policy:
        assert all(p is d.policies[0] for p in d.policies)


@pytest.mark.parametrize("P", [2, 7])
def test_streamed_form_equals_in_memory_form(scheme, P, make_tensor):
    if scheme.streamed is None:
        pytest.skip(f"{scheme.name} has no streamed form (streamed from its in-memory policies)")
    t = make_tensor(P, dims=(12, 30, 8), nnz=500)
    d = scheme(t, P, seed=4)
    sizes = [np.bincount(t.coords[:, n], minlength=L) for n, L in enumerate(t.dims)]
    stream = scheme.stream(sizes, P, seed=4)
    assert stream.rows == (t.nmodes if scheme.multi_policy else 1)
    got = np.empty((stream.rows, t.nnz), dtype=np.int32)
    for _ in range(2):                                   # a second pass after restart is the same
        stream.restart()
        for lo in range(0, t.nnz, 73):                   # chunks in storage order
            cols = [np.ascontiguousarray(t.coords[lo:lo + 73, n]) for n in range(t.nmodes)]
            out = np.empty((stream.rows, len(cols[0])), dtype=np.int32)
            stream.fill(lo, cols, out)
            got[:, lo:lo + 73] = out
        for j in range(stream.rows):
            assert np.array_equal(got[j], d.policy(j)), f"{scheme.name}: streamed policy {j} differs"


@pytest.mark.mpi
@pytest.mark.skipif(not MPIEXEC.exists(), reason=f"no mpiexec beside {sys.executable}")
def test_parallel_form_under_mpi_equals_serial_form(scheme, tmp_path):
    out = tmp_path / "report.json"
    plugin = [str(PLUGIN)] if scheme.serial.__module__ == "round_robin_plugin" else []
    env = {**os.environ, "OMP_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1"}
    proc = subprocess.run([str(MPIEXEC), "-n", "2", sys.executable, "-m", "mpi4py", str(SCRIPT), str(out),
                           scheme.name, *plugin], capture_output=True, text=True, timeout=TIMEOUT, env=env)
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-3000:]
    report = json.loads(out.read_text())
    assert [e["case"] for e in report] == ["3mode", "4mode"]
    for e in report:
        where = f"{scheme.name} on {e['case']} at {e['ranks']} ranks"
        assert e["ranks"] == 2 and e["owners_in_range"], where
        assert e["policy_equal"], f"{where}: parallel policy differs from the serial form"
        assert abs(e["fit"] - e["serial_fit"]) <= 1e-10 * abs(e["serial_fit"]), where


TOY_SWEEP = """
name: toy
experiment: tucker
execution: simulate
fallback: standin
datasets:
  - enron: {nnz: 3000, seed: 5}
sweep:
  algorithm: [round_robin, coarse]
  ranks: [2, 4]
  K: [3]
"""


def test_registered_toy_scheme_runs_a_simulated_sweep(write_config, tmp_path, monkeypatch):
    """The worked example of docs/design.md: a scheme registered from outside the package is a
    sweep's algorithm like any other, and its rows hold the exact metrics of its policies."""
    from click.testing import CliRunner

    from spbench.cli import main
    from spbench.datasets.tensor_registry import standin
    from spbench.tucker.metrics import compute_metrics

    plugin = _load_plugin()
    monkeypatch.setitem(SCHEMES, plugin.NAME, plugin.ROUND_ROBIN)
    out = tmp_path / "res"
    res = CliRunner().invoke(main, ["run", str(write_config(TOY_SWEEP)), "--out", str(out), "--quiet"])
    assert res.exit_code == 0, res.output
    rows = [json.loads(p.read_text()) for p in (out / "runs").glob("*.json")]
    assert sorted((r["algorithm"], r["ranks"], r["status"]) for r in rows) == [
        ("coarse", 2, "ok"), ("coarse", 4, "ok"), ("round_robin", 2, "ok"), ("round_robin", 4, "ok")]
    row = next(r for r in rows if r["algorithm"] == "round_robin" and r["ranks"] == 4)
    tensor = standin("enron", nnz=3000, seed=5)
    direct = compute_metrics(tensor, plugin.round_robin(tensor, 4), K=3).row()
    assert row["mode_metrics"] == direct["mode_metrics"] and row["e_max"] == direct["e_max"]


@pytest.mark.parametrize("P", [2, 5, 64])
@pytest.mark.parametrize("dims", [(13, 9, 40), (7, 11, 5, 6)])
def test_declared_bounds_hold(scheme, dims, P, make_tensor):
    """Where a scheme's extra row fields are the slack of a bound it claims (Lite: Theorem 6.1,
    E_max <= ceil(|E|/P), R_sum <= L_n + P, R_max <= ceil(L_n/P) + 2), no slack is negative."""
    from spbench.tucker.metrics import compute_metrics

    t = make_tensor(P + 1, dims=dims, nnz=400)
    d = scheme(t, P, seed=2, **PARAMS.get(scheme.name, {}))
    extra = scheme.metrics_beyond(compute_metrics(t, d, K=3).row()["mode_metrics"], t.nnz, P)
    slacks = {key: value for key, value in extra.items() if key.endswith("_slack")}
    if not slacks:
        pytest.skip(f"{scheme.name} claims no bound")
    for key, slack in slacks.items():
        assert min(slack.values()) >= 0, f"{scheme.name} at P = {P}: {key} {slack}"


TOY_MEASURED = """
name: toy_measured
experiment: tucker
execution: measured
fallback: standin
timeout: 60
datasets:
  - enron: {nnz: 3000, seed: 5}
sweep:
  algorithm: [round_robin, lite]
  ranks: [2]
  K: [3]
"""


@pytest.mark.mpi
@pytest.mark.timeout(90)
@pytest.mark.skipif(not MPIEXEC.exists(), reason=f"no mpiexec beside {sys.executable}")
def test_registered_toy_scheme_runs_measured_under_mpi(write_config, tmp_path, monkeypatch):
    """A plugin's scheme is a measured sweep's algorithm too: the MPI worker, a new interpreter, loads
    the plugins of ``$SPBENCH_PLUGINS`` as the CLI does. Each row is complete as the worker first
    stores it but for the job's load: the ranks' exact metrics of the toy's policies, Lite's
    Theorem 6.1 slack computed where the row is made, and the machine's load over the job."""
    from click.testing import CliRunner

    from spbench.cli import main
    from spbench.datasets.tensor_registry import standin
    from spbench.experiment_registry import get_experiment
    from spbench.store.row_schema import declared_fields, row_problems
    from spbench.tucker.metrics import compute_metrics

    plugin = _load_plugin()
    monkeypatch.setitem(SCHEMES, plugin.NAME, plugin.ROUND_ROBIN)  # taken back after the test
    monkeypatch.setenv("SPBENCH_PLUGINS", str(PLUGIN))
    out = tmp_path / "res"
    res = CliRunner().invoke(main, ["run", str(write_config(TOY_MEASURED)), "--out", str(out), "--quiet"])
    assert res.exit_code == 0, res.output
    rows = {r["algorithm"]: r for r in (json.loads(p.read_text()) for p in (out / "runs").glob("*.json"))}
    assert sorted(rows) == ["lite", "round_robin"], rows
    fields = declared_fields(get_experiment("tucker"))
    for name, row in rows.items():
        assert row["status"] == "ok" and row["execution"] == "measured" and row["ranks"] == 2, row.get("error")
        assert row_problems(row, fields) == [] and isinstance(row["load"], dict), name
    toy = rows["round_robin"]
    tensor = standin("enron", nnz=3000, seed=5)
    direct = compute_metrics(tensor, plugin.round_robin(tensor, 2), K=3, Q=toy["queries"]).row()
    assert toy["mode_metrics"] == direct["mode_metrics"] and "lite_bound_slack" not in toy
    lite = rows["lite"]
    slack = SCHEMES["lite"].metrics_beyond(lite["mode_metrics"], lite["nnz"], 2)["lite_bound_slack"]
    assert lite["lite_bound_slack"] == slack and min(slack.values()) >= 0
