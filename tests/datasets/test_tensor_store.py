"""Tensor store: streaming conversion of .tns text, header, blocks per rank, duplicates, bounded
memory, the convert command, and stand-ins generated straight into a store."""
import gzip
import hashlib
import io
import json
import subprocess
import sys
import textwrap

import numpy as np
import pytest
from click.testing import CliRunner

from spbench.cli.datasets import datasets
from spbench.cli import main
from spbench.datasets import conversion_progress, tns_ingest
from spbench.datasets import tensor_registry as tr
from spbench.datasets.errors import DatasetError
from spbench.datasets.frostt import read_tns, write_tns, write_tns_chunks
from spbench.datasets.store_duplicates import DuplicateScan
from spbench.datasets.tensor_store import (StoreWriter, iter_chunks, load_store, read_block, read_header,
                                           store_path_for, write_store)
from spbench.datasets.tns_ingest import convert_tns
from spbench.datasets.sparse_tensor import SparseTensor


def _random_tensor(seed=0, dims=(9, 7, 11), nnz=300):
    rng = np.random.default_rng(seed)
    cells = rng.choice(int(np.prod(dims)), size=nnz, replace=False)
    coords = np.stack(np.unravel_index(cells, dims), axis=1)
    values = rng.standard_normal(nnz)
    values[:3] = [1 / 3, 1e-300, -12345.678901234567]
    return SparseTensor(coords, values, dims, sum_duplicates=False)


def _same(a, b):
    return a.dims == b.dims and a.coords.shape == b.coords.shape and (a.coords == b.coords).all() \
        and (a.values == b.values).all()


@pytest.mark.parametrize("suffix", [".tns", ".tns.gz"])
def test_round_trip_equals_read_tns(tmp_path, suffix):
    src = write_tns(tmp_path / f"t{suffix}", _random_tensor(), comment="two\nlines")
    out = convert_tns(src, tmp_path / "store")
    assert _same(load_store(out), read_tns(src, cache=False))
    assert read_header(out).source["cleaned"] is False     # a leading comment block needs no second pass


def test_comments_blanks_and_odd_spacing(tmp_path):
    src = tmp_path / "odd.tns"
    src.write_text("# header\n1 1 1 1.5\n\n2 3 1 -2e-3   # trailing comment\n#x\n  1 2 4\t7\r\n 2 2 2  0.25 \n3 1 1 1")
    out = convert_tns(src, tmp_path / "store")
    assert _same(load_store(out), read_tns(src, cache=False))
    assert read_header(out).source["cleaned"] is True


def test_header_contents(tmp_path):
    t = _random_tensor(dims=(9, 7, 11), nnz=50)
    src = write_tns(tmp_path / "h.tns", t)
    out = convert_tns(src)                       # default: the cache, keyed by the file's sha256
    sha = hashlib.sha256(src.read_bytes()).hexdigest()
    assert out == store_path_for(sha, "h")
    h = read_header(out)
    raw = json.loads((out / "header.json").read_text())
    assert raw["format"] == "spbench-tensor-store" and raw["version"] == 1 and raw["index_base"] == 0
    assert h.nnz == 50 and h.dims == tuple(int(c) + 1 for c in t.coords.max(axis=0)) and h.nmodes == 3
    assert h.slices_nonempty == tuple(len(set(t.coords[:, n])) for n in range(3))
    assert h.index_dtypes == ("int32",) * 3 and h.checksum == sha
    assert h.source["sha256"] == sha and h.source["size"] == src.stat().st_size
    assert h.source["mtime_ns"] == src.stat().st_mtime_ns and h.source["path"] == str(src.resolve())
    assert h.duplicates == {"rule": "sum", "removed": 0} and h.source["cleaned"] is False
    assert convert_tns(src, source_sha256=sha) == out          # reused, not converted again


