"""The Markdown tables of the Tucker benchmarks (`spbench bench lite|hooi|splatt|ttm|tucker-scale`),
drawn from one invocation's rows; ratios are derived here, never stored."""
from __future__ import annotations

import math

from spbench.harness.tables import by_item, fmt


def lite_table(rows: list[dict]) -> str:
    """Lite, CoarseG and MediumG distribution times and Lite's Theorem 6.1 slack (scheme_bench)."""
    first = rows[0]
    lines = [f"tensor: {len(first['dims'])} modes, dims {tuple(first['dims'])}, nnz {first['nnz']:,}, "
             f"largest-slice shares {first['largest_shares']} (generated in {first['generate_time']:.1f} s)", "",
             "| scheme | P | median time (s) | all times (s) |", "|---|---|---|---|"]
    lines += [f"| {r['item']} | {r['ranks']} | {r['time']:.3f} | {', '.join(f'{t:.3f}' for t in r['times'])} |"
              for r in rows]
    slack = by_item(rows)["lite"]["theorem_slack"]
    slack = {k: slack[k] for k in ("e_max", "r_sum", "r_max")}
    lines += ["", f"Lite Theorem 6.1 slack (min over modes; >= 0 holds): {slack}"]
    return "\n".join(lines)


def hooi_table(rows: list[dict]) -> str:
    """spbench against pyttb per case, then the TTM kernel's throughput (hooi_bench)."""
    threads = rows[0]["params"]["threads"]
    peak = next(r for r in rows if r["item"].startswith("matmul"))["gflops"]
    lines = [f"threads={threads}  numpy matmul peak {peak:.1f} GFLOP/s", "",
             "| case | nnz | core | spbench s | pyttb s | speed-up | spbench fit | pyttb fit | "
             "spbench MB | pyttb MB | base MB | memory ratio |",
             "|---|---|---|---|---|---|---|---|---|---|---|---|"]
    cases: dict = {}
    for r in rows:
        if r.get("solver"):
            cases.setdefault(r["case"], {})[r["solver"]] = r
    for solvers in cases.values():
        s, p, b = solvers["spbench"], solvers["pyttb"], solvers["base"]
        ok = p["status"] == "ok" and s["status"] == "ok"
        lines.append(f"| {s['case']} {'×'.join(map(str, s['dims']))} | {s['nnz']} | {s['K']}^{len(s['dims'])} | "
                     f"{fmt(s.get('time'), '.3f')} | {fmt(p.get('time'), '.2f')} | "
                     f"{(p['time'] / s['time']) if ok else math.nan:.0f}× | {fmt(s.get('fit'), '.10g')} | "
                     f"{fmt(p.get('fit'), '.10g')} | {fmt(s.get('maxrss_mb'), '.0f')} | "
                     f"{fmt(p.get('maxrss_mb'), '.0f')} | {fmt(b.get('maxrss_mb'), '.0f')} | "
                     f"{(p['maxrss_mb'] / s['maxrss_mb']) if ok else math.nan:.1f}× |")
    lines += ["", "| TTM N | K | csf s (all modes) | Melements/s | csf GFLOP/s | % of matmul peak | paper s | "
              "paper GFLOP/s | csf speed-up | flop reduction |", "|---|---|---|---|---|---|---|---|---|---|"]
    lines += [f"| {t['N']} | {t['K']} | {t['time']:.3f} | {t['elements_per_s'] / 1e6:.2f} | {t['gflops']:.2f} | "
              f"{100 * t['gflops'] / peak:.1f} | {fmt(t.get('paper_time'), '.3f')} | "
              f"{fmt(t.get('paper_gflops'), '.2f')} | {fmt(t.get('speedup'), '.2f')}× | "
              f"{fmt(t.get('flop_reduction'), '.2f')}× |" for t in rows if t["item"].startswith("ttm ")]
    return "\n".join(lines)


