"""A busy machine is noticed: the load figures over a measurement (synthetic /proc/stat counters,
never the real machine's state), the verdict and its reason, and `spbench calibrate` refusing in one
line (exit 2, nothing written) unless --force."""
import json

import pytest
from click.testing import CliRunner

from spbench.machine import load as machine_load
from spbench.cli import main
from spbench.machine.load import LoadWatch, cpu_counters, timing_spread, verdict

STAT = "cpu  {user} 0 {system} {idle} 0 0 0 {steal} 0 0\ncpu0 1 2 3 4\n"


def test_cpu_counters_reads_the_aggregate_line():
    c = cpu_counters(STAT.format(user=10, system=5, idle=100, steal=3))
    assert c["user"] == 10 and c["system"] == 5 and c["idle"] == 100 and c["steal"] == 3
    assert cpu_counters("intr 1 2 3\n") is None


def _watch(monkeypatch, *, other_cores: float, steal_share: float = 0.0, own_seconds: float = 0.0,
           wall: float = 2.0, hz: int = 100):
    """A LoadWatch over ``wall`` seconds of a 2-core machine on which others used ``other_cores``."""
    clock = iter([100.0, 100.0 + wall])
    busy_jiffies = int(round((other_cores * wall + own_seconds) * hz))
    total = int(2 * wall * hz)
    steal = int(round(steal_share * total))
    stats = iter([STAT.format(user=0, system=0, idle=0, steal=0),
                  STAT.format(user=busy_jiffies, system=0, idle=total - busy_jiffies - steal, steal=steal)])
    own = iter([0.0, own_seconds])
    monkeypatch.setattr(machine_load.time, "monotonic", lambda: next(clock))
    monkeypatch.setattr(machine_load, "cpu_counters", lambda text=None: cpu_counters(next(stats)))
    monkeypatch.setattr(machine_load, "_own_cpu_seconds", lambda: next(own))
    monkeypatch.setattr(machine_load, "_loadavg", lambda: [2.0, 1.5, 1.0])
    return LoadWatch(hz=hz)


def test_another_process_on_both_cores_is_busy(monkeypatch):
    figures = _watch(monkeypatch, other_cores=2.0, own_seconds=0.5).figures(timing_spread([[1, 1, 1, 1]]))
    assert figures["other_cpu_cores"] == pytest.approx(2.0)
    assert figures["busy"] and "other processes used 2.00 cores" in figures["reason"]
    json.dumps(figures)


def test_our_own_threads_do_not_make_the_machine_busy(monkeypatch):
    figures = _watch(monkeypatch, other_cores=0.05, own_seconds=3.9).figures()
    assert figures["other_cpu_cores"] == pytest.approx(0.05, abs=0.01) and not figures["busy"]
    assert figures["reason"] is None and figures["loadavg_start"] == [2.0, 1.5, 1.0]


def test_steal_time_makes_the_machine_busy(monkeypatch):
    figures = _watch(monkeypatch, other_cores=0.0, steal_share=0.2).figures()
    assert figures["steal_fraction"] == pytest.approx(0.2) and figures["busy"]
    assert "stole 20.0%" in figures["reason"]


def test_a_short_interval_gives_no_cpu_shares(monkeypatch):
    figures = _watch(monkeypatch, other_cores=2.0, wall=0.1).figures()
    assert figures["other_cpu_cores"] is None and not figures["busy"]


def test_timing_spread_and_its_verdict():
    quiet = [[1.00, 1.01, 0.99, 1.00, 1.02], [2.0, 2.0, 2.02, 1.98]]
    noisy = [[1.0, 1.9, 1.1, 3.0, 1.2, 2.5]]
    assert timing_spread(quiet) < 0.05
    assert timing_spread(noisy) > machine_load.SPREAD_MAX
    assert timing_spread([[1.0, 2.0]]) is None  # too few timings to tell
    busy, reason = verdict({"timing_spread": timing_spread(noisy)})
    assert busy and "repeated timings spread" in reason
    assert verdict({"other_cpu_cores": None, "steal_fraction": None, "timing_spread": None}) == (False, None)


BUSY = {"busy": True, "reason": "other processes used 1.98 cores on average while we measured (more than 0.25)"}


