"""One protocol for the data sets a config names, SpTrSV matrices and Tucker tensors alike
(docs/design.md, "Data sets").

Each registry (``registry`` for matrices, ``tensor_registry`` for tensors) offers the same
module function ``resolve(entry) -> Dataset`` for a config's ``datasets:`` entry, and its data
sets the same methods: ``load`` (the data, from the cache, a download, a file or the stand-in)
and ``scaled`` (the stand-in shrunk for ``--scale small``). ``data_kind`` says which of the two
a data set is; ``kind`` says where it comes from (``suitesparse``, ``synthetic``, ``frostt``,
``file``).
"""
from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass
from typing import ClassVar

DATA_KINDS = ("matrix", "tensor")


@dataclass(frozen=True)
class LoadedDataset:
    """A loaded data set: its row name, ``real`` or ``synthetic``, and its sha256 identity."""

    name: str
    source: str
    checksum: str


class Dataset(ABC):
    """What a config's data set entry resolved to: ``name`` (as rows show it), ``kind`` (where
    it comes from) and ``params`` (what picks or generates it)."""

    data_kind: ClassVar[str]
    name: str
    kind: str
    params: dict

    @abstractmethod
    def load(self, *, fetch: bool = True, standin: bool = False, progress=None,
             duplicates: str = "sum") -> LoadedDataset:
        """The data: real when cached (or downloaded when ``fetch``), else the synthetic stand-in
        when ``standin``, else a DatasetError naming the data set. ``progress`` is told what a
        long load (download, conversion, generation) has done; ``duplicates`` is the rule for a
        file's repeated coordinates ("sum", or "error" where the kind supports refusing them)."""

    @abstractmethod
    def scaled(self, factor: float) -> "Dataset":
        """This data set with its stand-in about ``factor`` times as large (``--scale small``);
        a real data set, when cached, and a file are used as they are."""
