"""Cython kernels (OpenMP); nothing but kernels lives here."""
