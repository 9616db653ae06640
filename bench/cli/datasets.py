"""``spbench datasets``: list, show, generate, fetch and convert the data sets of both papers.

SpTrSV matrices (SuiteSparse, generators) and Tucker tensors (FROSTT, Fig. 9 of tucker-lite, with
their synthetic stand-ins) share the commands; a tensor name selects the tensor path.

Exit codes as `spbench run`'s: 2 and one line naming the file or flag and what was expected for
bad input (nothing is written); 1 and one line saying what was kept when work fails part way (a
full disk, a download that fails).
"""
from __future__ import annotations

import re
import time
from pathlib import Path
from urllib.parse import urlsplit

import click

from spbench.store.atomic_files import WriteFailed, probe_folder
from spbench.cli.errors import OneLineCommand, OneLineGroup, UsageFailure
from spbench.datasets import synthetic
from spbench.datasets.conversion_progress import ConversionProgress
from spbench.datasets.errors import DatasetError
from spbench.datasets.matrix_market import MATRIX_SUFFIXES, check_output, write_matrix
from spbench.datasets.matrix_names import close_names_hint
from spbench.datasets.registry import (ICHOL_TABLE, METIS_TABLE, SUITESPARSE, fetch_suitesparse, list_datasets,
                                       parse_value, resolve, suitesparse_dir, suitesparse_matrix)
from spbench.datasets.transforms import lower_triangle


class DatasetsCommand(OneLineCommand):
    """A `spbench datasets` command: option errors are one line naming it, exit code 2."""

    prefix = "spbench datasets"


class DatasetsGroup(OneLineGroup):
    """The `spbench datasets` group: an unknown command or option is one line, exit code 2."""

    label = "spbench datasets"


def _params(pairs: tuple[str, ...]) -> dict:
    """``("grid=200", "seed=1")`` -> {"grid": 200, "seed": 1}; values read as YAML scalars."""
    out = {}
    for pair in pairs:
        key, eq, value = pair.partition("=")
        if not eq or not key.strip():
            raise UsageFailure(f"-p: expected key=value, got {pair!r}")
        out[key.strip()] = parse_value(value.strip())
    return out


def _entry(name: str, pairs: tuple[str, ...]):
    """A config-style entry from the command line: a file path, a bare name or a name with params."""
    if name.endswith(MATRIX_SUFFIXES):
        if pairs:
            raise UsageFailure(f"-p: parameters apply to generators, not to files ({name})")
        return {"path": name}
    params = _params(pairs)
    return {name: params} if params else name


def _probe(folder, flag: str) -> None:
    """UsageFailure naming ``flag`` unless files can be written in ``folder`` (checked before any
    work; a folder the check makes is removed again)."""
    try:
        probe_folder(folder)
    except WriteFailed as exc:
        raise UsageFailure(f"{flag}: {exc}") from None


def _partial(exc: WriteFailed, what: str = "nothing was kept") -> click.ClickException:
    """A write that failed part way: one line, exit code 1."""
    return click.ClickException(f"{exc}; {what}")


def _fmt(value) -> str:
    if value is None:
        return "-"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, int):
        return f"{value:,}"
    return str(value)


def _table(headers: list[str], rows: list[list[str]], right: list[bool]) -> str:
    """Plain-text table; ``right`` says which columns are right-aligned (numbers)."""
    widths = [max(len(h), *(len(r[i]) for r in rows)) for i, h in enumerate(headers)]
    lines = []
    for cells in [headers, *rows]:
        lines.append("  ".join(c.rjust(w) if r else c.ljust(w) for c, w, r in zip(cells, widths, right)).rstrip())
    return "\n".join(lines)


@click.group("datasets", cls=DatasetsGroup)
def datasets():
    """The papers' data sets: SuiteSparse matrices, generators, FROSTT tensors and their stand-ins."""


def _standin_cells(stats: dict | None) -> list[str]:
    """n, nnz and average wavefront (rounded down, as Table A.1) of a measured stand-in."""
    if not stats:
        return ["", "", ""]
    return [_fmt(stats["n"]), _fmt(stats["nnz"]), _fmt(int(stats["avg_wavefront"]))]


