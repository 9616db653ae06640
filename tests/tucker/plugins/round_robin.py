"""A toy distribution scheme registered from outside the package, the worked example of adding a
Tucker scheme (docs/design.md): along every mode n, slice l goes to rank l mod P (multi-policy).
It has the three forms of a scheme (tucker-lite §5: serial for any P, parallel under MPI, streamed
over a tensor store) and no parameters; ``register()`` puts it in the registry."""
from __future__ import annotations

import numpy as np

from spbench.tucker.schemes import SCHEMES, Distribution, PolicyStream, Scheme

NAME = "round_robin"


def round_robin_policies(coords: np.ndarray, nparts: int) -> list:
    """π_n(e) = (mode-n index of e) mod P, for every mode."""
    return [(coords[:, n] % nparts).astype(np.int32) for n in range(coords.shape[1])]


def round_robin(tensor, nparts: int, *, seed: int = 0) -> Distribution:
    """Serial form: the policies of every element for ``nparts`` ranks."""
    return Distribution(NAME, int(nparts), tuple(round_robin_policies(tensor.coords, int(nparts))), True)


def round_robin_parallel(comm, block, *, seed: int = 0) -> tuple[list, dict]:
    """Parallel form: the policies of this rank's input block (P = comm.size); no communication."""
    return round_robin_policies(block.coords, comm.size), {}


class _RoundRobinStream(PolicyStream):
    def fill(self, lo: int, cols: list, out: np.ndarray) -> None:
        for n, index in enumerate(cols):
            np.remainder(index, self.nparts, out=out[n, :len(index)], casting="unsafe")


def round_robin_stream(slice_sizes: list, nparts: int, *, seed: int = 0) -> PolicyStream:
    """Streamed form: the same policies chunk by chunk from the store's coordinates."""
    return _RoundRobinStream(NAME, int(nparts), len(slice_sizes), True)


ROUND_ROBIN = Scheme(NAME, round_robin, round_robin_parallel, True, "RoundRobin",
                     "toy: slice l of every mode on rank l mod P", streamed=round_robin_stream, slice_bytes=8)


def register() -> Scheme:
    """Add the toy scheme to the registry (the one line a scheme of the package has in SCHEMES)."""
    SCHEMES[NAME] = ROUND_ROBIN
    return ROUND_ROBIN
