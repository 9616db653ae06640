"""The cost model's components against the measured worker's (tucker-lite §4.2, §7.2): message
terms counted per message and per word alike on both sides, waiting for other ranks told apart from
the transfers (from the ranks' message traces), the lighter rank's modelled idle time."""
import sys
from pathlib import Path

import numpy as np
import pytest

from spbench.tucker.model.cost_model import ModeLoad, lanczos_steps, predict_from_loads

from .test_model import ROUND_MPI

MPIEXEC = Path(sys.executable).parent / "mpiexec"

COSTS = ROUND_MPI


def _a(*v):
    return np.array(v, dtype=np.int64)


def _load(e=(600, 400), own=(50, 50)):
    """One mode, P = 2: K = 2 (ncv = 4), K̂ = 10, L = 100; rank 0 sends 10 partial sums to rank 1."""
    return ModeLoad(K=2, Khat=10, L=100, e=_a(*e), r=_a(60, 50), x_send=_a(10, 0), x_recv=_a(0, 10),
                    x_peers=_a(1, 1), own=_a(*own), fm_send=_a(0, 10), fm_recv=_a(10, 0), fm_peers=_a(1, 1))


def test_messages_count_the_worker_s_calls_and_charge_alpha_plus_beta():
    """Per Lanczos step: two Alltoallvs, one Allreduce of K̂ words, one of 1 word (j = 0) or two of j
    and j + 1; the core: one Alltoallv of K columns and one Allreduce of K·K̂; one factor transfer. Each
    term's α + β is its charge and the charges add up to comm_time."""
    pred = predict_from_loads([_load()], COSTS, ttm="paper")
    m = pred["messages"]
    ncv = lanczos_steps(2, 100, 10)["ncv"]
    assert m["oracle_alltoallv"]["calls"] == 2 * ncv and m["oracle_alltoallv"]["words"] == 2 * ncv * 10
    assert m["svd_allreduce"]["calls"] == 1 + 2 * (ncv - 1) + ncv
    assert m["svd_allreduce"]["words"] == 1 + sum(2 * j + 1 for j in range(1, ncv)) + ncv * 10
    assert m["factor_transfer"]["calls"] == 1 and m["factor_transfer"]["words"] == 10 * 2
    assert m["core_comm"]["calls"] == 2 and m["core_comm"]["words"] == 10 * 2 + 2 * 10
    assert m["oracle_alltoallv"]["alpha"] == pytest.approx(2 * ncv * COSTS["alpha_alltoallv"])
    assert m["oracle_alltoallv"]["beta"] == pytest.approx(2 * ncv * 10 * COSTS["beta_alltoallv"])
    for term, msg in m.items():
        assert msg["alpha"] + msg["beta"] == pytest.approx(pred["terms"][term])
    assert sum(x["alpha"] + x["beta"] for x in m.values()) == pytest.approx(pred["comm_time"])


def test_wait_is_the_lighter_rank_s_idle_time_and_none_alone():
    """A TTM load that is twice as heavy on rank 0 leaves rank 1 idle for the difference; balanced
    loads leave (almost) nobody waiting; one rank never waits."""
    heavy = predict_from_loads([_load(e=(800, 400))], COSTS, ttm="paper")
    even = predict_from_loads([_load(e=(600, 600), own=(50, 50))], COSTS, ttm="paper")
    ttm_gap = 400 * (COSTS["ttm_elem"] + COSTS["ttm_elem_khat"] * 10)
    assert heavy["wait_time"] >= ttm_gap
    assert even["wait_time"] < heavy["wait_time"] - 0.9 * ttm_gap
    alone = ModeLoad(K=2, Khat=10, L=100, e=_a(600), r=_a(100), x_send=_a(0), x_recv=_a(0), x_peers=_a(0),
                     own=_a(100), fm_send=_a(0), fm_recv=_a(0), fm_peers=_a(0))
    one = predict_from_loads([alone], COSTS, ttm="paper")
    assert one["wait_time"] == 0.0 and one["comm_time"] == 0.0
    assert all(m == {"calls": 0, "words": 0, "alpha": 0, "beta": 0} for m in one["messages"].values())


