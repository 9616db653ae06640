"""Data sets: the papers' matrices and tensors, readers, synthetic stand-ins, downloads."""
