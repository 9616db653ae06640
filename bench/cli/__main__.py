"""`python -m spbench.cli`: the `spbench` command."""
from spbench.cli import main

if __name__ == "__main__":
    main()