def splatt_table(rows: list[dict]) -> str:
    """SPLATT's Tucker beside ours per iteration, interleaved rounds (splatt_side)."""
    first = rows[0]
    p = first["params"]
    lines = [f"SPLATT {p['binary']} (BLAS {first.get('splatt_blas') or '?'}); spbench BLAS "
             f"{first.get('spbench_blas') or '?'}; {p['iterations']} iterations per round, median of {p['reps']} "
             "rounds, seconds per iteration", "",
             "| tensor | K | threads | SPLATT TTM s | csf TTM s | csf / SPLATT | SPLATT SVD s | spbench SVD s | "
             "spbench / SPLATT | SPLATT CSF build s | csf plans build s | ours / SPLATT |",
             "|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        svd, built, theirs = r.get("spbench_svd"), r.get("csf_build"), r.get("splatt_csf")
        lines.append(f"| {r['case']} {'×'.join(map(str, r['dims']))}, {r['nnz']:,} nnz | {r['K']} | {r['threads']} | "
                     f"{r['splatt_ttm']:.4f} | {r['csf_ttm']:.4f} | {r['csf_ttm'] / r['splatt_ttm']:.2f} | "
                     f"{r['splatt_svd']:.5f} | " + (f"{svd:.5f} | {svd / r['splatt_svd']:.2f} |" if svd else "- | - |")
                     + (f" {theirs:.3f} | {built:.3f} | {built / theirs:.2f} |" if built and theirs else " - | - | - |"))
    return "\n".join(lines)


def ttm_table(rows: list[dict]) -> str:
    """The paper and the csf TTM kernel side by side (ttm_bench)."""
    peaks = {r["threads"]: r["gflops"] for r in rows if r["item"].startswith("matmul")}
    pairs: dict = {}
    for r in rows:
        if r.get("kind"):
            pairs.setdefault((r["dataset"], r["K"], r["threads"]), {})[r["kind"]] = r
    lines = ["| tensor | nnz | K | threads | paper s | csf s | speed-up | flop reduction | paper GFLOP/s "
             "| csf GFLOP/s | csf % of matmul peak | csf B/nnz | paper B/nnz | csf plan s |",
             "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for kinds in pairs.values():
        p, c = kinds["paper"], kinds["csf"]
        lines.append(f"| {c['case']} {'×'.join(map(str, c['dims']))} | {c['nnz']} | {c['K']} | {c['threads']} | "
                     f"{p['time']:.4f} | {c['time']:.4f} | {p['time'] / c['time']:.2f}× | "
                     f"{p['flops'] / c['flops']:.2f}× | {p['gflops']:.2f} | {c['gflops']:.2f} | "
                     f"{100 * c['gflops'] / peaks[c['threads']]:.1f} | {c['bytes_per_nnz']:.0f} | "
                     f"{p['bytes_per_nnz']:.0f} | {c['plan_time']:.2f} |")
    lines.append(f"\nmatmul peak GFLOP/s: {', '.join(f'{t} thread(s) {g:.1f}' for t, g in peaks.items())}")
    return "\n".join(lines)


def scale_table(rows: list[dict]) -> str:
    """Per-rank memory, words and queries as P grows (scale_bench)."""
    from spbench.tucker.benchmarks.scale_bench import BASE_MB, FORMULA_FACTOR

    lines = [f"| scheme | P | held nonzeros/rank | peak MB/rank | budget MB ({FORMULA_FACTOR} × formula + {BASE_MB}) | "
             "paper's formula MB (tensor + penultimate + factors) | peak / peak at P=1 | words/rank (max) | "
             "queries per mode | largest Lanczos residual | fit |", "|---" * 11 + "|"]
    base: dict = {}
    for r in rows:
        if r["status"] != "ok":
            lines.append(f"| {r['scheme']} | {r['ranks']} | {r['status']}: {r.get('error') or ''} |" + " |" * 8)
            continue
        held, peak = r["held_nonzeros_max"], r["peak_rss_mb_max"]
        first = base.setdefault(r["scheme"], peak)
        budget = FORMULA_FACTOR * r["mem_total_mb_max"] + BASE_MB
        lines.append(f"| {r['scheme']} | {r['ranks']} | {held:,} | {peak:.0f} | {budget:.0f} | "
                     f"{r['mem_total_mb_max']:.0f} | {peak / first:.2f} | {r['words_per_rank_max']:,} | "
                     f"{r['queries']} | {max(r['lanczos_residual_max']):.1e} | {r['fit']:.3e} |")
    return "\n".join(lines)


#: the Tucker times the model predicts, as tucker-model rows carry them
TUCKER_TIMES = ("hooi_time", "ttm_time", "svd_time", "comm_time", "wait_time", "other_time")
#: the share of the measured HOOI time from which a component's error is judged (smaller ones are marked)
JUDGED_SHARE = 0.10
#: the error a judged component must stay within
JUDGED_ERROR = 0.25


def _judged(r: dict, k: str) -> bool:
    """Whether component ``k`` of row ``r`` is at least :data:`JUDGED_SHARE` of its measured HOOI time."""
    return k == "hooi_time" or r[f"measured_{k}"] >= JUDGED_SHARE * r["measured_hooi_time"]


def tucker_model_table(rows: list[dict]) -> str:
    """Measured (the MPI worker: the run of median HOOI time over repeats, its components as the model
    charges them) against modelled times and their relative errors, a component under
    :data:`JUDGED_SHARE` of the HOOI time marked (its error not judged); then, at two ranks or more,
    every message term's calls, words and seconds, measured (transfer apart from waiting) and
    modelled (per message α and per word β)."""
    p = rows[0]["params"]
    head = " | ".join(f"{w} {k}" for k in TUCKER_TIMES for w in ("measured", "predicted"))
    lines = [f"{rows[0]['dataset']}, K = {p['K']}, lanczos {p['lanczos']}, ttm {p['ttm']}, the run of median HOOI "
             f"time of {p['repeats']} runs; calibration {p['calibration']}. ttm/svd: the slowest rank's per mode; "
             f"comm: the transfers; wait: waiting for the other ranks inside the messages (modelled: the lighter "
             f"ranks' idle time per step); (x): under {JUDGED_SHARE:.0%} of HOOI, not judged", "",
             f"| scheme | ranks | {head} | queries | " + " | ".join(f"rel. error {k}" for k in TUCKER_TIMES)
             + f" | judged within ±{JUDGED_ERROR:.0%} |", "|---" * (4 + 3 * len(TUCKER_TIMES)) + "|"]
    judged = ok = 0
    for r in rows:
        if r["status"] != "ok":
            lines.append(f"| {r['item']} | {r['status']}: {r.get('error') or ''} |"
                         + " |" * (2 + 3 * len(TUCKER_TIMES)))
            continue
        times = " | ".join(f"{r[f'{w}_{k}']:.4f}" for k in TUCKER_TIMES for w in ("measured", "predicted"))
        errors = " | ".join(f"{r[f'rel_error_{k}']:+.2f}" if _judged(r, k) else f"({r[f'rel_error_{k}']:+.2f})"
                            for k in TUCKER_TIMES)
        within = all(abs(r[f"rel_error_{k}"]) <= JUDGED_ERROR for k in TUCKER_TIMES if _judged(r, k))
        judged, ok = judged + 1, ok + within
        lines.append(f"| {r['scheme']} | {r['ranks']} | {times} | {r['queries']} | {errors} | "
                     f"{'yes' if within else 'no'} |")
    lines += ["", f"{ok} of {judged} rows: every component of at least {JUDGED_SHARE:.0%} of HOOI within "
                  f"±{JUDGED_ERROR:.0%}"]
    comm = [r for r in rows if r["status"] == "ok" and r["ranks"] > 1 and r.get("comm_terms")]
    if comm:
        lines += ["", "Messages (the largest rank's; seconds: measured transfer and wait, modelled α·calls and "
                      "β·words):", "",
                  "| scheme | ranks | term | calls measured | calls modelled | words measured | words modelled | "
                  "transfer (ms) | wait (ms) | α part (ms) | β part (ms) | rel. error transfer |",
                  "|---" * 12 + "|"]
        for r in comm:
            for term, m in r["comm_terms"].items():
                model = m.get("model_alpha", 0.0) + m.get("model_beta", 0.0)
                err = (model - m["transfer"]) / m["transfer"] if m["transfer"] > 0 else float("nan")
                lines.append(f"| {r['scheme']} | {r['ranks']} | {term} | {m['calls']:,} | {m.get('model_calls', 0):,.0f} "
                             f"| {m['words']:,} | {m.get('model_words', 0):,.0f} | {1e3 * m['transfer']:.3f} | "
                             f"{1e3 * m['wait']:.3f} | {1e3 * m.get('model_alpha', 0.0):.3f} | "
                             f"{1e3 * m.get('model_beta', 0.0):.3f} | {err:+.2f} |")
    return "\n".join(lines)