@datasets.command("list", cls=DatasetsCommand)
def list_command():
    """Table of the registry (Tables A.1-A.3; nnz of the lower triangle) and the generators (at defaults)."""
    rows = list_datasets(progress=lambda name: click.echo(f"measuring stand-in {name}", err=True))
    headers = ["name", "kind", "n", "nnz", "avg wavefront", "stand-in n", "nnz", "avg wavefront", "cached",
               "stand-in / description"]
    cells = [[r["name"], r["kind"], _fmt(r["n"]), _fmt(r["nnz"]), _fmt(r["avg_wavefront"]),
              *_standin_cells(r.get("standin_stats")), _fmt(r["cached"]), r["standin"] or r["description"]]
             for r in rows]
    click.echo(_table(headers, cells, [False, False, True, True, True, True, True, True, False, False]))
    click.echo(f"\ncache: {suitesparse_dir()}  (n, nnz (lower triangle) and average wavefront from the paper's "
               f"Tables A.1-A.3, beside the stand-in's own, measured; kinds ichol / metis: Tables A.2 / A.3, a "
               f"base matrix with transform ichol / metis, whose stand-ins a profile's provenance section measures)")
    from spbench.datasets import tensor_registry as tr
    headers = ["tensor", "modes", "dims", "nnz", "cached", "stand-in"]
    cells = [[t.name, str(t.nmodes), " x ".join(f"{d:,}" for d in t.dims), _fmt(t.nnz), _fmt(tr.is_cached(t.name)),
              tr.standin_label(t.name)] for t in tr.TENSORS.values()]
    click.echo("\n" + _table(headers, cells, [False, True, True, True, False, False]))
    click.echo(f"\ncache: {tr.frostt_dir()}  (FROSTT tensors of tucker-lite Fig. 9)")


@datasets.command("show", cls=DatasetsCommand)
@click.argument("name")
@click.option("-p", "--param", "pairs", multiple=True, metavar="KEY=VALUE", help="Generator parameter (repeatable).")
@click.option("--fetch/--no-fetch", default=True, show_default=True, help="Download a SuiteSparse matrix not cached.")
@click.option("--standin", is_flag=True, help="Use the synthetic stand-in when the real matrix is unavailable.")
def show_command(name, pairs, fetch, standin):
    """Statistics of the lower triangle of NAME (registry name, generator or .mtx file)."""
    from spbench.datasets import tensor_registry as tr
    if name in tr.TENSORS:
        raise UsageFailure(f"{name}: a FROSTT tensor; `spbench datasets show` shows matrices (`spbench datasets "
                           f"list` lists the tensors)")
    try:
        ds = resolve(_entry(name, pairs))
        start = time.perf_counter()
        loaded = ds.load(fetch=fetch, standin=standin)
        try:
            L = lower_triangle(loaded.matrix)
        except DatasetError as exc:
            raise DatasetError(f"{ds.params.get('path', ds.name)}: {exc}") from None
        elapsed = time.perf_counter() - start
    except DatasetError as exc:
        raise UsageFailure(str(exc)) from None
    for warning in loaded.warnings:
        click.echo(f"spbench: warning: {warning}", err=True)
    n = L.shape[0]
    facts = [("name", loaded.name), ("kind", ds.kind), ("source", loaded.source), ("checksum", loaded.checksum),
             ("n", _fmt(n)), ("nnz (full)", _fmt(int(loaded.matrix.nnz))), ("nnz (lower)", _fmt(int(L.nnz))),
             ("nnz/row (lower)", f"{L.nnz / max(n, 1):.2f}")]
    facts += _wavefront_facts(L)
    if ds.kind == "suitesparse":
        m = suitesparse_matrix(ds.base)
        row = {"ichol": ICHOL_TABLE, "metis": METIS_TABLE}.get(ds.transform, {}).get(ds.name, m)
        if ds.transform is None or row is not m:
            facts += [("paper n / nnz / avg wavefront", f"{row.n:,} / {row.nnz:,} / {row.avg_wavefront:,}")]
        if loaded.source == "synthetic":
            facts += [("stand-in", m.standin_label())]
    facts += [("load time", f"{elapsed:.2f} s")]
    width = max(len(k) for k, _ in facts)
    for key, value in facts:
        click.echo(f"{key.ljust(width)}  {value}")


def _wavefront_facts(L) -> list[tuple[str, str]]:
    """Wavefront count and average size from the DAG module, when it is installed."""
    try:
        from spbench.sptrsv.dag import DAG
    except ImportError:
        return []
    dag = DAG(L)
    wavefronts = dag.wavefronts
    count = wavefronts if isinstance(wavefronts, int) else len(wavefronts)
    return [("wavefronts", _fmt(count)), ("avg wavefront", f"{dag.avg_wavefront:,.1f}")]


