"""The SpTrSV cost model's calibration on this machine (`spbench calibrate`); recorded in a sweep's
meta.json, so its code is no part of a run's code version."""