def test_the_factor_transfer_is_charged_once_per_column_block(monkeypatch):
    """The worker sends the new factor rows in column blocks of TRANSFER_WORDS words per buffer: α per block."""
    import spbench.tucker.hooi.loop as loop

    monkeypatch.setattr(loop, "TRANSFER_WORDS", 10)       # 10 rows a rank: one column a block
    m = predict_from_loads([_load()], COSTS, ttm="paper")["messages"]["factor_transfer"]
    assert m["calls"] == 2 and m["alpha"] == pytest.approx(2 * COSTS["alpha_alltoallv"])


def test_split_waits_takes_the_last_entry_capped_by_the_call():
    from spbench.tucker.hooi.loop import split_waits

    # two calls; rank 0 enters the first 3 s early, rank 1 the second 1 s early (but its call lasts 0.5 s)
    r0 = [("svd_allreduce", 0, 10.0, 13.5), ("oracle_alltoallv", 0, 20.0, 20.2)]
    r1 = [("svd_allreduce", 0, 13.0, 13.5), ("oracle_alltoallv", 0, 19.0, 19.5)]
    waits = split_waits([r0, r1])
    assert np.allclose(waits, [[3.0, 0.0], [0.0, 0.5]])
    assert split_waits([r0, r1[:1]]) is None                       # the ranks' calls differ
    assert split_waits([r0, list(reversed(r1))]) is None


def test_the_clock_tallies_messages_per_term_and_traces_them_by_mode():
    from spbench.tucker.hooi.loop import PARTITION, _Clock, _Partition

    clock = _Clock(trace=True)
    times = dict.fromkeys(PARTITION, 0.0)
    part = _Partition(clock, times, 2)
    part.start()
    part.enter(1)
    for words in (3, 4):
        with clock.message("svd_allreduce", words):
            pass
    with clock:                                         # an untagged call: timed, neither tallied nor traced
        pass
    part.mark("svd_time")
    calls, words, seconds = clock.tally["svd_allreduce"]
    assert (calls, words) == (2, 7) and seconds >= 0
    assert [(t[0], t[1]) for t in clock.trace] == [("svd_allreduce", 1), ("svd_allreduce", 1)]
    assert part.modes[1]["comm_time"] == pytest.approx(clock.seconds)
    assert part.modes[0] == dict.fromkeys(PARTITION, 0.0)
    assert sum(times.values()) == pytest.approx(part.span)


def _rank(times, modes, messages, trace):
    return {"times": times, "modes": modes, "messages": messages, "trace": trace}


