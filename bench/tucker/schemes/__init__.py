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
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable

from ...parameters import Parameter, check_parameters
from .coarse import coarse, coarse_parallel, coarse_stream
from .distribution import Distribution, PolicyStream, contiguous_blocks, mode_rng
from .hyper import HYPER_PARAMETERS, hyper, hyper_parallel
from .lite import lite, lite_parallel, lite_stream
from .medium import MEDIUM_PARAMETERS, medium, medium_parallel, medium_stream

__all__ = ["Distribution", "PolicyStream", "Scheme", "Parameter", "SCHEMES", "get_scheme", "contiguous_blocks",
           "mode_rng"]


@dataclass(frozen=True)
class Scheme:
    """A registered scheme: ``name``, its serial and parallel functions, whether it builds one
    policy per mode, the paper's figure label, its declared ``parameters`` and its streamed form
    (None: the scheme needs the whole tensor in memory)."""

    name: str
    serial: Callable[..., Distribution]
    parallel: Callable[..., tuple]
    multi_policy: bool
    label: str
    description: str = ""
    parameters: dict = field(default_factory=dict)     # name -> Parameter
    streamed: Callable[..., PolicyStream] | None = None
    slice_bytes: int = 80      # the streamed form's peak bytes per slice while deciding (the memory law)

    def validate(self, params: dict | None) -> dict:
        """``params`` checked against :attr:`parameters`; a ValueError names the scheme, the key,
        what was expected and the known keys."""
        return check_parameters(f"scheme {self.name!r}", self.parameters, params)

    def __call__(self, tensor, nparts: int, *, seed: int = 0, **params) -> Distribution:
        return self.serial(tensor, nparts, seed=seed, **self.validate(params))

    def stream(self, slice_sizes: list, nparts: int, *, seed: int = 0, **params) -> PolicyStream:
        """The policies from the per-mode slice sizes, chunk by chunk (needs :attr:`streamed`)."""
        return self.streamed(slice_sizes, nparts, seed=seed, **self.validate(params))


SCHEMES: dict[str, Scheme] = {
    "lite": Scheme("lite", lite, lite_parallel, True, "Lite",
                   "Lite (paper §6, Figure 8): sorted slices, round-robin then bin filling", streamed=lite_stream,
                   slice_bytes=80),
    "coarse": Scheme("coarse", coarse, coarse_parallel, True, "CoarseG",
                     "CoarseG: random slice order, contiguous balanced blocks per mode", streamed=coarse_stream,
                     slice_bytes=40),
    "medium": Scheme("medium", medium, medium_parallel, False, "MediumG",
                     "MediumG: SPLATT processor grid over randomly permuted indices", MEDIUM_PARAMETERS,
                     streamed=medium_stream, slice_bytes=40),
    "hyper": Scheme("hyper", hyper, hyper_parallel, False, "HyperG",
                    "HyperG: fine-grained hypergraph partitioning (Mt-KaHyPar, KM1)", HYPER_PARAMETERS),
}


def get_scheme(name: str) -> Scheme:
    """The registered scheme ``name``; an error lists the known ones."""
    try:
        return SCHEMES[name]
    except KeyError:
        raise KeyError(f"unknown distribution scheme {name!r}; known: {', '.join(sorted(SCHEMES))}") from None
