"""The ``--scale`` names a sweep accepts and the name of a scaled sweep (``<name>_<scale>``).

A leaf module: the config parser and the figures both read it, and neither imports the other.
"""
from __future__ import annotations

__all__ = ["SCALES", "scaled_name"]

#: ``full`` runs the config as written; ``small`` is the quick variant; ``paper``: SpTrSV stand-ins at
#: the paper matrices' own rows and nonzeros (:meth:`spbench.pipeline.config.Config.scaled`)
SCALES = ("full", "small", "paper")


def scaled_name(name: str, scale: str) -> str:
    """The config name rows of a ``--scale`` run carry."""
    return f"{name}_{scale}"