def test_worker_rank_times_and_measured_components():
    """The worker's rank_times (each rank's waiting from the traces) and the components the
    validation compares: ttm/svd the slowest rank per mode, comm the transfers, wait the waiting."""
    from spbench.tucker.calibration.model_validation import measured_components
    from spbench.tucker.mpi.worker import with_waits

    t0 = [("svd_allreduce", 0, 1.0, 1.4), ("svd_allreduce", 1, 2.0, 2.1)]
    t1 = [("svd_allreduce", 0, 1.3, 1.4), ("svd_allreduce", 1, 2.0, 2.1)]
    base = {"hooi_time": 3.0, "ttm_time": 1.0, "svd_time": 1.0, "comm_time": 0.5, "other_time": 0.5,
            "fm_time": 0.0, "core_time": 0.0}
    per_rank = with_waits([
        _rank(base, [{"ttm_time": 0.2, "svd_time": 0.6, "comm_time": 0.4, "other_time": 0.0},
                     {"ttm_time": 0.8, "svd_time": 0.4, "comm_time": 0.1, "other_time": 0.5}],
              {"svd_allreduce": [2, 6, 0.5]}, t0),
        _rank({**base, "ttm_time": 1.2, "comm_time": 0.2, "other_time": 0.6},
              [{"ttm_time": 0.5, "svd_time": 0.5, "comm_time": 0.1, "other_time": 0.0},
               {"ttm_time": 0.7, "svd_time": 0.5, "comm_time": 0.1, "other_time": 0.6}],
              {"svd_allreduce": [2, 6, 0.2]}, t1)])
    assert per_rank[0]["times"]["wait_time"] == pytest.approx(0.3)
    assert per_rank[0]["modes"][0]["wait_time"] == pytest.approx(0.3) and per_rank[1]["times"]["wait_time"] == 0
    assert per_rank[0]["messages"]["svd_allreduce"] == [2, 6, 0.5, pytest.approx(0.3)]
    got = measured_components({"hooi_time": 3.0, "rank_times": per_rank})
    assert got["ttm_time"] == pytest.approx(0.5 + 0.8) and got["svd_time"] == pytest.approx(0.6 + 0.5)
    assert got["comm_time"] == pytest.approx(0.2) and got["wait_time"] == pytest.approx(0.3)
    assert got["other_time"] == pytest.approx(0.6) and got["hooi_time"] == 3.0
    assert got["comm_terms"]["svd_allreduce"] == {"calls": 2, "words": 6, "transfer": pytest.approx(0.2),
                                                  "wait": pytest.approx(0.3)}
    broken = with_waits([_rank(base, [], {}, t0), _rank(base, [], {}, t1[:1])])
    assert broken[0]["times"]["wait_time"] is None
    with pytest.raises(RuntimeError, match="traces differ"):
        measured_components({"hooi_time": 3.0, "rank_times": broken})


def test_the_table_marks_small_components_and_breaks_messages_down():
    from spbench.tucker.benchmarks.tables import TUCKER_TIMES, tucker_model_table

    row = {"status": "ok", "scheme": "lite", "ranks": 2, "queries": [8], "dataset": "t",
           "params": {"K": 2, "lanczos": "paper", "ttm": "csf", "repeats": 1, "calibration": "c.json"},
           **{f"{w}_{k}": 0.0 for k in TUCKER_TIMES for w in ("measured", "predicted", "rel_error")},
           "comm_terms": {"svd_allreduce": {"calls": 9, "words": 40, "transfer": 0.002, "wait": 0.001,
                                            "model_calls": 9.0, "model_words": 40.0, "model_alpha": 0.0015,
                                            "model_beta": 0.0005}}}
    row.update(measured_hooi_time=1.0, measured_ttm_time=0.5, rel_error_ttm_time=0.1, measured_svd_time=0.45,
               rel_error_svd_time=-0.3, measured_comm_time=0.05, rel_error_comm_time=2.0)
    text = tucker_model_table([row])
    assert "| +0.10 | -0.30 | (+2.00) |" in text and "| no |" in text
    assert "0 of 1 rows" in text
    assert "| lite | 2 | svd_allreduce | 9 | 9 | 40 | 40 | 2.000 | 1.000 | 1.500 | 0.500 | +0.00 |" in text


@pytest.mark.mpi
@pytest.mark.skipif(not MPIEXEC.exists(), reason=f"no mpiexec beside {sys.executable}")
def test_two_ranks_measure_the_calls_and_words_the_model_counts(make_tensor):
    """The traced worker at two ranks: every message term's calls and words are the model's."""
    from spbench.tucker.calibration.model_validation import validate

    t = make_tensor(4, dims=(60, 45, 35), nnz=2500)
    df = validate({"small": t}, ["lite", "coarse"], [2], {"costs": COSTS}, K=4, repeats=1, timeout=120)
    for row in df.to_dict("records"):
        assert row["measured_wait_time"] >= 0 and row["measured_comm_time"] > 0
        for term, m in row["comm_terms"].items():
            assert m["calls"] == m["model_calls"], (row["scheme"], term)
            assert m["words"] == m["model_words"], (row["scheme"], term)


