"""The HOOI cost model of ``execution: simulate`` rows (tucker-lite §4, §7.3): per-rank loads from
a distribution's exact counts, charged at the calibrated costs."""