@pytest.mark.parametrize("when", ["before", "during"])
def test_calibrate_refuses_a_busy_machine(when, tmp_path, monkeypatch):
    from spbench.experiment_registry import get_experiment

    measured = {"load": BUSY if when == "during" else {"busy": False}}
    monkeypatch.setattr(machine_load, "check_now", lambda seconds=1.0: BUSY if when == "before" else {"busy": False})
    monkeypatch.setattr(type(get_experiment("sptrsv")), "measure_calibration", lambda self, quick, cores, force=False: measured)
    out = tmp_path / "cal.json"
    res = CliRunner().invoke(main, ["calibrate", "--experiment", "sptrsv", "--out", str(out)])
    assert res.exit_code == 2 and "Traceback" not in res.output
    assert len(res.output.strip().splitlines()) == 1
    assert "the machine was busy (other processes used 1.98 cores" in res.output and "--force" in res.output
    assert not out.exists()


def test_force_keeps_a_busy_calibration(tmp_path, monkeypatch):
    from spbench.experiment_registry import get_experiment
    from spbench.sptrsv.calibration.calibrate import KIND, SCHEMA_VERSION

    rates = {"t_row": 2e-9, "t_nnz": 1e-9, "t_chain": 0.0, "t_far": 0.0}
    sync = {"barrier": 1e-7, "barrier_omp": 2e-7, "weak_barrier": 5e-8, "p2p_dep": 2e-8}
    measured = {"schema_version": SCHEMA_VERSION, "kind": KIND, "date": "2026-01-01T00:00:00+00:00", "quick": True,
                "machine": {"host": "h", "cpu": "c", "cores": 2}, "serial": rates,
                "cores": {"1": {**rates, **sync}, "2": {**rates, **sync}}, "load": BUSY}

    checked = []
    monkeypatch.setattr(machine_load, "check_now", lambda seconds=1.0: checked.append(1) or BUSY)
    monkeypatch.setattr(type(get_experiment("sptrsv")), "measure_calibration",
                        lambda self, quick, cores, force=False: measured)
    out = tmp_path / "cal.json"
    res = CliRunner().invoke(main, ["calibrate", "--experiment", "sptrsv", "--force", "--out", str(out)])
    assert res.exit_code == 0, res.output
    assert out.exists() and not checked
    assert "BUSY (other processes used 1.98 cores" in res.output


def test_implausible_calibration_is_one_line(tmp_path, monkeypatch):
    from spbench.experiment_registry import get_experiment
    from spbench.sptrsv.calibration.calibrate import ImplausibleCalibration

    def measure(self, quick, cores, force=False):
        raise ImplausibleCalibration("barrier at 2 cores came out 9.0 ns, below the 20 ns ...; nothing written")

    monkeypatch.setattr(machine_load, "check_now", lambda seconds=1.0: {"busy": False})
    monkeypatch.setattr(type(get_experiment("sptrsv")), "measure_calibration", measure)
    res = CliRunner().invoke(main, ["calibrate", "--experiment", "sptrsv", "--out", str(tmp_path / "c.json")])
    assert res.exit_code == 2 and len(res.output.strip().splitlines()) == 1
    assert "came out 9.0 ns" in res.output and not (tmp_path / "c.json").exists()


def test_force_keeps_an_implausible_calibration_and_says_why(tmp_path, monkeypatch):
    """--force keeps what check_physical refused (a quick calibration's per-row rate within noise of
    zero at 2 cores), the reason in the file and in the summary."""
    from spbench.sptrsv.calibration import calibrate as cal

    monkeypatch.setattr(machine_load, "check_now", lambda seconds=1.0: {"busy": False})

    def refuse(costs):
        raise cal.ImplausibleCalibration("t_row (2 cores) came out -0.022 ns: ...; nothing written")

    monkeypatch.setattr(cal, "check_physical", refuse)
    out = tmp_path / "c.json"
    res = CliRunner().invoke(main, ["calibrate", "--experiment", "sptrsv", "--quick", "--cores", "1",
                                    "--out", str(out)])
    assert res.exit_code == 2 and not out.exists()
    res = CliRunner().invoke(main, ["calibrate", "--experiment", "sptrsv", "--quick", "--cores", "1", "--force",
                                    "--out", str(out)])
    assert res.exit_code == 0, res.output
    assert "implausible" in res.output and "kept with --force" in res.output
    assert "kept with --force" in cal.load(out)["implausible"]
