"""The FROSTT stand-ins stay the ones drawn before: pinned digests and exponents, the compiled draws
against numpy's own, the hash set against a plain set, the threaded rounds against one loop."""
import hashlib
import json

import numpy as np
import pytest
from click.testing import CliRunner

from spbench.cli import main
from spbench.datasets import tensor_registry as tr
from spbench.datasets import tensor_standins as ts
from spbench.datasets.store_duplicates import key_plan, key_words, mix64
from spbench.kernels.tucker import _standin_draw as kernel

# sha256 of coords (int64) then values (float64) of tr.standin(name, nnz=, dim_scale=, seed=), computed
# with the all-numpy generator that drew the stand-ins before the compiled one (STANDIN_VERSION 2)
PINNED = {
    ("nell2", 200000, None, 0): "28a0c336a98ce309240dee15f507e9e5cb7d874bb01de4dbea4366130c6458ea",
    ("delicious", 200000, None, 1): "c3d7c1438636ce4bf8e942e2233686df4cd7b0b5e66ddb8c6c171a366fb38fb1",
    ("flickr", 100000, 0.1, 2): "2ce611349f81a77b05f4f7b656da84dbb69c13db684ecdda6f74f88925d9b3a5",
    ("enron", 30000, None, 5): "6920a78c9c88c57ce5284ce0c656394a7cd0fdf3b5baa7ab30a41b543169b2a8",
}
# sha256 of the column files of standin_store("nell2", nnz=200000, seed=0), and of its header.json
PINNED_STORE = ("b15180abd352e0defad4d135a654efe00af9ee9f5e118fbdca8132c35a430a3d",
                "7e7db7d6b4e15fb350eca428750b421d09acab628218bc4d88c018cca193aadc")
# powerlaw_exponent(length, share) of that generator (a plain bisection on numpy's sum)
PINNED_EXPONENTS = {(100, 0.5): 1.6985416746675792, (9000, 0.01): 0.5901107754407076,
                    (28818, 0.01): 0.6521282348147186, (50000, 0.9): 3.6490210610594707,
                    (123457, 0.003): 0.5775231555154015, (2143368, 0.01): 0.7875829884148708}


def _digest(*arrays) -> str:
    h = hashlib.sha256()
    for a in arrays:
        h.update(np.ascontiguousarray(a).tobytes())
    return h.hexdigest()


@pytest.mark.parametrize("name, nnz, scale, seed", sorted(PINNED, key=str))
def test_standins_are_the_pinned_ones(name, nnz, scale, seed):
    t = tr.standin(name, nnz=nnz, dim_scale=scale, seed=seed)
    assert _digest(t.coords.astype("<i8"), t.values.astype("<f8")) == PINNED[name, nnz, scale, seed]


def test_standin_store_is_the_pinned_one(tmp_path):
    store = tr.standin_store("nell2", tmp_path / "s", nnz=200_000, seed=0)
    columns = [(store / f).read_bytes() for f in ("coord0.npy", "coord1.npy", "coord2.npy", "values.npy")]
    assert hashlib.sha256(b"".join(columns)).hexdigest() == PINNED_STORE[0]
    assert hashlib.sha256((store / "header.json").read_bytes()).hexdigest() == PINNED_STORE[1]


@pytest.mark.parametrize("length, share", sorted(PINNED_EXPONENTS))
def test_powerlaw_exponents_are_the_pinned_ones(length, share):
    assert ts.powerlaw_exponent(length, share) == PINNED_EXPONENTS[length, share]


def test_share_test_answers_as_numpy_sum_near_and_far_from_the_root():
    length, share = 40_000, 0.004
    i = np.arange(1, length + 1, dtype=float)
    root = ts.powerlaw_exponent(length, share)
    test = ts._ShareTest(length, share)
    for a in [0.0, 0.3, root * (1 - 1e-6), root * (1 - 1e-13), root, np.nextafter(root, 0), np.nextafter(root, 2),
              root * (1 + 1e-12), 1.5, 4.0]:
        assert test.below(float(a)) == bool(1.0 / np.sum(i ** -float(a)) < share), a


