"""What both experiments' reports use: the `spbench profile` driver, writing files, intervals, labels,
row helpers, the performance profile, figure helpers, Markdown sections, measurement conditions,
failed rows, the cost models' error and the report stamp. Imports no experiment."""
