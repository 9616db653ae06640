"""How a data set is named in titles, axes and tables, and which paper group it belongs to.

A synthetic stand-in of a paper data set (a SuiteSparse matrix or a FROSTT tensor the machine does
not hold) carries a "(stand-in)" mark wherever its name is shown, so no figure passes it off as
the paper's data. A generator's matrix (lap2d-5pt, lap3d-7pt, ...) is no paper data set at all:
it is filed under "generated", never under the paper's SuiteSparse, iChol or METIS groups.
"""
from __future__ import annotations

import pandas as pd

STANDIN_MARK = " (stand-in)"
GENERATED = "generated"
TRANSFORM_GROUPS = {"ichol": "iChol", "metis": "METIS"}


def base_name(name: str) -> str:
    """The data set's name without ``+transform`` suffixes and ``[parameters]``."""
    return str(name).split("+", 1)[0].split("[", 1)[0]


def is_paper_dataset(name: str) -> bool:
    """Whether the name is one of the papers' matrices (SuiteSparse, iChol/METIS tables) or tensors."""
    from spbench.datasets import paper_matrices, paper_tensors

    base = base_name(name)
    return any(base in table for table in (paper_matrices.SUITESPARSE, paper_matrices.METIS_ONLY,
                                            paper_matrices.ICHOL_TABLE, paper_matrices.METIS_TABLE,
                                            paper_tensors.TENSORS))


def is_generated(name: str) -> bool:
    """Whether the name comes from one of the matrix generators (not a paper data set)."""
    from spbench.datasets import synthetic

    return base_name(name) in synthetic.GENERATORS


def is_standin(name: str, source: str | None) -> bool:
    """A synthetic data set under a paper data set's name."""
    return str(source) == "synthetic" and is_paper_dataset(name)


def dataset_display(name: str, source: str | None) -> str:
    """``name (stand-in)`` for a stand-in, the name as is otherwise."""
    return f"{name}{STANDIN_MARK}" if is_standin(name, source) else str(name)


def dataset_group(name: str) -> str:
    """The paper's group of a matrix: SuiteSparse, or iChol/METIS for ``+ichol``/``+metis``; a
    generator's matrix is "generated" (with a transform: "generated+METIS"), never a paper group.
    An unknown ``+suffix`` is returned as is, so it never pools with a known group."""
    name = str(name)
    suffix = name.rsplit("+", 1)[1] if "+" in name else ""
    group = TRANSFORM_GROUPS.get(suffix.lower(), f"+{suffix}") if suffix else "SuiteSparse"
    if is_generated(name):
        return f"{GENERATED}+{group.lstrip('+')}" if suffix else GENERATED
    return group


def display_names(df: pd.DataFrame) -> pd.Series:
    """Each row's data set as shown: with the stand-in mark where its ``dataset_source`` is synthetic."""
    sources = df["dataset_source"] if "dataset_source" in df.columns else pd.Series(None, index=df.index)
    return pd.Series([dataset_display(n, s) for n, s in zip(df["dataset"], sources)], index=df.index)


def display_map(df: pd.DataFrame) -> dict[str, str]:
    """Data set name → its shown name (:func:`display_names`) over the rows of ``df``."""
    return dict(zip(df["dataset"].astype(str), display_names(df)))


def provenance_tag(df: pd.DataFrame, noun: str = "matrices") -> str:
    """What the rows' data sets are, for a figure title: "34 stand-ins (synthetic, not the paper's
    matrices)", "2 generated matrices", "3 real matrices + 2 stand-ins"; "" without data sets."""
    names = df[["dataset"]].assign(source=df["dataset_source"] if "dataset_source" in df.columns else None)
    names = names.drop_duplicates("dataset")
    standin = sum(is_standin(n, s) for n, s in zip(names["dataset"], names["source"]))
    generated = sum(is_generated(n) for n in names["dataset"])
    other = len(names) - standin - generated
    one = {"matrices": "matrix", "tensors": "tensor"}.get(noun, noun)
    parts = ([f"{other} real {noun if other != 1 else one}"] if other else []) + (
        [f"{generated} generated {noun if generated != 1 else one}"] if generated else [])
    if standin:
        parts.append(f"{standin} stand-in{'s' if standin != 1 else ''} (synthetic, not the paper's {noun})")
    return " + ".join(parts)


