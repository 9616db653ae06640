"""spbench.tucker.mpi.collectives: the helpers on a LocalComm (no mpi4py) and under ``mpiexec -n 3``, and the
LocalComm itself against mpi4py's buffer-spec shapes."""
import importlib.util
import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from spbench.tucker.mpi.collectives import Exchange, LocalComm, alltoallv, mpi_counts

HERE = Path(__file__).parent
SCRIPT = HERE / "mpi_scripts" / "check_mpi_helpers.py"
MPIEXEC = Path(sys.executable).parent / "mpiexec"


def _checks_module():
    spec = importlib.util.spec_from_file_location("check_mpi_helpers", SCRIPT)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_helpers_on_local_comm():
    bad = [c for c in _checks_module().run_checks(LocalComm()) if not c[1]]
    assert not bad, bad


def test_local_comm_never_imports_mpi():
    """The outer process never imports mpi4py.MPI; the helpers, the schemes' parallel
    forms and the row owners on a LocalComm don't."""
    code = ("import sys, importlib.util\n"
            f"spec = importlib.util.spec_from_file_location('c', {str(SCRIPT)!r})\n"
            "m = importlib.util.module_from_spec(spec); spec.loader.exec_module(m)\n"
            "from spbench.tucker.mpi.collectives import LocalComm\n"
            "assert all(ok for _, ok, _ in m.run_checks(LocalComm()))\n"
            "import numpy as np\n"
            "from spbench.tucker.mpi.comm import RowOwners\n"
            "from spbench.tucker.mpi.distribute import Block, distribute\n"
            "c = np.array([[0, 1, 2], [3, 1, 0], [3, 2, 2], [1, 0, 1]])\n"
            "b = Block(c, np.ones(4), 0, 4, (4, 3, 3))\n"
            "for name in ('lite', 'coarse', 'medium'):\n"
            "    dt = distribute(LocalComm(), b, name)\n"
            "    assert (RowOwners.compute(LocalComm(), np.unique(dt.sets[0].coords[:, 0]), 4).owners == 0).all()\n"
            "print('mpi4py.MPI' in sys.modules)\n")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "False"


def test_local_comm_buffer_specs():
    comm = LocalComm()
    assert (comm.size, comm.rank, comm.Get_size(), comm.Get_rank()) == (1, 0, 1, 0)
    a = np.arange(6.0).reshape(3, 2)
    out = np.zeros_like(a)
    comm.Allreduce(a, out, op="ignored")
    assert np.array_equal(out, a)
    out = np.zeros(10)
    comm.Alltoallv([a, (np.array([4]), np.array([2])), None], [out, (np.array([4]), np.array([5])), None])
    assert out.tolist() == [0, 0, 0, 0, 0, 2, 3, 4, 5, 0]
    out = np.zeros(6)
    comm.Allgatherv([a, "d"], [out, [6], [0], "d"])
    assert out.tolist() == list(range(6))
    with pytest.raises(ValueError, match="message of 6 items into a buffer of 4"):
        comm.Allgatherv(a, [np.zeros(4), (np.array([4]), np.array([0])), None])
    ex = np.full(2, 7)
    comm.Exscan(np.array([1, 2]), ex)
    assert ex.tolist() == [7, 7]          # undefined on rank 0 in MPI: untouched
    sc = np.zeros(2, dtype=np.int64)
    comm.Scan(np.array([1, 2]), sc)
    assert sc.tolist() == [1, 2]
    assert comm.allreduce(5) == 5 and comm.allgather("x") == ["x"] and comm.gather(3) == [3]
    assert comm.bcast({"a": 1}) == {"a": 1} and comm.scatter([9]) == 9
    comm.Barrier()
    got, counts = alltoallv(comm, np.arange(4).reshape(2, 2), [2], width=2)
    assert got.tolist() == [[0, 1], [2, 3]] and counts.tolist() == [2]
    assert Exchange([0], [0])(comm, np.zeros((0, 3))).shape == (0, 3)


def test_mpi_counts_overflow():
    assert [c.dtype for c in mpi_counts([1, 2], [3])] == [np.int32, np.int32]
    with pytest.raises(OverflowError, match="2\\*\\*31"):
        mpi_counts([1 << 31])


@pytest.mark.mpi
@pytest.mark.skipif(not MPIEXEC.exists(), reason=f"no mpiexec beside {sys.executable}")
def test_helpers_under_mpiexec(tmp_path):
    out = tmp_path / "report.json"
    env = {**os.environ, "OMP_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1"}
    proc = subprocess.run([str(MPIEXEC), "-n", "3", sys.executable, "-m", "mpi4py", str(SCRIPT), str(out)],
                          capture_output=True, text=True, timeout=120, env=env)
    assert proc.returncode == 0, proc.stderr[-3000:]
    report = json.loads(out.read_text())
    assert len(report) == 13
    bad = [e for e in report if not e["ok"]]
    assert not bad, bad


def test_a_rank_imports_no_pandas(fresh_python):
    """What the MPI worker's ranks import (the row store, plugins, progress, the task loop, the
    distribution, HOOI, the schemes) leaves pandas out: it would add about 60 MB to every rank's
    peak, which the pre-flight's per-rank law does not count."""
    code = ("import sys\n"
            "import spbench.tucker.mpi.worker, spbench.store.results, spbench.plugins, spbench.tucker.mpi.job_progress\n"
            "import spbench.tucker.mpi.task_loop, spbench.tucker.mpi.distribute, spbench.tucker.hooi.loop\n"
            "import spbench.tucker.schemes, spbench.tucker.rank_usage\n"
            "print(sorted({m.split('.')[0] for m in sys.modules} & {'pandas', 'matplotlib'}))\n")
    assert fresh_python(code) == "[]"
