"""The compiled count of a bucket's distinct prefix keys (radix passes down to a bitmap,
``_prefix_spill.count_unsorted``) equals the reference, numpy's sort then one count per distinct
key: on raw keys of every span, and through :func:`.stream_metrics.stream_counts` on generated
tensors of 3-5 modes, several rank counts and every streamed scheme (tucker-lite Appendix A's CSF
trees, §7's ranks)."""
import numpy as np
import pytest

from spbench.kernels.tucker._prefix_spill import count_distinct, count_unsorted
from spbench.tucker import stream_prefixes
from spbench.tucker.schemes import SCHEMES
from spbench.tucker.stream_metrics import stream_counts, tensor_chunks

STREAMED = sorted(name for name, s in SCHEMES.items() if s.streamed is not None)


def _by_sort(keys, mask, base, size):
    out = np.zeros(size, dtype=np.int64)
    count_distinct(np.sort(keys), mask, base, out)
    return out


@pytest.mark.parametrize("span_bits", [1, 6, 13, 22, 31, 45, 62])
@pytest.mark.parametrize("n", [1, 7, 25, 3000, 200_000])
@pytest.mark.parametrize("bitmap_words", [1, 64, 1 << 12])
def test_counts_equal_sorted_counts(span_bits, n, bitmap_words):
    rng = np.random.default_rng(span_bits * 1000 + n)
    width = 8
    if span_bits < 20:
        keys = rng.integers(0, 1 << span_bits, size=n, dtype=np.int64)
    else:                                          # clusters and repeats, as a skewed tensor gives
        base_keys = rng.integers(0, 1 << span_bits, size=max(n // 10, 1), dtype=np.int64)
        keys = base_keys[rng.integers(0, base_keys.size, size=n)] + rng.integers(0, 40, size=n)
        keys = np.minimum(keys, (1 << span_bits) - 1)
    keys += 5 << 20 if span_bits < 40 else 0          # a range not starting at zero
    mask, base, size = width - 1, 3, width + 3
    want = _by_sort(keys, mask, base, size)
    got = np.zeros(size, dtype=np.int64)
    bits = np.zeros(bitmap_words, dtype=np.uint64)
    count_unsorted(keys.copy(), np.empty(n, dtype=np.int64), mask, base, got, bits)
    assert np.array_equal(got, want)
    assert not bits.any()                              # the bitmap is left zeroed for the next bucket


def test_empty_and_one_key():
    got = np.zeros(4, dtype=np.int64)
    count_unsorted(np.empty(0, dtype=np.int64), np.empty(0, dtype=np.int64), 3, 0, got, np.zeros(1, np.uint64))
    assert not got.any()
    count_unsorted(np.array([6], dtype=np.int64), np.empty(1, dtype=np.int64), 3, 0, got, np.zeros(1, np.uint64))
    assert got.tolist() == [0, 0, 1, 0]


def _sizes(t):
    return [np.bincount(t.coords[:, n], minlength=t.dims[n]).astype(np.int64) for n in range(t.nmodes)]


CASES = [((40, 30, 200), 3000), ((300, 2000, 50, 7), 4000), ((12, 9, 7, 5, 6), 1500), ((5000, 20, 900), 5000),
         ((70000, 25, 300), 6000)]        # a lead mode longer than the 16,384 blocks of its range table


@pytest.mark.parametrize("name", STREAMED)
@pytest.mark.parametrize("dims,nnz", CASES)
def test_stream_counts_equal_the_sorted_path(make_tensor, tmp_path, monkeypatch, name, dims, nnz):
    """Every prefix set's per-rank counts are the same integers by the compiled count and by the
    numpy-sort reference, with bitmaps from one word (radix passes all the way) to the default."""
    monkeypatch.setenv("SPBENCH_DATA", str(tmp_path))
    t = make_tensor(13, dims=dims, nnz=nnz, skew=1.5)
    for P, chunk, bucket, bitmap in [(1, t.nnz, 1 << 22, 1 << 22), (7, 333, 200, 64), (32, 1000, 1 << 22, 64),
                                     (512, 97, 40, 1 << 12)]:
        got = {}
        for counting in ("sort", "radix"):
            monkeypatch.setattr(stream_prefixes, "COUNTING", counting)
            monkeypatch.setattr(stream_prefixes, "BUCKET", bucket)
            monkeypatch.setattr(stream_prefixes, "BITMAP_BITS", bitmap)
            counts, _ = stream_counts(t.dims, t.nnz, tensor_chunks(t.coords, chunk),
                                      SCHEMES[name].stream(_sizes(t), P, seed=3), prefixes=_sizes(t),
                                      prefix_K=[10, 3])
            got[counting] = [c["csf_prefix_p"] for c in counts]
        for n in range(t.nmodes):
            assert set(got["radix"][n]) == set(got["sort"][n])
            for S, want in got["sort"][n].items():
                assert got["radix"][n][S].dtype == want.dtype
                assert np.array_equal(got["radix"][n][S], want), (name, n, S, P)
