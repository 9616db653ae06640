"""The streamed per-rank counts equal the whole-tensor ones (:func:`metrics.mode_counts`) for every
registered scheme, 3-5 modes, P = 1..512 and chunks down to one element; the memory law's parts."""
import numpy as np
import pytest

from spbench.datasets.tensor_stats import slice_sizes
from spbench.datasets.tensor_store import write_store
from spbench.tucker.metrics import metrics_from_counts, mode_counts
from spbench.tucker.schemes import SCHEMES
from spbench.tucker.stream_metrics import (bitmap_bytes, passes, simulated_peak_bytes, store_chunks,
                                           stream_counts, tensor_chunks)

CASES = [((40, 30, 200), 2500), ((30, 20, 40, 10), 2500), ((12, 9, 7, 5, 6), 1500)]


def _sizes(t):
    return [np.bincount(t.coords[:, n], minlength=t.dims[n]).astype(np.int64) for n in range(t.nmodes)]


def _stream(name, t, P, seed=0, dist=None):
    """The scheme's streamed form, or the policies of ``dist`` (a partition is not reproducible
    call to call, so the reference's own is streamed)."""
    scheme = SCHEMES[name]
    if scheme.streamed is not None:
        return scheme.stream(_sizes(t), P, seed=seed)
    return (dist or scheme(t, P, seed=seed)).stream()


def _assert_equal(ref, got):
    (rc, rs), (gc, gs) = ref, got
    for n, (r, g) in enumerate(zip(rc, gc)):
        assert set(r) == set(g), n
        for key in r:
            assert np.array_equal(np.asarray(r[key]), np.asarray(g[key])), (n, key)
        assert np.array_equal(rs[n], gs[n]), (n, "sigma")


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(SCHEMES))
@pytest.mark.parametrize("dims,nnz", CASES)
def test_streamed_counts_equal_whole_tensor(make_tensor, name, dims, nnz):
    """Every scheme, P from 1 to 512 (one word per bitmap row and several), chunks of 1, 97 and
    all elements, and a bitmap budget of one byte (one set per pass)."""
    if name == "hyper":
        pytest.importorskip("mtkahypar")
    t = make_tensor(5, dims=dims, nnz=nnz, skew=1.4)
    ranks = (1, 3, 64, 65, 512) if name != "hyper" else (1, 3, 65)
    for P in ranks:
        dist = SCHEMES[name](t, P, seed=0)
        ref = mode_counts(t, dist)
        for chunk, budget in ((t.nnz, None), (97, 1), (1, None)):
            if chunk == 1 and P not in (3, 65):
                continue
            got = stream_counts(t.dims, t.nnz, tensor_chunks(t.coords, chunk), _stream(name, t, P, dist=dist),
                                budget=budget)
            _assert_equal(ref, got)


@pytest.mark.parametrize("name", ["coarse", "medium", "lite"])
def test_store_stream_equals_metrics(make_tensor, tmp_path, name):
    """Streaming the tensor store (int32 columns, chunked reads) gives the metrics of the whole tensor."""
    t = make_tensor(9, dims=(50, 60, 300), nnz=4000, skew=1.6)
    write_store(tmp_path / "s", t.coords, t.values, t.dims, checksum="c", source={})
    sizes = slice_sizes(tmp_path / "s")
    assert all(np.array_equal(a, b) for a, b in zip(sizes, _sizes(t)))
    assert all(np.array_equal(a, b) for a, b in zip(slice_sizes(tmp_path / "s"), sizes))   # cached
    dist = SCHEMES[name](t, 48, seed=2)
    ref, _ = mode_counts(t, dist)
    got, _ = stream_counts(t.dims, t.nnz, store_chunks(tmp_path / "s", 333), SCHEMES[name].stream(sizes, 48, seed=2))
    a = metrics_from_counts(t.dims, t.nnz, 10, None, dist.multi_policy, ref).row()
    b = metrics_from_counts(t.dims, t.nnz, 10, None, dist.multi_policy, got).row()
    assert a == b


def test_given_owners_are_used(make_tensor):
    """σ given per mode (as the MPI worker's) replaces the chain greedy, as in mode_counts: here
    each slice's owner is the rank of its first element."""
    t = make_tensor(3, dims=(30, 40, 50), nnz=2000)
    dist = SCHEMES["medium"](t, 16, seed=0)
    owners = []
    for n in range(3):
        slices, first = np.unique(t.coords[:, n], return_index=True)
        own = np.full(t.dims[n], -1, dtype=np.int32)
        own[slices] = dist.policy(n)[first]
        owners.append(own)
    ref = mode_counts(t, dist, owners=owners)
    got = stream_counts(t.dims, t.nnz, tensor_chunks(t.coords, 500), _stream("medium", t, 16), owners=owners)
    _assert_equal(ref, got)


def test_passes_respect_the_budget():
    """S sets before D sets, never together; a pass holds what fits, a set larger than the budget
    gets a pass alone."""
    dims, P = (1000, 64000, 10), 128
    b = [bitmap_bytes(L, P) for L in dims]
    assert b == [16000, 1024000, 160]
    sets = [("S", 0), ("S", 2), ("D", 0), ("D", 1), ("D", 2)]
    assert passes(sets, dims, P, 20000) == [[("S", 0), ("S", 2)], [("D", 0)], [("D", 1)], [("D", 2)]]
    assert passes(sets, dims, P, 10**9) == [[("S", 0), ("S", 2)], [("D", 0), ("D", 1), ("D", 2)]]


def test_memory_law_grows_with_slices_and_ranks():
    """Between 32 and 512 ranks the law grows by the bitmaps of the largest pass (L·P/8 per mode)
    and the P × P peer marks; nell1's size at 512 ranks stays under 4 GB."""
    dims = (2_902_330, 2_143_368, 25_495_389)
    small, big = (simulated_peak_bytes(dims, 143_599_552, P, True, 40) for P in (32, 512))
    assert simulated_peak_bytes(dims, 143_599_552, 32, True, 200) > small      # deciding can be the peak
    grown = sum(bitmap_bytes(L, 512) - bitmap_bytes(L, 32) for L in dims) + 4 * (512**2 - 32**2)
    assert big - small == grown
    assert big < 4e9
    # an empty slice costs the per-slice part only; nothing falls below `spbench run`'s own process
    sparse = simulated_peak_bytes(dims, 143_599_552, 512, True, 40, nonempty=[L // 10 for L in dims])
    assert big - sparse == 22 * sum(L - L // 10 for L in dims)
    assert simulated_peak_bytes((10, 10, 10), 100, 8, False) == 50e6


def test_a_simulated_point_imports_no_pandas(fresh_python):
    """What `spbench run` imports to run a simulated Tucker point (the CLI, the runner, the tensor
    registry and readers, the streaming engine) leaves pandas and matplotlib out: they would add
    40 MB or more to the process the law's POINT_BASE_BYTES counts as 35 MB."""
    code = ("import sys\n"
            "import spbench.cli, spbench.pipeline.runner, spbench.pipeline.point_process, spbench.pipeline.preflight\n"
            "import spbench.datasets.frostt, spbench.datasets.tensor_registry, spbench.tucker.experiment\n"
            "import spbench.tucker.stream_metrics, spbench.tucker.memory_estimate, spbench.tucker.schemes\n"
            "print(sorted({m.split('.')[0] for m in sys.modules} & {'pandas', 'matplotlib'}))\n")
    assert fresh_python(code) == "[]"
