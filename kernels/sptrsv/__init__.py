"""The SpTrSV experiment's Cython kernels: the solves (serial, BSP, SSP, P2P) and their barriers,
the DAG and task graph, the schedulers' hot loops, incomplete Cholesky (sptrsv-elasticity)."""
