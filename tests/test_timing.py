"""Timing helpers of the calibrations: round-robin medians."""
from spbench.machine.timing import collect_timings, interleaved_medians


def test_interleaved_medians_visit_every_case_once_per_round_and_keep_medians():
    order = []

    def case(name, seconds):
        def sample():
            order.append(name)
            return seconds.pop(0)
        return sample

    samplers = [case("a", [9.0, 1.0, 2.0, 3.0]), case("b", [9.0, 5.0, 7.0, 6.0])]
    with collect_timings() as groups:
        medians = interleaved_medians(samplers, rounds=3, warmup=1)
    assert order == ["a", "b"] + ["a", "b"] * 3          # warm-up, then round-robin
    assert medians == [2.0, 6.0]                          # the warm-up's 9.0 is not counted
    assert groups == [[1.0, 2.0, 3.0], [5.0, 7.0, 6.0]]   # the spread check sees every timed sample


def test_nested_collectors_end_in_any_order():
    """An inner collector opened while an equal (empty) outer one is open ends without removing the
    outer one; both see the timings made while they were open."""
    from spbench.machine.timing import median_time

    with collect_timings() as outer:
        with collect_timings() as inner:
            median_time(lambda: None, 3)
        median_time(lambda: None, 2)
    assert len(inner) == 1 and len(outer) == 2 and len(inner[0]) == 3
