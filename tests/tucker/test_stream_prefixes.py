"""The ranks' CSF tree shapes streamed through a spill (:mod:`stream_prefixes`) equal
:func:`csf.prefix_counts` of the whole tensor for every streamed scheme, 3-5 modes, P = 1..512,
chunks down to one element, buckets of a few keys and passes of one set; the spill is removed."""
import numpy as np
import pytest

from spbench.tucker import stream_prefixes
from spbench.tucker.hooi.csf import prefix_counts
from spbench.tucker.schemes import SCHEMES
from spbench.tucker.stream_metrics import stream_counts, tensor_chunks
from spbench.tucker.stream_prefixes import prefix_sets, spill_groups

CASES = [((40, 30, 200), 2500), ((30, 20, 40, 10), 2500), ((12, 9, 7, 5, 6), 1500)]
STREAMED = sorted(name for name, s in SCHEMES.items() if s.streamed is not None)


def _sizes(t):
    return [np.bincount(t.coords[:, n], minlength=t.dims[n]).astype(np.int64) for n in range(t.nmodes)]


def _reference(t, dist, P):
    return [prefix_counts(t.coords, t.dims, n, dist.policy(n), P) for n in range(t.nmodes)]


@pytest.mark.parametrize("name", STREAMED)
@pytest.mark.parametrize("dims,nnz", CASES)
def test_streamed_prefixes_equal_whole_tensor(make_tensor, tmp_path, monkeypatch, name, dims, nnz):
    monkeypatch.setenv("SPBENCH_DATA", str(tmp_path))
    t = make_tensor(7, dims=dims, nnz=nnz, skew=1.4)
    runs = [(1, t.nnz, 1 << 22, None), (64, t.nnz, 1 << 22, None), (512, 97, 40, 1), (3, 97, 5, None)]
    if t.nmodes == 3:
        runs.append((3, 1, 300, None))
    for P, chunk, bucket, spill in runs:
        ref = _reference(t, SCHEMES[name](t, P, seed=1), P)
        monkeypatch.setattr(stream_prefixes, "BUCKET", bucket)
        got, _ = stream_counts(t.dims, t.nnz, tensor_chunks(t.coords, chunk),
                               SCHEMES[name].stream(_sizes(t), P, seed=1), prefixes=_sizes(t),
                               **({} if spill is None else {"budget": 1}))
        for n in range(t.nmodes):
            assert set(got[n]["csf_prefix_p"]) == set(ref[n]), (n, P, chunk)
            for S, want in ref[n].items():
                assert np.array_equal(got[n]["csf_prefix_p"][S], want), (n, S, P, chunk, bucket)
        assert not any((tmp_path / "tmp").iterdir())                 # every spill removed


def test_passes_beyond_the_spill_budget(make_tensor, tmp_path, monkeypatch):
    """A spill budget of one set per pass gives the same counts in as many passes as sets."""
    monkeypatch.setenv("SPBENCH_DATA", str(tmp_path))
    t = make_tensor(3, dims=(20, 15, 10, 8), nnz=1200, skew=1.2)
    assert [len(g) for g in spill_groups(t.nnz, 4, budget=8 * t.nnz)] == [1] * len(prefix_sets(4))
    monkeypatch.setenv("SPBENCH_SPILL_BUDGET", str(8 * t.nnz))
    ref = _reference(t, SCHEMES["lite"](t, 16, seed=0), 16)
    timing: dict = {}
    got, _ = stream_counts(t.dims, t.nnz, tensor_chunks(t.coords, 100), SCHEMES["lite"].stream(_sizes(t), 16),
                           prefixes=_sizes(t), timing=timing)
    assert timing["passes"] == len(prefix_sets(4))
    for n in range(4):
        for S, want in ref[n].items():
            assert np.array_equal(got[n]["csf_prefix_p"][S], want)


def test_prefix_sets_are_those_of_prefix_counts(make_tensor):
    t = make_tensor(1, dims=(5, 6, 7, 8, 9), nnz=300)
    owner = np.zeros(t.nnz, dtype=np.int32)
    want = sorted((n, S) for n in range(5) for S in prefix_counts(t.coords, t.dims, n, owner, 2))
    assert sorted(prefix_sets(5)) == want
    assert prefix_sets(3) == [(0, (1,)), (0, (2,)), (1, (0,)), (1, (2,)), (2, (0,)), (2, (1,))]
