"""How many modes a Tucker tensor may have here: checked before its store is made (a file's first
line, a store's header) and left to that check by the pre-flight estimate."""
from __future__ import annotations

__all__ = ["MIN_MODES", "MAX_MODES", "check_modes"]

#: the fewest modes a Tucker tensor has (one mode has no Tucker model; two is a matrix's SVD)
MIN_MODES = 2
#: the most modes a Tucker tensor may have: a calibrated point counts the CSF trees' N·2^(N−2) prefix
#: sets and HOOI's core has K^N entries (a 200-nonzero tensor's calibrated point: 2.3 s at 8 modes,
#: 18 s at 9, 117 s at 10; every FROSTT tensor has at most 5)
MAX_MODES = 8


def check_modes(nmodes: int) -> None:
    """ValueError, one line, for a tensor of fewer than MIN_MODES or more than MAX_MODES modes."""
    if nmodes < MIN_MODES:
        raise ValueError(f"a tensor of {nmodes} mode (one index column per line): Tucker needs at least "
                         f"{MIN_MODES} modes")
    if nmodes > MAX_MODES:
        raise ValueError(f"a tensor of {nmodes} modes (index columns per line): Tucker here takes at most "
                         f"{MAX_MODES} (its CSF trees' prefix sets grow as N·2^(N−2), its core as K^N)")
