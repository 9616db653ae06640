"""SparseTensor: duplicates, slices, stats, keys."""
import numpy as np
import pytest

from spbench.datasets.sparse_tensor import SparseTensor, linear_keys


def test_duplicates_are_summed():
    c = [[0, 1, 2], [1, 1, 1], [0, 1, 2], [2, 0, 0]]
    t = SparseTensor(c, [1.0, 2.0, 3.0, 4.0], (3, 2, 3))
    assert t.nnz == 3 and t.nmodes == 3 and t.dims == (3, 2, 3)
    got = {tuple(x): v for x, v in zip(t.coords.tolist(), t.values.tolist())}
    assert got == {(0, 1, 2): 4.0, (1, 1, 1): 2.0, (2, 0, 0): 4.0}
    assert t.coords.dtype == np.int64 and t.values.dtype == np.float64


def test_no_duplicates_keeps_order():
    c = np.array([[2, 0], [0, 1], [1, 1]])
    t = SparseTensor(c, [1, 2, 3])
    assert t.coords.tolist() == c.tolist() and t.dims == (3, 2)


def test_bad_input():
    with pytest.raises(ValueError, match="outside"):
        SparseTensor([[0, 5]], [1.0], (2, 3))
    with pytest.raises(ValueError, match="values"):
        SparseTensor([[0, 1]], [1.0, 2.0], (2, 3))


def test_slices_match_brute_force(make_tensor):
    t = make_tensor(3)
    for n in range(t.nmodes):
        sl = t.slices(n)
        assert sl is t.slices(n)      # cached
        for l in range(t.dims[n]):
            expect = [e for e in range(t.nnz) if t.coords[e, n] == l]
            assert sl.elements(l).tolist() == expect
        assert sl.sizes.tolist() == t.slice_sizes(n).tolist()
        assert t.nonempty_slices(n) == len({int(x) for x in t.coords[:, n]})


def test_stats(make_tensor):
    t = make_tensor(1)
    s = t.stats()
    assert s["nnz"] == t.nnz and s["dims"] == list(t.dims)
    for n, m in enumerate(s["modes"]):
        sizes = np.bincount(t.coords[:, n])
        assert m["largest_slice"] == sizes.max()
        assert m["largest_share"] == pytest.approx(sizes.max() / t.nnz)
        assert m["slices"] == np.count_nonzero(sizes)
        assert set(m["quantiles"]) == {0.5, 0.9, 0.99}


def test_linear_keys_overflow_safe():
    dims = (10**6, 10**7, 10**7, 10**3)     # > 2**62 cells
    rng = np.random.default_rng(0)
    c = np.stack([rng.integers(0, d, 500) for d in dims], axis=1)
    c = np.concatenate([c, c[:50]])
    keys = linear_keys(c, dims)
    assert len(np.unique(keys)) == len({tuple(r) for r in c.tolist()})
    order = np.argsort(keys, kind="stable")
    assert [tuple(r) for r in c[order].tolist()] == sorted(tuple(r) for r in c.tolist())
    t = SparseTensor(c, np.ones(len(c)), dims)
    assert t.nnz == 500 and np.isclose(t.values.sum(), 550)
