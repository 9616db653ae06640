"""What is kept on disk: result rows and meta.json, their declared fields, atomic writes, the code
version rows carry, the calibration file format, the data cache root (docs/design.md, "Results")."""
