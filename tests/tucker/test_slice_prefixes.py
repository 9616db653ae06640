"""Per-slice CSF prefix counts (:mod:`slice_prefixes`): equal to a count of the whole tensor,
their per-owner sums equal to the spilled per-rank counts of every scheme placing whole slices,
kept in the counts cache under the data set's identity and never read for another."""
import numpy as np
import pytest

from spbench.tucker import stream_prefixes
from spbench.tucker.hooi.csf import prefix_counts
from spbench.tucker.schemes import SCHEMES
from spbench.tucker.slice_prefixes import SlicePrefixes, slice_owners
from spbench.tucker.stream_metrics import stream_counts, tensor_chunks
from spbench.tucker.stream_prefixes import prefix_sets

CASES = [((40, 30, 200), 2500), ((30, 20, 40, 10), 2500), ((12, 9, 7, 5, 6), 1500)]
STREAMED = sorted(name for name, s in SCHEMES.items() if s.streamed is not None)


def _sizes(t):
    return [np.bincount(t.coords[:, n], minlength=t.dims[n]).astype(np.int64) for n in range(t.nmodes)]


def _per_slice(t, n, S):
    """Distinct (i_n, i_S) of each slice of mode n, by numpy over the whole tensor."""
    keys = np.unique(t.coords[:, [n, *S]], axis=0)
    return np.bincount(keys[:, 0], minlength=t.dims[n])


class _Spilling:
    """A stream that hides its slice owners, so the counts go through the per-rank spill."""

    def __init__(self, inner):
        self._inner = inner

    def __getattr__(self, name):
        return getattr(self._inner, name)

    def slice_owners(self, mode):
        return None


@pytest.mark.parametrize("dims,nnz", CASES)
@pytest.mark.parametrize("chunk,bucket", [(1 << 22, 1 << 22), (97, 40), (5, 3)])
def test_per_slice_counts_equal_the_whole_tensor(make_tensor, tmp_path, monkeypatch, dims, nnz, chunk, bucket):
    monkeypatch.setenv("SPBENCH_DATA", str(tmp_path))
    monkeypatch.setattr(stream_prefixes, "BUCKET", bucket)
    t = make_tensor(5, dims=dims, nnz=nnz, skew=1.4)
    got = SlicePrefixes(t.dims, t.nnz, tensor_chunks(t.coords, chunk), _sizes(t)).per_slice(prefix_sets(t.nmodes))
    for n, S in prefix_sets(t.nmodes):
        assert np.array_equal(got[(n, S)], _per_slice(t, n, S)), (n, S)
    assert not any((tmp_path / "tmp").iterdir())                     # every spill removed


@pytest.mark.parametrize("name", STREAMED)
def test_whole_slice_schemes_sum_what_the_spill_counts(make_tensor, tmp_path, monkeypatch, name):
    """Every registered scheme that reports slice owners: its elements follow them, and the
    per-owner sums equal the per-rank spill and the in-memory reference, at several P."""
    monkeypatch.setenv("SPBENCH_DATA", str(tmp_path))
    t = make_tensor(11, dims=(30, 20, 40, 10), nnz=3000, skew=1.3)
    for P in (1, 7, 64):
        stream = SCHEMES[name].stream(_sizes(t), P, seed=2)
        owners = slice_owners(stream, range(t.nmodes))
        if owners is None:
            continue
        pol = np.empty((stream.rows, t.nnz), dtype=np.int32)
        stream.restart()
        stream.fill(0, [np.ascontiguousarray(t.coords[:, n]) for n in range(t.nmodes)], pol)
        for n in range(t.nmodes):
            assert np.array_equal(pol[n if stream.multi_policy else 0], owners[n][t.coords[:, n]])
        summed, _ = stream_counts(t.dims, t.nnz, tensor_chunks(t.coords, 500), stream, prefixes=_sizes(t))
        spilled, _ = stream_counts(t.dims, t.nnz, tensor_chunks(t.coords, 500), _Spilling(stream), prefixes=_sizes(t))
        dist = SCHEMES[name](t, P, seed=2)
        for n in range(t.nmodes):
            ref = prefix_counts(t.coords, t.dims, n, dist.policy(n), P)
            assert set(summed[n]["csf_prefix_p"]) == set(ref) == set(spilled[n]["csf_prefix_p"])
            for S, want in ref.items():
                assert np.array_equal(summed[n]["csf_prefix_p"][S], want), (name, P, n, S)
                assert np.array_equal(spilled[n]["csf_prefix_p"][S], want), (name, P, n, S)


def test_coarse_places_whole_slices():
    """CoarseG reports its owners; a scheme that splits slices does not."""
    sizes = [np.array([3, 0, 5, 2], dtype=np.int64), np.array([1, 9], dtype=np.int64)]
    assert slice_owners(SCHEMES["coarse"].stream(sizes, 2, seed=0), range(2)) is not None
    assert slice_owners(SCHEMES["lite"].stream(sizes, 2, seed=0), range(2)) is None


def _never():
    raise AssertionError("the tensor was read again")


def test_cached_per_tensor_identity(make_tensor, tmp_path, monkeypatch):
    """Counted once per data set: a second reader of the same identity reads the files, at any
    rank count; another identity, or a damaged file, counts again; with the cache off nothing is
    written."""
    monkeypatch.setenv("SPBENCH_DATA", str(tmp_path))
    t = make_tensor(3, dims=(25, 18, 30), nnz=900, skew=1.2)
    sets = prefix_sets(3)
    first = SlicePrefixes(t.dims, t.nnz, tensor_chunks(t.coords, 100), _sizes(t), identity="abc", label="x")
    want = {s: np.asarray(c).copy() for s, c in first.per_slice(sets).items()}
    again = SlicePrefixes(t.dims, t.nnz, _never, _sizes(t), identity="abc", label="x")
    owners = [np.arange(d, dtype=np.int32) % 4 for d in t.dims]
    got = again.rank_counts(sets, owners, 4)
    for (n, S), per in want.items():
        assert np.array_equal(got[(n, S)], np.bincount(owners[n], weights=per, minlength=4).astype(np.int64))
    files = sorted(first.folder.glob("*.npy"))
    assert len(files) == len(sets)
    files[0].write_bytes(b"not an array")
    redo = SlicePrefixes(t.dims, t.nnz, tensor_chunks(t.coords, 100), _sizes(t), identity="abc", label="x")
    assert all(np.array_equal(redo.per_slice(sets)[s], want[s]) for s in sets)
    other = SlicePrefixes(t.dims, t.nnz, tensor_chunks(t.coords, 100), _sizes(t), identity="other", label="x")
    assert other.folder != first.folder
    monkeypatch.setenv("SPBENCH_COUNTS_CACHE", "0")
    off = SlicePrefixes(t.dims, t.nnz, tensor_chunks(t.coords, 100), _sizes(t), identity="new", label="y")
    assert off.folder is None
    off.per_slice(sets)
    assert not list((tmp_path / "counts").glob("y-*"))