def test_index_columns_int32_and_int64(tmp_path):
    with StoreWriter(tmp_path / "given", 2, dims=(5, 2**31 + 10)) as w:
        w.append([np.array([0, 4]), np.array([3, 2**31 + 9])], [1.0, 2.0])
        h = w.commit(checksum="x", source={}, duplicates={})
    assert h.index_dtypes == ("int32", "int64")
    assert np.load(tmp_path / "given" / "coord1.npy").dtype == np.int64
    src = tmp_path / "long.tns"                  # no dims: the column widens when a long mode shows up
    src.write_text("1 1 0.5\n2 2 1.5\n" + f"3 {2**31 + 7} 2.5\n")
    out = convert_tns(src, tmp_path / "grown", memory_mb=128)
    assert read_header(out).index_dtypes == ("int32", "int64") and read_header(out).dims == (3, 2**31 + 7)
    assert _same(load_store(out), read_tns(src, cache=False))


@pytest.mark.parametrize("ranks", [1, 2, 3, 7])
def test_read_block_per_rank_reassembles(tmp_path, ranks):
    t = _random_tensor(nnz=101)
    out = convert_tns(write_tns(tmp_path / "b.tns", t), tmp_path / "store")
    parts = [read_block(out, (101 * r) // ranks, (101 * (r + 1)) // ranks) for r in range(ranks)]
    assert all(c.dtype == np.int64 and c.shape[1] == 3 for c, _ in parts)
    assert (np.concatenate([c for c, _ in parts]) == t.coords).all()
    assert (np.concatenate([v for _, v in parts]) == t.values).all()
    with pytest.raises(DatasetError, match="outside"):
        read_block(out, 50, 102)
    chunks = list(iter_chunks(out, 40))
    assert [lo for lo, _, _ in chunks] == [0, 40, 80]


@pytest.mark.parametrize("body,lineno,match", [
    ("1 1 1 1.0\n1 2 1 2.0 5\n", 2, "4 fields"),
    ("1 1 1 1.0\n# comment\n\n1 2 3\n", 4, "4 fields"),
    ("1 1 1 1.0\n2 0 1 1.0\n", 2, "1-based"),
    ("1 1 1 1.0\n1 1 1 abc\n", 2, "not a number"),
    ("1 1 1 1.0\n1 1.5 1 2.0\n", 2, "not an integer"),
    ("1 1 1 1.0\n1 1 1 nan\n", 2, "not a finite"),
])
def test_bad_line_one_line_error(tmp_path, body, lineno, match):
    src = tmp_path / "bad.tns"
    src.write_text(body)
    with pytest.raises(DatasetError, match=match) as err:
        convert_tns(src, tmp_path / "store")
    assert str(err.value).startswith(f"{src}: line {lineno}: ") and "\n" not in str(err.value)
    assert not (tmp_path / "store").exists() and [p.name for p in tmp_path.iterdir()] == ["bad.tns"]


def test_truncated_gzip_names_file_and_line(tmp_path):
    lines = "".join(f"{i % 7 + 1} {i % 5 + 1} {i + 1} {i}.5\n" for i in range(20000))
    full = gzip.compress(lines.encode())
    src = tmp_path / "cut.tns.gz"
    src.write_bytes(full[: len(full) // 2])
    with pytest.raises(DatasetError, match=r"line \d+: the compressed data ends") as err:
        convert_tns(src, tmp_path / "store")
    lineno = int(str(err.value).split("line ")[1].split(":")[0])
    assert str(err.value).startswith(str(src)) and 1 < lineno <= 20000
    assert [p.name for p in tmp_path.iterdir()] == ["cut.tns.gz"]


@pytest.mark.parametrize("suffix", [".tns", ".tns.gz"])
def test_small_blocks_cut_lines_clean_and_sum_far_down(tmp_path, monkeypatch, suffix):
    """Text blocks of 29 bytes: lines cut across blocks, a comment and odd blanks in a later block,
    a duplicate across blocks, no final newline; the store holds read_tns's tensor."""
    monkeypatch.setattr(tns_ingest, "block_size_for", lambda memory_bytes: 29)
    t = _random_tensor(nnz=200)
    lines = [" ".join(str(i + 1) for i in c) + f" {float(v)!r}" for c, v in zip(t.coords, t.values)]
    lines[120:120] = ["# a comment far down", "  " + lines[5].replace(" ", "\t", 1)]
    text = "\n".join(lines).encode()
    src = tmp_path / f"cut{suffix}"
    src.write_bytes(gzip.compress(text) if suffix.endswith(".gz") else text)
    out = convert_tns(src, tmp_path / "store")
    s, r = load_store(out), read_tns(src, cache=False)
    order = np.lexsort(s.coords.T[::-1])
    assert (s.coords[order] == r.coords).all() and (s.values[order] == r.values).all() and s.nnz == 200
    assert s.values[5] == 2 * t.values[5]
    assert read_header(out).duplicates["removed"] == 1 and read_header(out).source["cleaned"] is True
    assert read_header(out).checksum == hashlib.sha256(src.read_bytes()).hexdigest()


def test_multi_member_gzip_read_whole(tmp_path):
    """A .gz of several members (pigz, concatenated files) is read to its end, as gzip reads it."""
    t = _random_tensor(nnz=300)
    text = write_tns(tmp_path / "whole.tns", t).read_bytes()
    cut = text.index(b"\n", len(text) // 2) + 1
    src = tmp_path / "members.tns.gz"
    src.write_bytes(gzip.compress(text[:cut]) + gzip.compress(text[cut:]))
    assert _same(load_store(convert_tns(src, tmp_path / "store")), read_tns(src, cache=False))


def test_bad_line_far_down_named_exactly(tmp_path, monkeypatch):
    monkeypatch.setattr(tns_ingest, "block_size_for", lambda memory_bytes: 29)
    lines = [f"{i % 7 + 1} {i % 5 + 1} {i + 1} {i}.5" for i in range(300)]
    lines[240] = "1 1 x 2.0"
    src = tmp_path / "far.tns"
    src.write_text("# header\n" + "\n".join(lines) + "\n")
    with pytest.raises(DatasetError, match="not an integer") as err:
        convert_tns(src, tmp_path / "store")
    assert str(err.value).startswith(f"{src}: line 242: ")


@pytest.mark.slow
def test_conversion_progress_shown_in_a_sweep_and_hidden_by_quiet(tmp_path, monkeypatch):
    """A .tns data set converted on first use by `spbench run` shows bytes, lines, rate on stderr
    (a stand-in drawn on first use shows its nonzeros); --quiet shows nothing."""
    monkeypatch.setattr(conversion_progress, "SILENT_SECONDS", 0.0)
    monkeypatch.setattr(conversion_progress, "LOG_EVERY", 0.0)
    outputs = {}
    for flag in ("", "--quiet"):
        src = write_tns(tmp_path / f"prog{flag.strip('-')}.tns", _random_tensor(seed=len(flag), nnz=300))
        cfg = tmp_path / f"c{flag.strip('-')}.yaml"
        cfg.write_text(f"name: p\nexperiment: tucker\nexecution: simulate\ndatasets:\n  - {{path: {src}}}\n"
                       f"sweep:\n  algorithm: [coarse]\n  ranks: [2]\n  K: [2]\n")
        res = CliRunner().invoke(main, ["run", str(cfg), "--out", str(tmp_path / f"r{flag}"), *filter(None, [flag])])
        assert res.exit_code == 0, res.output
        outputs[flag] = res.output
    shown = [line for line in outputs[""].splitlines() if line.startswith("prog: reading ")]
    assert shown and "300 lines" in shown[-1] and "MB/s" in shown[-1] and "lines/s" in shown[-1]
    assert "reading" not in outputs["--quiet"]
    cfg.write_text(cfg.read_text().replace(f"{{path: {src}}}", "{enron: {nnz: 2000, dim_scale: 0.05, standin: true}}"))
    res = CliRunner().invoke(main, ["run", str(cfg), "--out", str(tmp_path / "standin")])
    assert res.exit_code == 0 and "enron: generating 2,000 of 2,000 (100%)" in res.output, res.output
    stream = io.StringIO()
    with conversion_progress.reporting(stream, enabled=False):
        convert_tns(write_tns(tmp_path / "q.tns", _random_tensor(nnz=30)), tmp_path / "q")
    assert stream.getvalue() == ""


def _duplicated_file(tmp_path):
    src = tmp_path / "dup.tns"
    src.write_text("1 1 1 1.0\n2 2 2 2.0\n1 1 1 0.25\n3 1 2 4.0\n2 2 2 -1.0\n1 1 1 0.125\n")
    return src


def test_duplicates_summed_in_file_order_of_first_occurrence(tmp_path):
    src = _duplicated_file(tmp_path)
    out = convert_tns(src, tmp_path / "store")
    s = load_store(out)
    assert s.coords.tolist() == [[0, 0, 0], [1, 1, 1], [2, 0, 1]]
    assert s.values.tolist() == [1.0 + 0.25 + 0.125, 2.0 - 1.0, 4.0]
    assert read_header(out).duplicates == {"rule": "sum", "removed": 3} and read_header(out).nnz == 3
    r = read_tns(src, cache=False)              # the same tensor; read_tns lists it in coordinate order
    order = np.lexsort(s.coords.T[::-1])
    assert (s.coords[order] == r.coords).all() and (s.values[order] == r.values).all()


def test_duplicates_error_names_the_lines(tmp_path):
    src = _duplicated_file(tmp_path)
    with pytest.raises(DatasetError, match=r"dup.tns: line 3: repeats the coordinates of line 1"):
        convert_tns(src, tmp_path / "store", duplicates="error")
    assert not (tmp_path / "store").exists()


def test_duplicates_across_spilled_partitions(tmp_path):
    """A tiny budget spreads the keys over many partition files; sums still equal read_tns's."""
    rng = np.random.default_rng(4)
    coords = rng.integers(0, 6, size=(5000, 3))
    values = rng.standard_normal(5000)
    src = write_tns_chunks(tmp_path / "many.tns", [(coords.T, values)])
    with StoreWriter(tmp_path / "x", 3) as w:
        w.append(coords, values)
        folder = w.finish_columns()
        scan = DuplicateScan(folder, [c.dtype for c in w.columns], w.nnz, w.final_dims(), 1 << 16)
        assert scan.bits > 2
        scan.run("sum")
        summed = StoreWriter(tmp_path / "y", 3)
        scan.rewrite(summed)
        h = summed.commit(checksum="y", source={}, duplicates={})
    s, r = load_store(h.path), read_tns(src, cache=False)
    order = np.lexsort(s.coords.T[::-1])
    assert scan.removed == 5000 - r.nnz and (s.coords[order] == r.coords).all()
    assert np.array_equal(s.values[order], r.values)


@pytest.mark.slow
def test_bounded_memory_with_a_small_setting(tmp_path):
    """A text file larger than the setting converts with peak memory (VmHWM) within it."""
    t = tr.standin("nell2", nnz=4_500_000, seed=5)
    src = write_tns(tmp_path / "big.tns", t)
    memory_mb = 128
    assert src.stat().st_size > memory_mb * 2**20
    script = textwrap.dedent(f"""
        import pyarrow.csv, numpy
        from spbench.datasets.tns_ingest import convert_tns
        def kb(key):
            return int(open('/proc/self/status').read().split(key + ':')[1].split()[0])
        base = kb('VmRSS')
        convert_tns({str(src)!r}, {str(tmp_path / 'store')!r}, memory_mb={memory_mb})
        print(base, kb('VmHWM'))
    """)
    res = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=240)
    assert res.returncode == 0, res.stderr
    base, peak = map(int, res.stdout.split())
    assert (peak - base) / 1024 < memory_mb
    assert read_header(tmp_path / "store").nnz == t.nnz


def test_convert_command(tmp_path):
    src = write_tns(tmp_path / "c.tns", _random_tensor(nnz=40))
    res = CliRunner().invoke(datasets, ["convert", str(src), "--out", str(tmp_path / "s"), "--memory", "256MB"])
    assert res.exit_code == 0, res.output
    assert "40 nonzeros" in res.output and read_header(tmp_path / "s").nnz == 40
    bad = tmp_path / "bad.tns"
    bad.write_text("1 1 1 1.0\n1 x 1 1.0\n")
    for args in (["convert", str(bad), "--out", str(tmp_path / "b")],
                 ["convert", str(src), "--out", str(tmp_path / "b"), "--memory", "lots"],
                 ["convert", str(src), "--out", str(tmp_path / "s")],
                 ["convert", str(_duplicated_file(tmp_path)), "--out", str(tmp_path / "b"), "--duplicates", "error"]):
        res = CliRunner().invoke(datasets, args)
        assert res.exit_code == 2 and res.output.startswith("Error: ") and res.output.count("\n") == 1, res.output
    assert sorted(p.name for p in tmp_path.iterdir()) == ["bad.tns", "c.tns", "dup.tns", "s"]


def test_path_entry_loads_through_the_store(tmp_path):
    t = _random_tensor(nnz=60)
    src = write_tns(tmp_path / "p.tns.gz", t)
    loaded = tr.resolve({"path": str(src)}).load()
    assert loaded.store.parent.name == "stores" and loaded.header.nnz == 60
    assert loaded.checksum == hashlib.sha256(src.read_bytes()).hexdigest() == loaded.header.checksum
    assert _same(loaded.tensor, t)
    stamp = (loaded.store / "header.json").stat().st_mtime_ns
    assert tr.resolve({"path": str(src)}).load().store == loaded.store
    assert (loaded.store / "header.json").stat().st_mtime_ns == stamp


def test_size_full_entries():
    full = tr.resolve({"nell2": {"size": "full"}})
    spelled = tr.resolve({"nell2": {"nnz": 76_879_419, "dim_scale": 1}})
    assert full.params == {"nnz": 76_879_419, "dim_scale": 1} == spelled.params
    assert tr.standin_dims(tr.TENSORS["nell2"], full.params["dim_scale"]) == (12_092, 9_184, 28_818)
    with pytest.raises(DatasetError, match="size"):
        tr.resolve({"nell2": {"size": "huge"}})
    with pytest.raises(DatasetError, match="drop nnz"):
        tr.resolve({"nell2": {"size": "full", "nnz": 10}})


def test_standin_generated_into_the_store(tmp_path):
    kw = {"nnz": 20_000, "dim_scale": 0.05, "seed": 3}
    loaded = tr.resolve({"enron": kw}).load(fetch=False, standin=True)
    assert loaded.source == "synthetic" and loaded.store == store_path_for(tr.standin_checksum("enron", **kw), "enron")
    h = loaded.header
    assert h.nnz == 20_000 and h.dims == tr.standin_dims(tr.TENSORS["enron"], 0.05)
    assert h.source["kind"] == "standin" and h.source["params"] == kw
    memory = tr.standin("enron", **kw)
    assert _same(loaded.tensor, memory)                       # one generator, in memory or chunked into a store
    again = tr.standin_store("enron", tmp_path / "again", **kw)
    assert _same(load_store(again), memory)
    keys = np.ravel_multi_index(memory.coords.T, memory.dims)
    assert np.unique(keys).size == memory.nnz                  # distinct coordinates
    assert not _same(tr.standin("enron", **{**kw, "seed": 4}), memory)


def test_write_store_of_an_in_memory_tensor(tmp_path):
    t = _random_tensor(nnz=77)
    h = write_store(tmp_path / "w", t.coords, t.values, t.dims, checksum="c", source={"kind": "test"}, chunk=10)
    assert h.nnz == 77 and h.dims == t.dims and h.checksum == "c"
    assert _same(load_store(tmp_path / "w"), t)


def test_fetch_converts_a_frostt_download(tmp_path, http_server, monkeypatch):
    small = tr.standin("nell2", nnz=300, dim_scale=0.01)
    http_server.files["/frostt/nell/nell-2.tns.gz"] = write_tns(tmp_path / "n.tns.gz", small).read_bytes()
    monkeypatch.setenv("SPBENCH_FROSTT_URL", f"{http_server.url}/frostt")
    res = CliRunner().invoke(datasets, ["fetch", "nell2"])
    assert res.exit_code == 0, res.output
    store = res.output.split("(store ")[1].split(")")[0]
    h = read_header(store)
    assert h.dims == tr.TENSORS["nell2"].dims and h.nnz == 300     # the registry's dims, not the largest index
    assert _same(tr.load_tensor("nell2"), SparseTensor(small.coords, small.values, h.dims))
    assert http_server.hits == ["/frostt/nell/nell-2.tns.gz"]
