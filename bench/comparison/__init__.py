"""`spbench compare`: matched points of two results folders, their ratios and the statistics."""
