"""The ranks' CSF tree shapes streamed through a spill (:mod:`stream_prefixes`) equal
:func:`csf.prefix_counts` of the whole tensor for every streamed scheme, 3-5 modes, P = 1..512,
chunks down to one element, buckets of a few keys and passes of one set; the spill is removed."""
import os

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


NEEDED_CASES = [((40, 30, 200), 2500), ((30, 20, 40, 10), 2500), ((12, 9, 7, 5, 6), 1500), ((9, 30, 6, 25), 2000)]


@pytest.mark.parametrize("name", STREAMED)
@pytest.mark.parametrize("dims,nnz", NEEDED_CASES)
def test_only_the_sets_rank_nodes_reads(make_tensor, tmp_path, monkeypatch, name, dims, nnz):
    """Counting the |S| = 1 sets and then the larger sets of each rank's level order gives every
    rank's tree (level order, nodes per level) equal to the one from every set, for each K asked
    for; the larger sets counted are exactly those read."""
    from spbench.tucker.hooi.csf import rank_nodes
    from spbench.tucker.stream_prefixes import pair_sets, tree_sets

    monkeypatch.setenv("SPBENCH_DATA", str(tmp_path))
    t = make_tensor(11, dims=dims, nnz=nnz, skew=1.5)
    N = t.nmodes
    Ks = [10, [2 + j for j in range(N)], [9 - 2 * (j % 3) for j in range(N)]]
    for P, chunk, bucket in [(1, t.nnz, 1 << 22), (5, 97, 64), (64, 1, 1 << 22), (512, 300, 40)]:
        dist = SCHEMES[name](t, P, seed=2)
        ref = _reference(t, dist, P)
        monkeypatch.setattr(stream_prefixes, "BUCKET", bucket)
        got, _ = stream_counts(t.dims, t.nnz, tensor_chunks(t.coords, chunk),
                               SCHEMES[name].stream(_sizes(t), P, seed=2), prefixes=_sizes(t), prefix_K=Ks)
        counted = {(n, S) for n in range(N) for S in got[n]["csf_prefix_p"]}
        assert counted == set(pair_sets(N)) | set(tree_sets(got, Ks))
        for n in range(N):
            for S, have in got[n]["csf_prefix_p"].items():
                assert np.array_equal(have, ref[n][S]), (n, S, P)
            for K in Ks:
                want = rank_nodes(n, N, ref[n], got[n]["r_p"], got[n]["e_p"], [K] * N if np.ndim(K) == 0 else K)
                assert rank_nodes(n, N, got[n]["csf_prefix_p"], got[n]["r_p"], got[n]["e_p"],
                                  [K] * N if np.ndim(K) == 0 else K) == want, (n, K, P)
        assert not any((tmp_path / "tmp").iterdir())


def test_larger_sets_are_those_of_the_orders_picked():
    """tree_sets reads each rank's order off its |S| = 1 counts: a rank whose pairs with mode 3 are
    fewest puts mode 3 last, so the set it reads at level 2 leaves mode 3 out."""
    from spbench.tucker.stream_prefixes import tree_sets

    P = 2
    pairs = {(1,): [50, 900], (2,): [60, 40], (3,): [900, 50]}
    counts = [{"r_p": [10, 10], "e_p": [1000, 1000], "csf_prefix_p": {S: np.array(v) for S, v in pairs.items()}}]
    counts += [{"r_p": [0] * P, "e_p": [0] * P, "csf_prefix_p": {(j,): np.zeros(P, dtype=np.int64)
                                                                for j in range(4) if j != n}} for n in (1, 2, 3)]
    sets = tree_sets(counts, [10])
    assert [s for s in sets if s[0] == 0] == [(0, (1, 2)), (0, (2, 3))]
    assert tree_sets(counts[:3], [10]) == []            # three modes: no set beyond the pairs


