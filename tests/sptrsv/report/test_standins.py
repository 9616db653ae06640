"""The provenance table: the matrices a sweep solved beside the paper's Tables A.1-A.3."""
import pandas as pd

from spbench.sptrsv.report.standins import matrix_comparison


def test_rows_beside_the_paper_tables():
    df = pd.DataFrame([
        {"dataset": "hood", "dataset_source": "synthetic", "n": 16074, "nnz": 424000, "wavefronts": 48},
        {"dataset": "hood", "dataset_source": "synthetic", "n": 16074, "nnz": 424000, "wavefronts": 48},
        {"dataset": "hood+metis", "dataset_source": "synthetic", "n": 16074, "nnz": 424000, "wavefronts": 20},
        {"dataset": "lap2d-5pt", "dataset_source": "synthetic", "n": 100, "nnz": 280, "wavefronts": 19},
    ])
    table = matrix_comparison(df).set_index("dataset")
    assert list(table.index) == ["hood", "hood+metis"]  # generators have no paper row
    assert table.at["hood", "paper avg wavefront"] == 365 and table.at["hood", "avg wavefront"] == 16074 // 48
    assert table.at["hood+metis", "paper avg wavefront"] == 984
    assert table.at["hood", "wavefront ratio"] == round(16074 / 48 / 365, 2)


def test_rows_without_wavefronts_give_an_empty_table():
    assert matrix_comparison(pd.DataFrame([{"dataset": "hood", "n": 5}])).empty