@pytest.mark.mpi
@pytest.mark.skipif(not MPIEXEC.exists(), reason=f"no mpiexec beside {sys.executable}")
def test_the_micro_benchmark_times_transfers_from_the_last_entry(tmp_path):
    """The MPI micro-benchmark at two ranks (quick): every pattern's line fitted from the calls'
    transfers (from the last rank's entry), α and β never negative."""
    import json
    import os
    import subprocess

    from spbench.tucker.mpi.launch import mpi_module_command

    out = tmp_path / "mb.json"
    cmd = mpi_module_command("spbench.tucker.calibration.mpi_microbench", [out, "--quick"], 2)
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=120,
                          env=dict(os.environ, OMP_NUM_THREADS="1"))
    assert proc.returncode == 0, proc.stderr[-2000:]
    raw = json.loads(out.read_text())
    assert set(raw["patterns"]) == {"pingpong", "allreduce", "alltoallv", "allgatherv"}
    for pat in raw["patterns"].values():
        assert pat["alpha"] >= 0 and pat["beta"] >= 0 and all(t > 0 for t in pat["seconds"])


def test_alpha_is_read_at_the_working_set_of_the_step_before_the_message():
    """With α measured warm and cold (a ladder over the bytes read before a call), a mode whose Z and
    bases stay small is charged the warm α, one streaming far beyond the ladder's top the cold one;
    a single figure (older calibrations, hand-made costs) is charged at every size."""
    from spbench.tucker.model.cost_model import alpha_cost, working_set

    ladder = {**COSTS, "alpha_bytes": [8192.0, 2.0 ** 21, 2.0 ** 24],
              "alpha_allreduce": [2e-6, 3e-6, 8e-6], "alpha_alltoallv": [4e-6, 6e-6, 16e-6]}
    assert alpha_cost(ladder, "alpha_allreduce", 100.0) == pytest.approx(2e-6)
    assert alpha_cost(ladder, "alpha_allreduce", 2.0 ** 30) == pytest.approx(8e-6)
    assert alpha_cost(COSTS, "alpha_allreduce", 2.0 ** 30) == COSTS["alpha_allreduce"]
    small = _load()
    assert working_set(small, 4) == 8.0 * (60 * 10 + 50 * 4 + 10 * 4)
    m = predict_from_loads([small], ladder, ttm="paper")["messages"]
    assert m["svd_allreduce"]["alpha"] == pytest.approx(m["svd_allreduce"]["calls"] * 2e-6)
    assert m["oracle_alltoallv"]["alpha"] == pytest.approx(m["oracle_alltoallv"]["calls"] * 4e-6)
    big = ModeLoad(K=2, Khat=10, L=10 ** 6, e=_a(10 ** 6, 10 ** 6), r=_a(500_000, 500_000), x_send=_a(10, 0),
                   x_recv=_a(0, 10), x_peers=_a(1, 1), own=_a(500_000, 500_000), fm_send=_a(0, 10),
                   fm_recv=_a(10, 0), fm_peers=_a(1, 1))
    m = predict_from_loads([big], ladder, ttm="paper")["messages"]
    assert m["svd_allreduce"]["alpha"] == pytest.approx(m["svd_allreduce"]["calls"] * 8e-6)
    assert m["factor_transfer"]["alpha"] == pytest.approx(16e-6) and m["core_comm"]["alpha"] == pytest.approx(24e-6)


def test_the_left_gram_schmidt_costs_per_word_by_the_size_of_the_rank_s_basis():
    """The left Gram–Schmidt's cost per word is the ladder's at the rank's basis (own^p × ncv words):
    a small basis at the in-cache rung, a basis beyond the ladder at the beyond-cache one."""
    ladder = {**COSTS, "lanczos_left_bytes": [2.0 ** 18, 2.0 ** 28], "lanczos_left_word": [1e-10, 1e-9],
              "lanczos_left_row": 0.0, "lanczos_ritz_madd": 0.0}
    plan = lanczos_steps(2, 100, 10)
    words = lambda own: own * plan["left_j"].sum()              # noqa: E731  (one rank's word passes)
    small = predict_from_loads([_load(own=(50, 50))], ladder, ttm="paper")["terms"]["lanczos_left"]
    assert small == pytest.approx(words(50) * 1e-10)
    huge = ModeLoad(K=2, Khat=10, L=10 ** 7, e=_a(600, 400), r=_a(60, 50), x_send=_a(10, 0), x_recv=_a(0, 10),
                    x_peers=_a(1, 1), own=_a(10 ** 7, 10), fm_send=_a(0, 10), fm_recv=_a(10, 0), fm_peers=_a(1, 1))
    got = predict_from_loads([huge], ladder, ttm="paper")["terms"]["lanczos_left"]
    assert got == pytest.approx(words(10 ** 7) * 1e-9)


