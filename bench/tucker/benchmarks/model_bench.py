"""`spbench bench tucker-model`: the MPI worker on a stand-in tensor beside the modelled times
(:mod:`spbench.tucker.calibration.model_validation`). The Tucker model at the papers' scale is the
simulated sweep's (``spbench run configs/tucker_scaling.yaml``: the same model over each
distribution's exact counts). The model reads a calibration (``--calibration``, default this
machine's, as `spbench calibrate --experiment tucker` writes it).
"""
from __future__ import annotations

from spbench.harness.calibration_option import read_calibration

__all__ = ["check", "measure"]


def check(o: dict) -> dict:
    """The options the rows store: the calibration's path (this machine's when not given)."""
    _, path = read_calibration("tucker", o["calibration"])
    return {**o, "calibration": path}


def measure(o: dict, run) -> list[dict]:
    """One item per scheme and rank count: the run of median HOOI time beside the model's times, each
    message term's measured and modelled calls, words and seconds (``comm_terms``), and the
    validation table as CSV where --csv says."""
    from spbench.datasets.tensor_registry import standin, standin_label
    from spbench.tucker.calibration.model_validation import TIME_KEYS, validate

    costs, _ = read_calibration("tucker", o["calibration"])
    label = standin_label(o["tensor"], nnz=o["nnz"])
    run.say(f"{label}: {', '.join(o['schemes'])} at {o['ranks']} ranks, {o['repeats']} repeats each")
    df = validate({label: standin(o["tensor"], nnz=o["nnz"])}, o["schemes"], o["ranks"], costs, K=o["K"],
                  lanczos=o["lanczos"], ttm=o["ttm"], repeats=o["repeats"])
    if run.given["csv"] is not None:
        df.to_csv(run.given["csv"], index=False)
    return [{"item": f"{r['scheme']} P={r['ranks']}", "dataset": label, "scheme": r["scheme"],
             "ranks": int(r["ranks"]), "K": int(r["K"]), "lanczos": r["lanczos"], "ttm": r["ttm"],
             "queries": [int(q) for q in r["queries"]], "time": float(r["measured_hooi_time"]),
             **{f"{w}_{k}": float(r[f"{w}_{k}"]) for k in TIME_KEYS for w in ("measured", "predicted", "rel_error")},
             "comm_terms": r["comm_terms"]}
            for r in df.to_dict("records")]