def test_powerlaw_sum_estimate_is_within_1e_15():
    for length in (8193, 100_003, 1_000_000):
        i = np.arange(1, length + 1, dtype=float)
        for a in (0.0, 0.37, 1.0, 1 - 1e-12, 1.9, 4.0):
            exact = np.sum(i ** -a)
            assert abs(ts._powerlaw_sum(length, a) - exact) <= 2e-15 * exact, (length, a)


def test_threaded_power_equals_numpy():
    base = np.arange(1, (1 << 20) + 12345, dtype=float)
    out = np.empty_like(base)
    assert np.array_equal(ts._power(base, -0.731, out), base ** -0.731)


@pytest.mark.parametrize("dtype", [np.int32, np.int64])
@pytest.mark.parametrize("n", [0, 1, 2, 1000, 70001])
def test_permutation_is_numpys(n, dtype):
    a, b = np.random.default_rng([n, 1]), np.random.default_rng([n, 1])
    out = np.empty(n, dtype=dtype)
    kernel.permutation(b, out)
    assert np.array_equal(a.permutation(n), out)
    assert a.random() == b.random()            # the same bits consumed


LAWS = [(1, 0.5, 100), (2, 0.9, 1000), (7, 0.2, 3), (50, 0.9, 1_000_000), (64, 0.1, 5000),
        (1000, 0.05, 200_000), (5000, 0.3, 3 << 20), (30_000, 0.01, 1 << 20), (200_000, 0.002, 1 << 20)]


@pytest.mark.parametrize("length, share, m", LAWS)
def test_draw_mode_is_numpys_multinomial_repeat_shuffle(length, share, m):
    pix = ts._law(length, share)
    p = kernel.law_terms(pix)
    for seed in range(2):
        a, b = np.random.default_rng([seed, 7]), np.random.default_rng([seed, 7])
        labels = a.permutation(length)
        mine = np.empty(length, dtype=np.int32)
        kernel.permutation(b, mine)
        for _ in range(2):
            expected = np.repeat(labels, a.multinomial(m, pix))
            a.shuffle(expected)
            out = np.empty(m + 3, dtype=np.int32)
            kernel.draw_mode(b, m, p, mine, out)
            assert np.array_equal(expected, out[:m])
        assert a.random() == b.random()


def _first_unseen(hashes, seen: set, limit: int) -> list:
    keep = []
    for k, h in enumerate(hashes.tolist()):
        if len(keep) == limit:
            break
        if h not in seen:
            seen.add(h)
            keep.append(k)
    return keep


@pytest.mark.parametrize("dims", [(7, 5, 3), (40, 30, 20, 10), (2**40, 2**30, 5)])
def test_seen_hashes_keep_the_first_unseen_in_draw_order(dims):
    rng = np.random.default_rng(3)
    plan = key_plan(dims)
    starts = np.zeros(len(dims), dtype=np.int64)
    starts[[g[0] for g in plan]] = 1
    lengths = np.array(dims, dtype=np.int64)
    seen, table = set(), kernel.SeenHashes(5000)
    ranges = np.empty((len(dims), 2), dtype=np.int64)
    for m, limit in [(300, 300), (900, 250), (5, 5), (0, 4), (1000, 1000)]:
        cols = np.stack([rng.integers(0, min(d, 12), m) for d in dims]).astype(np.int64)
        expected = _first_unseen(mix64(key_words(list(cols), dims, plan)), seen, limit)
        buf = np.concatenate([cols, np.full((len(dims), 9), -1)], axis=1)
        took = table.accept(buf, m, lengths, starts, limit, ranges)
        assert took == len(expected) and table.count == len(seen)
        assert np.array_equal(buf[:, :took], cols[:, expected])
        if took:
            assert np.array_equal(ranges, np.stack([cols[:, expected].min(axis=1), cols[:, expected].max(axis=1)], 1))


