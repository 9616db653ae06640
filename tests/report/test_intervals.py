"""Bootstrap intervals of ratios of medians and of their geometric mean."""
import numpy as np
import pandas as pd

from spbench.report.intervals import geomean_interval, mann_whitney, point_samples, ratio_of_medians, raw_samples


def test_seeded_interval_is_reproducible():
    rng = np.random.default_rng(0)
    base, new = rng.lognormal(0, 0.2, 30), rng.lognormal(0.1, 0.2, 30)
    a, b = ratio_of_medians(base, new, seed=7), ratio_of_medians(base, new, seed=7)
    assert (a.low, a.high) == (b.low, b.high)
    assert ratio_of_medians(base, new, seed=8).low != a.low


def test_interval_covers_a_known_ratio():
    """Median ratio 1.5 by construction: the 95% interval holds it in most of 40 seeded data sets."""
    rng = np.random.default_rng(1)
    covered = 0
    for i in range(40):
        base = rng.lognormal(0, 0.25, 50)
        new = 1.5 * rng.lognormal(0, 0.25, 50)
        r = ratio_of_medians(base, new, seed=i, resamples=1999)
        covered += r.low <= 1.5 <= r.high
        assert r.low < r.value < r.high
    assert covered >= 34


def test_geomean_interval_covers_a_known_geomean():
    rng = np.random.default_rng(2)
    factors = np.array([1.1, 1.3, 1.2, 1.4, 1.25, 1.15])
    covered = 0
    for trial in range(20):
        ratios = [ratio_of_medians(rng.lognormal(0, 0.2, 40), f * rng.lognormal(0, 0.2, 40),
                                   seed=trial * 10 + j, resamples=999) for j, f in enumerate(factors)]
        value, low, high = geomean_interval(ratios, seed=trial)
        covered += low <= np.exp(np.log(factors).mean()) <= high
        assert low < value < high
    assert covered >= 17


def test_single_samples_have_no_interval():
    r = ratio_of_medians([2.0], [3.0])
    assert r.value == 1.5 and np.isnan(r.low) and r.replicates is None
    assert np.isnan(mann_whitney([2.0], [3.0]))
    value, low, high = geomean_interval([r])
    assert value == 1.5 and np.isnan(low)


def test_samples_are_repetitions_or_runs():
    one = pd.DataFrame({"solve_time": [2.0], "solve_times": [[1.0, 2.0, 3.0, None]]})
    assert list(point_samples(one, "solve_time", "solve_times")) == [1.0, 2.0, 3.0]
    runs = pd.DataFrame({"solve_time": [2.0, 5.0], "solve_times": [[1.0, 2.0, 3.0], "[4, 5, 6]"]})
    assert list(point_samples(runs, "solve_time", "solve_times")) == [2.0, 5.0]
    tucker = pd.DataFrame({"hooi_time": [1.0, 1.2, np.nan]})
    assert list(point_samples(tucker, "hooi_time")) == [1.0, 1.2]
    assert raw_samples("not json").size == 0
