"""The Tucker report of `spbench profile`: Figs. 10–17 beside the paper's numbers, time components,
provenance, and how far a stand-in is from its tensor (tucker-lite §7–8)."""