@datasets.command("generate", cls=DatasetsCommand)
@click.argument("name")
@click.option("-p", "--param", "pairs", multiple=True, metavar="KEY=VALUE", help="Generator parameter (repeatable).")
@click.option("-o", "--output", required=True, type=click.Path(), help="FILE.mtx[.gz]; a tensor: FILE.tns[.gz] or a store folder")
def generate_command(name, pairs, output):
    """Write generator NAME's full symmetric matrix (or a registry matrix's stand-in) to .mtx[.gz],
    or a FROSTT tensor's stand-in (-p nnz=, dim_scale=, seed=, or size=full) to .tns[.gz] or,
    without text, into a tensor store folder (any other OUTPUT)."""
    from spbench.datasets import tensor_registry as tr
    if name in tr.TENSORS:
        _generate_tensor(tr, name, pairs, output)
        return
    try:
        gen, params, label = _generator(name, pairs)
        check_output(output)
    except DatasetError as exc:
        raise UsageFailure(str(exc)) from None
    _probe(Path(output).absolute().parent, "-o")
    try:
        A = synthetic.generate(gen, params)        # out of memory: the parameters ask too much
    except DatasetError as exc:
        raise UsageFailure(str(exc)) from None
    comment = f" spbench {label} (generator version {synthetic.GENERATOR_VERSION}, sha256 {synthetic.checksum(gen, params)})"
    try:
        write_matrix(output, A, comment=comment)
    except WriteFailed as exc:
        raise _partial(exc) from None
    click.echo(f"wrote {output}: {label}, n {A.shape[0]:,}, nnz {A.nnz:,}")


def _generator(name: str, pairs) -> tuple[str, dict, str]:
    """(generator, parameters, label) of NAME: a generator with -p parameters, or a registry matrix's stand-in."""
    if name in SUITESPARSE:
        if pairs:
            raise DatasetError(f"{name}: the stand-in of a registry matrix takes no -p parameters")
        m = SUITESPARSE[name]
        return m.standin, m.standin_params, f"{name} stand-in {m.standin_label()}"
    ds = resolve(_entry(name, pairs))
    if ds.transform is not None:
        raise DatasetError(f"{name}: generate writes the generator's matrix; transforms apply when loading")
    if ds.kind != "synthetic":
        raise DatasetError(f"{name}: not a generator; expected one of {', '.join(synthetic.GENERATORS)}")
    return ds.params["generator"], {k: v for k, v in ds.params.items() if k != "generator"}, ds.name


class _Progress:
    """Download progress on stderr: one line per file, rewritten in place."""

    def __init__(self, name: str):
        self.name, self.last, self.shown = name, 0.0, False

    def __call__(self, done: int, total: int | None) -> None:
        now = time.monotonic()
        if done and total != done and now - self.last < 0.2:
            return
        self.last = now
        size = f"{done / 1e6:.1f}" + (f"/{total / 1e6:.1f} MB ({100 * done / total:.0f}%)" if total else " MB")
        click.echo(f"\r{self.name}: {size}", nl=False, err=True)
        self.shown = True

    def end(self) -> None:
        """Finish the progress line, if one was started."""
        if self.shown:
            click.echo("", err=True)
            self.shown = False


@datasets.command("fetch", cls=DatasetsCommand)
@click.argument("names", nargs=-1, required=True)
@click.option("--url-base", default=None, help="Mirror of https://sparse.tamu.edu/MM (<base>/<Group>/<Name>.tar.gz).")
@click.option("--timeout", default=60.0, show_default=True, type=click.FloatRange(min=0, min_open=True),
              help="Seconds without data before giving up.")
def fetch_command(names, url_base, timeout):
    """Download SuiteSparse matrices NAMES into the cache, verify them and parse them to .npz
    (FROSTT tensors: converted into their stores). Unknown names are refused before any download;
    a download that fails leaves the others fetched and kept (exit code 1)."""
    from spbench.datasets import tensor_registry as tr
    if url_base is not None and urlsplit(url_base).scheme not in ("http", "https", "ftp", "file"):
        raise UsageFailure(f"--url-base: expected a URL such as https://sparse.tamu.edu/MM, got {url_base!r}")
    for name in names:
        _check_fetchable(name, tr.TENSORS)
    for folder in {tr.frostt_dir() if name in tr.TENSORS else suitesparse_dir() for name in names}:
        _probe(folder, "$SPBENCH_DATA")
    failed, done = [], []
    for name in names:
        progress = _Progress(name)
        fetch_one = _fetch_tensor if name in tr.TENSORS else _fetch_matrix
        try:
            summary = fetch_one(name, progress, url_base, timeout)
        except (DatasetError, WriteFailed) as exc:    # a tensor's download is kept when its store fails
            progress.end()
            click.echo(f"error: {exc}", err=True)
            failed.append(name)
            continue
        click.echo(f"{name}: {summary}")
        done.append(name)
    if failed:
        kept = f" ({', '.join(done)} fetched and kept)" if done else ""
        raise click.ClickException(f"could not fetch {len(failed)} of {len(names)}: {', '.join(failed)}{kept}")


def _fetch_tensor(name: str, progress: _Progress, url_base, timeout: float) -> str:
    """Download FROSTT tensor ``name`` and convert it into its store now, not at first use;
    returns what the fetch line says after the name (``url_base`` is SuiteSparse's only)."""
    from spbench.datasets import tensor_registry as tr
    path = tr.fetch_tensor(name, progress=progress, timeout=timeout)
    progress.end()
    converting = ConversionProgress(name)
    store, _ = tr.real_tensor_store(name, progress=converting)
    converting.end()
    return f"{path} (store {store})"


