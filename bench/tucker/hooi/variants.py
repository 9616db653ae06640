"""The names of HOOI's variants a config or a command line chooses from, importable without numpy
(``spbench bench … --help`` lists them): the Lanczos run (tucker-lite §4: ``paper`` = 2K steps,
``converged`` = thick restarts to convergence) and the local TTM kernel (Appendix A's element-wise
``paper``, or ``csf``, the compressed-sparse-fiber tree of §8's future work)."""

LANCZOS_MODES = ("paper", "converged")
TTM_KINDS = ("csf", "paper")
