"""The `spbench bench` framework, which knows no experiment: a benchmark declared as data, its
options, the catalog found from the folders, its rows and report; the benchmarks no experiment owns
(docs/design.md, "How to add … a benchmark")."""