def _fetch_matrix(name: str, progress: _Progress, url_base, timeout: float) -> str:
    """Download SuiteSparse matrix ``name`` and parse it into the cache; returns what the fetch
    line says after the name."""
    path = fetch_suitesparse(name, base=url_base, timeout=timeout, progress=progress)
    progress.end()
    loaded = resolve(name).load(fetch=False)
    return f"{path} (n {loaded.matrix.shape[0]:,}, sha256 {loaded.checksum})"


def _check_fetchable(name: str, tensors) -> None:
    """UsageFailure unless ``name`` is a registry matrix or a FROSTT tensor (close names hinted)."""
    if name in tensors or suitesparse_matrix(name) is not None:
        return
    if re.split(r"[\[+]", name, maxsplit=1)[0] in synthetic.GENERATORS:
        raise UsageFailure(f"{name} is a generator: nothing to fetch (`spbench datasets generate` writes its matrix)")
    known = [*SUITESPARSE, *tensors]
    raise UsageFailure(f"{name}: expected a SuiteSparse matrix of the registry or a FROSTT tensor of tucker-lite "
                       f"Fig. 9{close_names_hint(name, known)} ('spbench datasets list' shows all)")


def _generate_tensor(tr, name: str, pairs, output: str) -> None:
    """A FROSTT stand-in as text (``.tns[.gz]``) or straight into a store folder."""
    try:
        ds = tr.resolve({name: _params(pairs)})  # checks the parameter names, types and ranges
    except DatasetError as exc:
        raise UsageFailure(str(exc)) from None
    kw = {k: v for k, v in ds.params.items() if k in ("nnz", "dim_scale", "seed")}
    _probe(Path(output).absolute().parent, "-o")
    try:
        if output.endswith((".tns", ".tns.gz")):
            path = tr.write_standin(name, output, **kw)
        else:
            progress = ConversionProgress(name)
            try:
                path = tr.standin_store(name, output, progress=progress, **kw)
            finally:
                progress.end()
    except WriteFailed as exc:
        raise _partial(exc) from None
    except DatasetError as exc:
        raise UsageFailure(str(exc)) from None
    click.echo(f"wrote {path}: {tr.standin_label(name, **kw)}")


_UNITS = {"": 1, "k": 2**-10, "kb": 2**-10, "m": 1, "mb": 1, "g": 1024, "gb": 1024, "t": 2**20, "tb": 2**20}


def parse_memory(text: str) -> float:
    """``1GB``, ``512MB``, ``768`` (MB) -> megabytes."""
    m = re.fullmatch(r"\s*([0-9]*\.?[0-9]+)\s*([a-zA-Z]*)\s*", str(text))
    if not m or m.group(2).lower() not in _UNITS:
        raise UsageFailure(f"--memory: expected a size such as 1GB or 512MB, got {text!r}")
    return float(m.group(1)) * _UNITS[m.group(2).lower()]


@datasets.command("convert", cls=DatasetsCommand)
@click.argument("source", type=click.Path(dir_okay=False))
@click.option("--out", "out_dir", default=None, type=click.Path(file_okay=False),
              help="Store folder to create (default: the cache, $SPBENCH_DATA/stores/<name>-<sha256>).")
@click.option("--memory", default="1GB", show_default=True, help="Peak memory of the conversion (e.g. 512MB, 2GB).")
@click.option("--duplicates", type=click.Choice(["sum", "error"]), default="sum", show_default=True,
              help="Repeated coordinates: add their values, or refuse the file naming a repeated line.")
def convert_command(source, out_dir, memory, duplicates):
    """Convert a FROSTT SOURCE (.tns or .tns.gz) into a binary tensor store in one streaming pass."""
    from spbench.datasets.tensor_store import stores_dir
    from spbench.datasets.tns_ingest import MIN_MEMORY_MB, convert_tns, stat_line
    megabytes = parse_memory(memory)
    if megabytes < MIN_MEMORY_MB:
        raise UsageFailure(f"--memory: at least {MIN_MEMORY_MB} MB is needed, got {memory!r}")
    _probe(Path(out_dir).absolute().parent if out_dir else stores_dir(), "--out" if out_dir else "$SPBENCH_DATA")
    progress = ConversionProgress(source)
    started = time.monotonic()
    try:
        path = convert_tns(source, out_dir, memory_mb=megabytes, duplicates=duplicates, progress=progress)
    except WriteFailed as exc:
        raise _partial(exc, "nothing was kept (the partial store is removed)") from None
    except DatasetError as exc:
        raise UsageFailure(str(exc)) from None
    finally:
        progress.end()
    click.echo(f"{path}: {stat_line(path)} ({time.monotonic() - started:.1f} s)")
