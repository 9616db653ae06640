"""Algorithms and benchmarks registered from outside the package (docs/design.md, "Adding … a Tucker
distribution scheme", "… a benchmark"): a plugin is a module with a ``register()`` that adds its
entries to a registry (a scheme to ``spbench.tucker.schemes.SCHEMES``, a scheduler to the SpTrSV
registry, a benchmark through :func:`spbench.harness.catalog.register`).

Plugins are named in ``$SPBENCH_PLUGINS`` (module names or ``.py`` files, separated by ``:``) or
declared by an installed package as entry points of group ``spbench.plugins`` (each a
``register`` function). Every process loads them the same way, the CLI when it looks up an
experiment or reads the benchmarks and the MPI worker when it starts (it inherits the environment),
so a plugin's scheme runs measured under MPI as well as simulated. A plugin given as a ``.py`` file
is importable by its module name (``spbench_plugin_<file stem>``) once loaded.
"""
from __future__ import annotations

import importlib
import importlib.util
import os
import sys
from importlib.metadata import entry_points
from pathlib import Path

__all__ = ["ENV", "GROUP", "PluginError", "load_plugins"]

#: the environment variable naming plugins, and the entry-point group of installed ones
ENV = "SPBENCH_PLUGINS"
GROUP = "spbench.plugins"

_registers: dict = {}  # what a plugin was named by -> its register function (each module imported once)
_installed_names: list | None = None  # the entry points' names, once read


class PluginError(ValueError):
    """A plugin that cannot be loaded: one line naming it and why."""


def load_plugins() -> list[str]:
    """Import every plugin (once per process) and call its ``register()`` (every time: a test may
    have taken a registry entry back); return the names they were given by."""
    names = [n for n in os.environ.get(ENV, "").split(os.pathsep) if n.strip()]
    for name in names:
        if name not in _registers:
            _registers[name] = _register_of(_import(name.strip()), name)
    names += _installed()
    for name in names:
        _registers[name]()
    return names


def _installed() -> list[str]:
    """The entry points of group ``spbench.plugins`` (read and loaded once per process)."""
    global _installed_names
    if _installed_names is None:
        found = []
        for ep in entry_points(group=GROUP):
            key = f"{GROUP}:{ep.name}"
            try:
                _registers[key] = ep.load()
            except Exception as exc:  # a broken installed plugin: one line, whatever it raised
                raise PluginError(f"entry point {ep.name!r} ({ep.value}) of group {GROUP}: cannot load it "
                                  f"({type(exc).__name__}: {exc})") from None
            found.append(key)
        _installed_names = found
    return list(_installed_names)


def _import(name: str):
    """The module ``name`` names: a ``.py`` file (relative to the working folder) or an importable module."""
    try:
        if name.endswith(".py"):
            path = Path(name).resolve()
            if not path.is_file():
                raise PluginError(f"${ENV}: {name}: no such file (expected a Python file or module with register())")
            spec = importlib.util.spec_from_file_location(f"spbench_plugin_{path.stem}", path)
            module = importlib.util.module_from_spec(spec)
            sys.modules[spec.name] = module  # importable by its name, as a benchmark's code version needs
            try:
                spec.loader.exec_module(module)
            except BaseException:
                sys.modules.pop(spec.name, None)
                raise
            return module
        return importlib.import_module(name)
    except PluginError:
        raise
    except Exception as exc:  # the plugin's own code failed: one line, whatever it raised
        raise PluginError(f"${ENV}: {name}: cannot load it ({type(exc).__name__}: {exc})") from None


def _register_of(module, name: str):
    register = getattr(module, "register", None)
    if not callable(register):
        raise PluginError(f"${ENV}: {name}: expected a module with a register() function, found none")
    return register
