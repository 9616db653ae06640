"""``python -m spbench.tucker.model speedup|validate CAL.json``: the cost model's command line
(modelled Lite speed-ups at the tensors' real sizes; measured vs modelled times), apart from the
model so the model imports neither its validation nor the ideal loads' table."""
from __future__ import annotations

from .lanczos import LANCZOS_MODES
from .model import TTM_COSTS, speedup_table


def main(argv=None) -> int:
    """``python -m spbench.tucker.model speedup CAL.json [--tensors nell1,nell2] [--ranks 32,512]
    [-K 10] [--lanczos paper]``: modelled Lite speed-ups at the tensors' real sizes (``ttm: paper``).
    ``python -m spbench.tucker.model validate CAL.json [...]``: the validation table
    (:mod:`.model_validation`) of a calibration (``spbench calibrate --experiment tucker``)."""
    import argparse
    import json

    ap = argparse.ArgumentParser(prog="python -m spbench.tucker.model")
    sub = ap.add_subparsers(dest="cmd", required=True)
    sp = sub.add_parser("speedup", help="modelled Lite speed-ups at real sizes with ideal loads")
    sp.add_argument("calibration")
    sp.add_argument("--tensors", default="nell1,nell2")
    sp.add_argument("--ranks", default="32,512")
    sp.add_argument("-K", type=int, default=10)
    sp.add_argument("--lanczos", default="paper", choices=LANCZOS_MODES)
    vp = sub.add_parser("validate", help="measured (MPI worker) vs modelled times on a stand-in")
    vp.add_argument("calibration")
    vp.add_argument("--tensor", default="nell2")
    vp.add_argument("--nnz", type=int, default=200_000)
    vp.add_argument("--ranks", default="1,2")
    vp.add_argument("--schemes", default="coarse,medium,lite")
    vp.add_argument("-K", type=int, default=10)
    vp.add_argument("--lanczos", default="paper", choices=LANCZOS_MODES)
    vp.add_argument("--ttm", default="csf", choices=tuple(TTM_COSTS))
    vp.add_argument("--repeats", type=int, default=3)
    vp.add_argument("--csv")
    a = ap.parse_args(argv)
    from .calibrate import load

    try:
        cal = load(a.calibration)
    except (OSError, ValueError) as exc:
        print(exc)  # names the file
        return 2
    if a.cmd == "speedup":
        ranks = tuple(int(r) for r in a.ranks.split(","))
        for row in speedup_table(cal, a.tensors.split(","), ranks, a.K, a.lanczos):
            times = "  ".join(f"P={P}: {row[f'hooi_time_{P}']:.3f} s" for P in ranks)
            print(f"{row['tensor']} {'x'.join(map(str, row['dims']))} nnz={row['nnz']:,} K={row['K']} "
                  f"lanczos={row['lanczos']} ttm={row['ttm']}: {times}  speed-up {row['speedup']:.1f}x")
            print("  largest terms at P=%d: %s" % (ranks[-1], ", ".join(f"{k} {v:.3f} s" for k, v in
                                                                      row["largest_terms"].items())))
        return 0
    from spbench.datasets.tensor_registry import standin, standin_label

    from .model_validation import print_table, validate

    T = standin(a.tensor, nnz=a.nnz)
    df = validate({standin_label(a.tensor, nnz=a.nnz): T}, a.schemes.split(","),
                  [int(r) for r in a.ranks.split(",")], cal, K=a.K, lanczos=a.lanczos, ttm=a.ttm, repeats=a.repeats)
    if a.csv:
        df.to_csv(a.csv, index=False)
    print_table(df)
    print(json.dumps({"calibration": a.calibration, "tensor": standin_label(a.tensor, nnz=a.nnz)}))
    return 0
