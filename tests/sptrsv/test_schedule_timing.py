"""Scheduling times a sweep can trust: each the median of several calls within a budget, the first
call's schedule kept, the calls and their spread as row fields, a noisy point said so."""
import json

import numpy as np
import pytest

from spbench.datasets import synthetic
from spbench.sptrsv import execute, schedule_only
from spbench.sptrsv.dag import DAG
from spbench.sptrsv.execute import NOISY_SPREAD, plan_schedule, prepare_lower, schedule_timing

TIMING_FIELDS = {"schedule_time", "schedule_times", "schedule_calls", "schedule_spread", "schedule_noisy"}


@pytest.fixture(scope="module")
def dag():
    return DAG(prepare_lower(synthetic.generate("lap2d-5pt", {"grid": 10})))


@pytest.fixture
def counted(monkeypatch):
    """growlocal wrapped so each call is counted and returns its own object."""
    calls = []
    real = execute.SCHEDULERS["growlocal"]

    def scheduler(dag, cores, **params):
        calls.append(params)
        return real(dag, cores, **params)
    monkeypatch.setitem(execute.SCHEDULERS, "growlocal", scheduler)
    return calls


def test_the_median_of_the_calls_and_the_first_schedule(dag, counted):
    plan = plan_schedule(dag, "growlocal", 2, repeats=4)
    assert len(counted) == 4 and len(plan.schedule_times) == 4
    assert plan.schedule_time == np.median(plan.schedule_times)
    fields = plan.timing()
    assert set(fields) == TIMING_FIELDS and fields["schedule_calls"] == 4
    assert fields["schedule_times"] == list(plan.schedule_times)
    json.dumps(fields)


def test_one_call_by_default_and_no_more_than_the_budget_allows(dag, counted):
    assert len(plan_schedule(dag, "growlocal", 2).schedule_times) == 1
    counted.clear()
    plan = plan_schedule(dag, "growlocal", 2, repeats=5, budget=0.0)
    assert len(counted) == 1 and plan.timing()["schedule_calls"] == 1


def test_a_deadline_binds_the_first_call_only(dag, monkeypatch):
    seen = []
    real = execute.SCHEDULERS["hdagg"]
    monkeypatch.setitem(execute.SCHEDULERS, "hdagg", lambda d, c, **p: seen.append(p) or real(d, c, **p))
    plan_schedule(dag, "hdagg", 2, repeats=3, deadline=1e12)
    assert "deadline" in seen[0] and not any("deadline" in p for p in seen[1:]) and len(seen) == 3


def test_p2p_task_graph_built_in_every_call(dag):
    plan = plan_schedule(dag, "growlocal", 2, kernel="p2p", repeats=3)
    assert plan.kernel == "p2p" and plan.tasks is not None and len(plan.schedule_times) == 3


@pytest.mark.parametrize("times, spread, noisy", [
    ([1.0], 1.0, None),
    ([1.0, 9.0], 1.8, None),  # of two calls the median is their mean: no call stands out
    ([1.0, 1.0, 1.1], 1.1, False),
    ([1.0, 1.0, 1.0, 1.0, NOISY_SPREAD + 0.5], NOISY_SPREAD + 0.5, True),
])
def test_spread_and_noisy(times, spread, noisy):
    fields = schedule_timing(times)
    assert fields["schedule_spread"] == pytest.approx(spread) and fields["schedule_noisy"] is noisy
    assert fields["schedule_time"] == np.median(times) and fields["schedule_calls"] == len(times)


def test_schedule_point_repeats_and_keeps_its_timeout(dag):
    row = schedule_only.schedule_point(dag, "growlocal", 4, repeats=3)
    assert TIMING_FIELDS <= set(row) and row["schedule_calls"] == 3
    timeout = schedule_only.schedule_point(dag, "hdagg", 4, budget=1e-9, repeats=3)
    assert timeout["status"] == "timeout" and "schedule_calls" not in timeout
