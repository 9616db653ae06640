"""`spbench info`: the machine, build and MPI facts every results folder's meta.json records."""
from __future__ import annotations

import json

import click

from spbench.cli.errors import OneLineCommand


@click.command(cls=OneLineCommand)
@click.option("--json", "as_json", is_flag=True, help="Machine-readable output.")
def info(as_json):
    """Machine, build and MPI facts (what every results folder's meta.json records)."""
    from spbench.machine.facts import machine_facts

    facts = machine_facts()
    if as_json:
        click.echo(json.dumps(facts, indent=1, sort_keys=True))
        return
    omp, mpi, git = facts["openmp"], facts["mpi"], facts["git"]
    lines = [
        f"spbench      {facts['spbench']}",
        f"host         {facts['host']}",
        f"cpu          {facts['cpu']} ({facts['arch']})",
        f"cores        {facts['cores']} usable, {facts['logical_cpus']} logical",
        f"memory       {facts['memory_gib']} GiB",
        f"openmp       {'enabled' if omp.get('enabled') else 'disabled'}, {omp.get('threads')} threads"
        + (f" ({omp['error']})" if omp.get("error") else ""),
        f"mpi          {mpi.get('library') or 'unavailable: ' + str(mpi.get('error'))}"
        + (f" (MPI {mpi['standard']})" if mpi.get("standard") else ""),
        f"git          {git.get('sha') or 'not a git checkout'}" + (" (dirty)" if git.get("dirty") else ""),
    ]
    lines += [f"{name:<12} {ver or 'not installed'}" for name, ver in facts["versions"].items()]
    click.echo("\n".join(lines))