def test_the_in_context_costs_add_to_every_alpha_and_every_distributed_query():
    """What a call and a query cost inside HOOI beyond the micro-benchmarks (measured on the worker)
    is added to every α of its pattern, at every working set, and to every query at P > 1 only;
    a negative one never takes α below 0."""
    base = predict_from_loads([_load()], COSTS, ttm="paper")
    ctx = {**COSTS, "alpha_allreduce_context": 1e-6, "alpha_alltoallv_context": 3e-6, "dist_query_context": 2e-7}
    out = predict_from_loads([_load()], ctx, ttm="paper")
    for term, key in (("svd_allreduce", "alpha_allreduce_context"), ("oracle_alltoallv", "alpha_alltoallv_context"),
                      ("factor_transfer", "alpha_alltoallv_context")):
        m, b = out["messages"][term], base["messages"][term]
        assert m["calls"] == b["calls"] and m["beta"] == pytest.approx(b["beta"])
        assert m["alpha"] == pytest.approx(b["alpha"] + m["calls"] * ctx[key]), term
    Q = out["modes"][0]["queries"]
    assert out["svd_time"] == pytest.approx(base["svd_time"] + Q * 2e-7)
    one = ModeLoad(K=2, Khat=10, L=100, e=_a(1000), r=_a(100), x_send=_a(0), x_recv=_a(0), x_peers=_a(0),
                   own=_a(100), fm_send=_a(0), fm_recv=_a(0), fm_peers=_a(0))
    assert predict_from_loads([one], ctx, ttm="paper")["svd_time"] == pytest.approx(
        predict_from_loads([one], COSTS, ttm="paper")["svd_time"])
    from spbench.tucker.model.cost_model import alpha_cost
    assert alpha_cost({**COSTS, "alpha_allreduce_context": -1.0}, "alpha_allreduce", 1e6) == 0.0


def test_in_context_costs_are_the_median_residual_per_call_and_per_query():
    """The in-context calibration reads each cost from validation rows predicted without it: the
    measured transfer per call less the model's α + β per call, the measured SVD work less the
    modelled per query; a median over the runs, and an error when a pattern made no call."""
    from spbench.tucker.calibration.in_context import context_costs

    def row(svd_meas, svd_pred, ar, a2a):
        return {"queries": [40, 40, 40], "measured_svd_time": svd_meas, "predicted_svd_time": svd_pred,
                "comm_terms": {"svd_allreduce": {"calls": 100, "transfer": ar, "model_alpha": 1e-4, "model_beta": 1e-4},
                               "oracle_alltoallv": {"calls": 50, "transfer": a2a, "model_alpha": 5e-5,
                                                    "model_beta": 5e-5}}}
    rows = [row(0.012, 0.0, 0.0012, 0.0006), row(0.024, 0.012, 0.0007, 0.0011), row(0.0, 0.0, 0.0, 0.0)]
    out = context_costs(rows)
    assert out["dist_query_context"] == pytest.approx(0.012 / 120)
    assert out["alpha_allreduce_context"] == pytest.approx((0.0007 - 2e-4) / 100)
    assert out["alpha_alltoallv_context"] == pytest.approx((0.0006 - 1e-4) / 50)
    assert out["_fit"]["dist_query_context"][2] == 0.0
    for r in rows:
        del r["comm_terms"]["oracle_alltoallv"]
    with pytest.raises(RuntimeError, match="alpha_alltoallv_context"):
        context_costs(rows)
