"""spbench: benchmarks for distributed sparse Tucker (HOOI) and parallel sparse triangular solve."""
from importlib.metadata import PackageNotFoundError, version

try:
    __version__ = version("spbench")
except PackageNotFoundError:  # running from a source tree that was never installed
    __version__ = "0.0.0+unknown"
