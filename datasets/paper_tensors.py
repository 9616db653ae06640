"""The tucker-lite paper's eight FROSTT tensors (Fig. 9): sizes, where to get them, stand-in recipes.

Sizes are the exact FROSTT ones (amazon, patents and reddit nnz are rounded
there). FROSTT publishes no checksums: the sha256 of the first download is recorded in
``$SPBENCH_DATA/frostt/checksums.json`` and enforced afterwards (``fetch.download``).

Stand-in recipes (the model is in ``tensor_standins``): ``standin_nnz`` nonzeros (2e5-5e5:
seconds to generate) in mode lengths scaled by ``dim_scale``. ``max_share`` values are
assumptions except enron's 10% (the paper: slices of ~5M elements out of 54M, placed here in its
two short modes): large slices (2-10%) in the short modes, small ones (<= 0.5%) in the longest
mode, which gets most of MediumG's grid, consistent with the paper reporting near-perfect TTM
balance for MediumG and bad balance for CoarseG (big tensors "have very large slices"; patents
has only 46 slices in mode 1).
"""
from __future__ import annotations

import os
from dataclasses import dataclass

from .errors import DatasetError

DEFAULT_URL_BASE = "https://s3.us-east-2.amazonaws.com/frostt/frostt_data"


def url_base() -> str:
    """FROSTT base URL, overridable by ``$SPBENCH_FROSTT_URL`` (mirrors, tests)."""
    return (os.environ.get("SPBENCH_FROSTT_URL") or DEFAULT_URL_BASE).rstrip("/")


@dataclass(frozen=True)
class FrosttTensor:
    """One row of the paper's Fig. 9 plus where to get it and its stand-in recipe."""

    name: str                  # the paper's name
    path: str                  # FROSTT <dir>/<file> (without .tns.gz)
    dims: tuple
    nnz: int
    dim_scale: float           # stand-in mode lengths = dims * dim_scale (>= min(L, 64))
    standin_nnz: int
    max_share: tuple           # stand-in: largest slice's share of nnz, per mode
    sha256: str | None = None

    @property
    def nmodes(self) -> int:
        return len(self.dims)

    @property
    def file_name(self) -> str:
        return self.path.rsplit("/", 1)[-1] + ".tns.gz"

    def url(self, base: str | None = None) -> str:
        return f"{(base or url_base()).rstrip('/')}/{self.path}.tns.gz"


TENSORS: dict[str, FrosttTensor] = {t.name: t for t in [
    FrosttTensor("delicious", "delicious/delicious-4d", (532_924, 17_262_471, 2_480_308, 1_443), 140_126_181,
                 0.01, 500_000, (0.01, 0.002, 0.005, 0.05)),
    FrosttTensor("enron", "enron/enron", (6_066, 5_699, 244_268, 1_176), 54_202_099,
                 0.1, 500_000, (0.10, 0.10, 0.005, 0.03)),
    FrosttTensor("flickr", "flickr/flickr-4d", (319_686, 28_153_045, 1_607_191, 731), 112_890_310,
                 0.01, 500_000, (0.01, 0.002, 0.005, 0.05)),
    FrosttTensor("nell1", "nell/nell-1", (2_902_330, 2_143_368, 25_495_389), 143_599_552,
                 0.01, 500_000, (0.01, 0.01, 0.003)),
    FrosttTensor("nell2", "nell/nell-2", (12_092, 9_184, 28_818), 76_879_419,
                 0.1, 500_000, (0.03, 0.03, 0.01)),
    FrosttTensor("amazon", "amazon/amazon-reviews", (4_821_207, 1_774_269, 1_805_187), 1_741_809_018,
                 0.001, 500_000, (0.005, 0.02, 0.02)),
    FrosttTensor("patents", "patents/patents", (46, 239_172, 239_172), 3_596_640_708,
                 0.004, 500_000, (0.08, 0.005, 0.005)),
    FrosttTensor("reddit", "reddit-2015/reddit-2015", (8_211_298, 176_962, 8_116_559), 4_687_474_081,
                 0.001, 500_000, (0.005, 0.05, 0.005)),
]}


def tensor_entry(name: str) -> FrosttTensor:
    """The paper's tensor ``name``; DatasetError naming the known ones otherwise."""
    try:
        return TENSORS[name]
    except KeyError:
        raise DatasetError(f"unknown tensor {name!r}; known: {', '.join(TENSORS)}") from None