def _reference(dims, shares, nnz, seed, round_size):
    """The all-numpy generator: rounds of multinomial counts spread by a shuffle, the first of every
    hash in draw order."""
    rng, value_rng = np.random.default_rng([seed, 0x7E5]), np.random.default_rng([seed, 0x7E5, 1])
    laws, labels = [], []
    for length, share in zip(dims, shares):
        w = np.arange(1, length + 1, dtype=float) ** -ts.powerlaw_exponent(length, min(share, 0.999))
        laws.append(w / w.sum())
        labels.append(rng.permutation(length))
    plan, seen, done, idle = key_plan(dims), set(), 0, 0
    coords, values = [], []
    while done < nnz:
        m = min(round_size, int((nnz - done) * 1.1) + 16)
        cols = []
        for p, lab in zip(laws, labels):
            idx = np.repeat(lab, rng.multinomial(m, p))
            rng.shuffle(idx)
            cols.append(idx)
        take = _first_unseen(mix64(key_words(cols, dims, plan)), seen, nnz - done)
        if not take:
            idle += 1
            assert idle <= 64
            continue
        done += len(take)
        coords.append(np.stack([c[take] for c in cols], axis=1))
        values.append(1.0 - value_rng.random(len(take)))
    return np.concatenate(coords), np.concatenate(values)


@pytest.mark.parametrize("dims, shares, nnz", [((300, 200, 100), (0.05, 0.05, 0.02), 30_000),
                                               ((9, 8, 7), (0.5, 0.3, 0.2), 250),
                                               ((40, 30, 20, 10), (0.2, 0.1, 0.1, 0.3), 20_000)])
def test_threaded_rounds_draw_what_one_loop_draws(dims, shares, nnz, monkeypatch):
    monkeypatch.setattr(ts, "_ROUND", 4096)     # many rounds, the last ones shorter
    coords, values = ts.collect_chunks(ts.standin_chunks(dims, shares, nnz, 11), len(dims))
    ref_coords, ref_values = _reference(dims, shares, nnz, 11, 4096)
    assert np.array_equal(coords, ref_coords) and np.array_equal(values, ref_values)


def test_abandoned_generator_stops_its_thread():
    chunks = ts.standin_columns((3000, 2000, 1000), (0.01, 0.01, 0.01), 100_000, 0)
    cols, values, ranges = next(chunks)
    assert values.size and all(lo >= 0 for lo, _ in ranges)
    chunks.close()


def test_bench_standin_rows_digest_and_table(tmp_path):
    out = tmp_path / "r"
    res = CliRunner().invoke(main, ["bench", "standin", "--tensors", "nell2,enron", "--nnz", "3000",
                                    "--dim-scale", "0.1", "--seed", "1", "--out", str(out), "--quiet"])
    assert res.exit_code == 0, res.output
    assert "| nell2~standin[nnz=3000,scale=0.1,seed=1] |" in res.stdout
    rows = [json.loads(p.read_text()) for p in (out / "runs").glob("*.json")]
    assert sorted(r["item"] for r in rows) == ["enron", "nell2"]
    store = tr.standin_store("nell2", tmp_path / "s", nnz=3000, dim_scale=0.1, seed=1)
    digest = hashlib.sha256(b"".join((store / f).read_bytes()
                                     for f in ("coord0.npy", "coord1.npy", "coord2.npy", "values.npy")))
    row = next(r for r in rows if r["item"] == "nell2")
    assert row["columns_sha256"] == digest.hexdigest() and row["nnz"] == 3000 and row["peak_mb"] > 0
    assert row["units"]["elements_per_s"] == "1/s"
    prof = CliRunner().invoke(main, ["profile", str(out), "--out", str(tmp_path / "p")])
    assert prof.exit_code == 0, prof.output
    assert res.stdout.strip() in (tmp_path / "p" / "r" / "standin.md").read_text()


def test_bench_standin_unknown_tensor_is_one_line_exit_2(tmp_path):
    res = CliRunner().invoke(main, ["bench", "standin", "--tensors", "nope", "--out", str(tmp_path / "r")])
    assert res.exit_code == 2 and len(res.output.strip().splitlines()) == 1 and "--tensors" in res.output
