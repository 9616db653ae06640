"""The Tucker experiment's Cython kernels: the local TTMs, Lanczos steps, Lite's placement, the
(slice, rank) bitmaps of simulated points, tensor stand-ins drawn into stores (tucker-lite)."""