def test_uni_policy_sets_of_the_same_modes_are_counted_once(make_tensor, tmp_path, monkeypatch):
    """Under one policy for every mode, (n, {j}) and (j, {n}) are the same prefixes: one key set,
    one spill file, the same counts for both."""
    from spbench.tucker.stream_prefixes import PrefixSpill, spill_groups

    monkeypatch.setenv("SPBENCH_DATA", str(tmp_path))
    t = make_tensor(5, dims=(20, 15, 10), nnz=800)
    owner = (t.coords[:, 1] % 7).astype(np.int32)
    spill = PrefixSpill(prefix_sets(3), t.dims, _sizes(t), t.nnz, 7, False, tmp_path)
    try:
        assert len(spill.layouts) == 3
        for lo in range(0, t.nnz, 128):
            spill.add([t.coords[lo:lo + 128, n] for n in range(3)], owner[None, lo:lo + 128])
        got = spill.counts()
    finally:
        spill.close()
    for n in range(3):
        for S, want in prefix_counts(t.coords, t.dims, n, owner, 7).items():
            assert np.array_equal(got[(n, S)], want)
    assert [len(g) for g in spill_groups(t.nnz, 3, budget=8 * t.nnz, multi_policy=False)] == [2, 2, 2]


def test_a_sweeps_points_reuse_one_spill_pool(make_tensor, tmp_path, monkeypatch):
    """Inside a spill pool the points' spills overwrite the same files (a second spill at once gets
    a folder of its own) and count alike; the pool is gone when the sweep ends, and the pool of a
    sweep that was killed (nobody holds its lock) is removed by the next; a held one stays."""
    import subprocess
    import sys

    monkeypatch.setenv("SPBENCH_DATA", str(tmp_path))
    t = make_tensor(4, dims=(30, 20, 40), nnz=2000, skew=1.3)
    sets = prefix_sets(3)
    root = stream_prefixes.spill_directory()
    killed = root / "spill-pool-killed"
    killed.mkdir()
    (killed / ".owner").touch()
    (killed / "0.keys").write_bytes(b"x" * 64)
    alive = root / "spill-pool-alive"
    alive.mkdir()
    holder = subprocess.Popen([sys.executable, "-c", "import fcntl, sys, time\n"
                               f"f = open({str(alive / '.owner')!r}, 'a'); fcntl.flock(f, fcntl.LOCK_EX)\n"
                               "print('held', flush=True); time.sleep(60)"], stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline().strip() == "held"
        ref = _reference(t, SCHEMES["lite"](t, 8, seed=0), 8)
        with stream_prefixes.spill_pool() as pool:
            assert not killed.exists() and alive.exists()
            first = stream_prefixes.PrefixSpill(sets, t.dims, _sizes(t), t.nnz, 8, True, root)
            assert first.dir == pool
            inner = stream_prefixes.PrefixSpill(sets, t.dims, _sizes(t), t.nnz, 8, True, root)
            assert inner.dir != pool                           # the pool is in use: a folder of its own
            inner.close()
            first.close()
            files = sorted(p.name for p in pool.glob("*.keys"))
            assert files
            for _ in range(2):                                 # two points, the second overwriting
                got, _ = stream_counts(t.dims, t.nnz, tensor_chunks(t.coords, 300),
                                       SCHEMES["lite"].stream(_sizes(t), 8), prefixes=_sizes(t))
                for n in range(3):
                    for S, want in ref[n].items():
                        assert np.array_equal(got[n]["csf_prefix_p"][S], want)
            assert sorted(p.name for p in pool.glob("*.keys")) == files
            assert all((pool / f).stat().st_size == 8 * t.nnz for f in files)       # overwritten, not appended
            assert os.environ[stream_prefixes.POOL_VARIABLE] == str(pool)
        assert not pool.exists() and stream_prefixes.POOL_VARIABLE not in os.environ
        assert sorted(p.name for p in root.iterdir()) == ["spill-pool-alive"]
    finally:
        holder.kill()
        holder.wait()
