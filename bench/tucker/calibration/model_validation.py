"""The cost model (:mod:`.model`) against the measured MPI worker: the validation table of docs/performance.md.

    spbench bench tucker-model [--calibration CAL.json] [--tensor nell2] [--nnz 200000] [--ranks 1,2]
        [--schemes coarse,medium,lite] [-K 10] [--lanczos paper] [--ttm csf] [--repeats 3] [--csv OUT.csv]

runs the real worker (``mpiexec -n R python -m mpi4py -m spbench.tucker.mpi.worker SPEC.json``) on a
stand-in tensor and puts its measured times beside the model's prediction for the same
distribution and the measured Lanczos queries.
"""
from __future__ import annotations

import numpy as np

__all__ = ["validate", "measured_components", "TIME_KEYS", "COMM_TERMS"]

TIME_KEYS = ("hooi_time", "ttm_time", "svd_time", "comm_time", "wait_time", "other_time")
#: the message terms of the model (:data:`.model.cost_model.TERM_COMPONENT`), as the worker tallies them
COMM_TERMS = ("oracle_alltoallv", "svd_allreduce", "dense_allgatherv", "factor_transfer", "core_comm")


def measured_components(run: dict) -> dict:
    """A traced run's components as the model charges them (tucker-lite §7.2's breakup), from every
    rank's timers (the worker's ``rank_times``): ``ttm_time``/``svd_time`` the sum over modes of the
    slowest rank's local work, ``comm_time`` the largest rank's transfers (its messages' seconds
    less their waiting), ``wait_time`` the largest rank's waiting for the others inside its messages,
    ``other_time`` the largest rank's; ``hooi_time`` the run's (the slowest rank's).
    ``comm_terms``: per message term, the largest rank's calls, words, transfer and wait seconds."""
    ranks = run["rank_times"]
    if any(r["times"]["wait_time"] is None for r in ranks):
        raise RuntimeError("the ranks' message traces differ: their waiting cannot be told apart")
    nmodes = len(ranks[0]["modes"])
    out = {"hooi_time": float(run["hooi_time"])}
    for k in ("ttm_time", "svd_time"):
        out[k] = float(sum(max(r["modes"][n][k] for r in ranks) for n in range(nmodes)))
    out["comm_time"] = max(r["times"]["comm_time"] - r["times"]["wait_time"] for r in ranks)
    out["wait_time"] = max(r["times"]["wait_time"] for r in ranks)
    out["other_time"] = max(r["times"]["other_time"] for r in ranks)
    terms = {}
    for term in COMM_TERMS:
        got = [r["messages"][term] for r in ranks if term in r["messages"]]
        if got:
            terms[term] = {"calls": max(g[0] for g in got), "words": max(g[1] for g in got),
                           "transfer": max(g[2] - g[3] for g in got), "wait": max(g[3] for g in got)}
    out["comm_terms"] = terms
    return out


def _measure(tensor, checksum: str, schemes, ranks: int, K, *, seed: int, invocations: int, lanczos: str,
             ttm: str, timeout: float, repeats: int) -> dict:
    """Run the real worker on a tensor store of ``tensor`` with a SPEC.json as launch._launch
    writes it, at ``ranks``; returns {(scheme, repeat): row}."""
    import json
    import os
    import subprocess
    import tempfile
    from pathlib import Path

    from spbench.datasets.tensor_store import write_store

    from spbench.tucker.mpi.launch import mpi_module_command

    with tempfile.TemporaryDirectory(prefix="spbench-validate-") as d:
        tdir = Path(d) / "store"
        write_store(tdir, tensor.coords, tensor.values, tensor.dims, checksum=checksum, source={"validate": checksum})
        tasks = [{"row": {"run_id": f"{s}-{ranks}-{i}"}, "scheme": s, "K": K, "params": {}, "seed": seed,
                  "invocations": invocations, "init": "random", "lanczos": lanczos, "ttm": ttm,
                  "trace_messages": True}
                 for s in schemes for i in range(repeats)]
        spec = Path(d) / "spec.json"
        spec.write_text(json.dumps({"tensor_dir": str(tdir), "results": d, "scratch": True, "threads": 1,
                                    "tasks": tasks}))
        cmd = mpi_module_command("spbench.tucker.mpi.worker", [spec], ranks)
        env = dict(os.environ, OMP_NUM_THREADS="1", OPENBLAS_NUM_THREADS="1")
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, env=env)
        if proc.returncode != 0:
            raise RuntimeError(f"worker at {ranks} ranks failed ({proc.returncode}): {proc.stderr[-2000:]}")
        return {(t["scheme"], i % repeats): json.loads((Path(d) / "runs" / f"{t['row']['run_id']}.json").read_text())
                for i, t in enumerate(tasks)}


