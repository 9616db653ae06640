"""A store writer killed with -9 leaves its temporary folder in the cache; the next conversion removes
it, and keeps the folders of writers still running (here, or on another host sharing the cache)."""
import os
import signal
import subprocess
import sys
import textwrap

import pytest

from spbench.datasets import tensor_registry as tr
from spbench.datasets.tensor_store import StoreWriter, stores_dir
from spbench.datasets.tns_ingest import convert_tns

KILLED_WRITER = textwrap.dedent("""
    import os, signal, sys
    import numpy as np
    from spbench.datasets.tensor_store import StoreWriter
    writer = StoreWriter(sys.argv[1], 3)
    writer.append(np.zeros((4, 3), dtype=np.int64), np.ones(4))
    print(writer.tmp, flush=True)
    os.kill(os.getpid(), signal.SIGKILL)
""")


def _killed_writer(dst) -> str:
    """The temporary folder a writer into ``dst`` left when it was killed with -9."""
    res = subprocess.run([sys.executable, "-c", KILLED_WRITER, str(dst)], capture_output=True, text=True,
                         env=os.environ.copy())
    assert res.returncode == -signal.SIGKILL, res.stderr
    leftover = res.stdout.strip()
    assert os.path.isdir(leftover)
    return leftover


@pytest.mark.parametrize("start", ["convert", "standin"])
def test_a_killed_conversions_folder_is_removed_at_the_next_start(tmp_path, start):
    leftover = _killed_writer(stores_dir() / "big-pending")
    live = StoreWriter(stores_dir() / "other-pending", 2)    # a conversion running meanwhile
    try:
        if start == "convert":
            src = tmp_path / "t.tns"
            src.write_text("1 1 1.0\n2 2 2.0\n")
            convert_tns(src)
        else:
            tr.standin_store("nell2", nnz=300)
        assert not os.path.exists(leftover)
        assert live.tmp.is_dir()
    finally:
        live.abort()


def test_other_hosts_and_unknown_folders_are_kept(tmp_path):
    stores = stores_dir()
    stores.mkdir(parents=True)
    elsewhere = stores / ".x-pending.another_host.1.abcd1234.part"
    mine = stores / ".not-a-store-folder"
    for folder in (elsewhere, mine):
        folder.mkdir()
    src = tmp_path / "t.tns"
    src.write_text("1 1 1.0\n")
    convert_tns(src)
    assert elsewhere.is_dir() and mine.is_dir()


def test_a_writer_in_a_user_folder_cleans_there_only_its_own_kind(tmp_path):
    leftover = _killed_writer(tmp_path / "out" / "a")
    (tmp_path / "out" / "keep.part").mkdir()
    src = tmp_path / "t.tns"
    src.write_text("1 1 1.0\n")
    convert_tns(src, tmp_path / "out" / "b")
    assert not os.path.exists(leftover) and (tmp_path / "out" / "keep.part").is_dir()
