"""Distribution schemes (paper §5–§6): one file per scheme, registered in ``SCHEMES``.

A scheme is data (policy arrays), not code paths in the kernels. Each file holds both forms over one shared core:

* serial ``scheme(tensor, P, *, seed=0, **params) -> Distribution`` for any P (simulation), where
  ``Distribution.policies[n]`` is an int32 array over the elements giving π_n(e) ∈ [0, P);
* parallel ``scheme_parallel(comm, block, *, seed=0, **params) -> (owners, info)`` under MPI
  (P = comm.size): ``owners[n]`` is π_n of this rank's input block (:class:`.distribute.Block`),
  equal element for element to the serial policy (tests gather and compare at 1, 2, 3 ranks).

* streamed ``scheme_stream(slice_sizes, P, *, seed=0, **params) -> PolicyStream`` (optional): the
  same policy from the per-mode slice sizes, applied to the tensor store chunk by chunk, so a
  simulated point never holds a per-element array of the whole tensor; a scheme without it (HyperG:
  a partition of the whole hypergraph) is streamed from its serial :class:`Distribution`.

Uni-policy schemes (MediumG, HyperG) use one array for all modes (the same object N times);
multi-policy schemes (CoarseG, Lite) build one per mode. Adding a scheme is one file plus one
line in ``SCHEMES``; :func:`.distribute.distribute` and the simulation both dispatch through it.
What a scheme needs beyond its functions it declares on its :class:`Scheme` (``run_params``,
``offline_partition``, ``extra_metrics``); the experiment, the MPI worker and the launcher read these,
never the scheme's name.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable

from spbench.pipeline.parameters import Parameter, check_parameters
from .coarse import coarse, coarse_parallel, coarse_stream
from .distribution import Distribution, PolicyStream, contiguous_blocks, mode_rng
from .hyper import HYPER_PARAMETERS, hyper, hyper_parallel, partition_cache_dir, partition_memory
from .lite import lite, lite_parallel, lite_stream
from .lite_bound import theorem_6_1_slack
from .medium import MEDIUM_PARAMETERS, medium, medium_parallel, medium_stream

__all__ = ["Distribution", "PolicyStream", "Scheme", "Parameter", "SCHEMES", "get_scheme", "contiguous_blocks",
           "mode_rng"]


@dataclass(frozen=True)
class Scheme:
    """A registered scheme: ``name``, its serial and parallel functions, whether it builds one
    policy per mode, the paper's figure label, its declared ``parameters`` and its streamed form
    (None: the scheme needs the whole tensor in memory).

    Hooks the runs read instead of the scheme's name: ``run_params()`` gives parameters a run adds
    under the config's (HyperG: its partition cache, so a partition of minutes is reused);
    ``offline_partition`` = (what, tool) marks a scheme whose distribution time is an offline
    partition's (``info["partition_seconds"]``, paper Fig. 16); ``extra_metrics(mode_metrics, nnz,
    ranks)`` gives row fields computed from the exact metrics (Lite: Theorem 6.1's slack);
    ``in_memory_bytes(nnz, nmodes, ranks, params)`` = (bytes, what) a scheme without a streamed form
    holds beyond the tensor while it distributes (HyperG: its partitioner), the pre-flight's estimate."""

    name: str
    serial: Callable[..., Distribution]
    parallel: Callable[..., tuple]
    multi_policy: bool
    label: str
    description: str = ""
    parameters: dict = field(default_factory=dict)     # name -> Parameter
    streamed: Callable[..., PolicyStream] | None = None
    slice_bytes: int = 80      # the streamed form's peak bytes per slice while deciding (the memory law)
    nonempty_slice_bytes: int = 0   # and per nonempty slice (pages an empty slice's entries never touch)
    run_params: Callable[[], dict] | None = None
    offline_partition: tuple[str, str] | None = None
    extra_metrics: Callable[[list, int, int], dict] | None = None
    in_memory_bytes: Callable[[int, int, int, dict], tuple] | None = None

    def validate(self, params: dict | None) -> dict:
        """``params`` checked against :attr:`parameters`; a ValueError names the scheme, the key,
        what was expected and the known keys."""
        return check_parameters(f"scheme {self.name!r}", self.parameters, params)

    def __call__(self, tensor, nparts: int, *, seed: int = 0, **params) -> Distribution:
        return self.serial(tensor, nparts, seed=seed, **self.validate(params))

    def stream(self, slice_sizes: list, nparts: int, *, seed: int = 0, **params) -> PolicyStream:
        """The policies from the per-mode slice sizes, chunk by chunk (needs :attr:`streamed`)."""
        return self.streamed(slice_sizes, nparts, seed=seed, **self.validate(params))

    def with_run_params(self, params: dict) -> dict:
        """``params`` over the parameters this scheme adds to every run (:attr:`run_params`)."""
        return {**(self.run_params() if self.run_params is not None else {}), **params}

    def metrics_beyond(self, mode_metrics: list, nnz: int, ranks: int) -> dict:
        """The row fields this scheme adds to its exact metrics (:attr:`extra_metrics`); {} for most."""
        return {} if self.extra_metrics is None else self.extra_metrics(mode_metrics, nnz, ranks)

    def dist_time_kind(self, where: str, cached: bool = False) -> str:
        """What a row's ``dist_time`` measured: the offline partition (:attr:`offline_partition`),
        else the scheme's own computation — ``where``: "simulated" (serial, this machine) or
        "measured" (parallel, max over ranks)."""
        if self.offline_partition is not None:
            what, tool = self.offline_partition
            if where == "simulated":
                return f"{what} (offline, {tool})"
            return f"{what} offline on rank 0 ({tool}" + (", cached partition" if cached else "") + ")"
        if where == "simulated":
            return "serial scheme computation on this machine"
        return "parallel distribution (policy computation + element exchange), max over ranks"


def _lite_slack(mode_metrics: list, nnz: int, ranks: int) -> dict:
    """Lite's row field ``lite_bound_slack``: per bound of Theorem 6.1, its smallest slack over modes."""
    return {"lite_bound_slack": theorem_6_1_slack(mode_metrics, nnz, ranks)}


def _partition_cache() -> dict:
    """HyperG's run parameter: the sweeps' partition cache (partitions take minutes)."""
    return {"cache_dir": str(partition_cache_dir())}


SCHEMES: dict[str, Scheme] = {
    "lite": Scheme("lite", lite, lite_parallel, True, "Lite",
                   "Lite (paper §6, Figure 8): sorted slices, round-robin then bin filling", streamed=lite_stream,
                   slice_bytes=21, nonempty_slice_bytes=16, extra_metrics=_lite_slack),
    "coarse": Scheme("coarse", coarse, coarse_parallel, True, "CoarseG",
                     "CoarseG: random slice order, contiguous balanced blocks per mode", streamed=coarse_stream,
                     slice_bytes=54),
    "medium": Scheme("medium", medium, medium_parallel, False, "MediumG",
                     "MediumG: SPLATT processor grid over randomly permuted indices", MEDIUM_PARAMETERS,
                     streamed=medium_stream, slice_bytes=42),
    "hyper": Scheme("hyper", hyper, hyper_parallel, False, "HyperG",
                    "HyperG: fine-grained hypergraph partitioning (Mt-KaHyPar, KM1)", HYPER_PARAMETERS,
                    run_params=_partition_cache, offline_partition=("hypergraph partitioning", "Mt-KaHyPar"),
                    in_memory_bytes=partition_memory),
}


def get_scheme(name: str) -> Scheme:
    """The registered scheme ``name``; an error lists the known ones."""
    try:
        return SCHEMES[name]
    except KeyError:
        raise KeyError(f"unknown distribution scheme {name!r}; known: {', '.join(sorted(SCHEMES))}") from None