def validate(tensor_specs, schemes, ranks_list, costs: dict, *, K=10, seed: int = 0, invocations: int = 1,
             lanczos: str = "paper", ttm: str = "csf", repeats: int = 3, timeout: float = 600):
    """Measured (the MPI worker) vs modelled times, one row per (tensor, scheme, ranks).

    ``tensor_specs``: ``{label: SparseTensor}`` or ``[(label, SparseTensor), ...]``. Measured
    times are those of the run with the median HOOI time over ``repeats`` runs in one MPI job, its
    components as the model charges them (:func:`measured_components`: the slowest rank's local work
    per mode, the transfers apart from the waiting); the model gets the measured Lanczos queries and
    restarts; both run (and model) the local TTM kernel ``ttm``. ``rel_error_X`` = (predicted −
    measured) / measured. Every run is timed from its first invocation, without an untimed one
    before: on this VM a Z of gigabytes written into memory the host took back costs its backing
    again in a second invocation too (:mod:`.model.cost_model`, known gaps), so a warm-up would hide
    part of that artefact only. ``comm_terms``: per message term the measured calls, words, transfer and
    wait seconds beside the modelled calls, words and α and β seconds (``model_*``)."""
    import hashlib

    import pandas as pd

    from spbench.tucker.model.cost_model import predict_from_loads, rank_loads
    from spbench.tucker.schemes import get_scheme

    items = tensor_specs.items() if isinstance(tensor_specs, dict) else tensor_specs
    rows = []
    for label, tensor in items:
        h = hashlib.sha256()
        h.update(np.ascontiguousarray(tensor.coords).tobytes())
        h.update(np.ascontiguousarray(tensor.values).tobytes())
        checksum = "validate-" + h.hexdigest()[:24]
        for P in ranks_list:
            measured = _measure(tensor, checksum, schemes, P, K, seed=seed, invocations=invocations,
                                lanczos=lanczos, ttm=ttm, timeout=timeout, repeats=repeats)
            for s in schemes:
                runs = [measured[(s, i)] for i in range(repeats)]
                dist = get_scheme(s)(tensor, P, seed=seed)
                queries = [int(q) // invocations for q in runs[0]["queries"]]
                loads = rank_loads(tensor, dist, K, Q=queries, ttm=ttm)
                for ld, rs in zip(loads, runs[0].get("restarts") or [None] * len(loads)):
                    ld.restarts = None if rs is None else int(rs) // invocations
                pred = predict_from_loads(loads, costs, invocations=invocations, lanczos=lanczos, ttm=ttm)
                row = {"tensor": label, "scheme": s, "ranks": P, "K": K, "lanczos": lanczos, "ttm": ttm,
                       "queries": queries}
                median_run = measured_components(sorted(runs, key=lambda r: r["hooi_time"])[(len(runs) - 1) // 2])
                row["comm_terms"] = {t: {**m, **{f"model_{f}": v for f, v in pred["messages"].get(t, {}).items()}}
                                     for t, m in median_run["comm_terms"].items()}
                for k in TIME_KEYS:
                    meas = float(median_run[k])
                    row[f"measured_{k}"] = meas
                    row[f"predicted_{k}"] = pred[k]
                    row[f"rel_error_{k}"] = (pred[k] - meas) / meas if meas > 0 else (0.0 if pred[k] == 0 else np.inf)
                row["rel_error"] = row["rel_error_hooi_time"]
                rows.append(row)
    return pd.DataFrame(rows)
