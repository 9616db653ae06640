"""Tucker under MPI (tucker-lite §3, §5–6): the collectives, row owners σ_n, the distribution
computed in parallel, each rank's mode plan, and the measured runs' job, worker and task loop."""
