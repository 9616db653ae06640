"""A sweep from its config to its stored rows: the config and its YAML, algorithm parameters, points and
settings, what a results folder holds, the pre-flight check, the runner, simulated points apart, shards
and Slurm arrays (docs/design.md, "Data flow")."""
