# spbench make targets.  `make demo` and `make test` do all the set-up on a fresh clone.
PYTHON   ?= python3
VENV     ?= .venv
PY       := $(VENV)/bin/python
SPBENCH  := $(VENV)/bin/spbench
RESULTS  ?= results
PLOTS    ?= plots
# A kernel or build change re-installs (the .so is built by pip from kernels/*.pyx).
BUILD_INPUTS := pyproject.toml setup.py $(wildcard kernels/*.pyx kernels/*.h)

.PHONY: install test demo bench bench-serial bench-barrier clean

$(VENV)/.installed: $(BUILD_INPUTS)
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip setuptools wheel
	$(PY) -m pip install --quiet -e ".[test]"
	touch $@

install: $(VENV)/.installed

test: install
	$(PY) -m pytest -q

demo: install
	$(SPBENCH) info
	$(SPBENCH) run configs/smoke.yaml --out $(RESULTS)/smoke
	$(SPBENCH) profile $(RESULTS)/smoke --out $(PLOTS)
	@echo "tables and figures: $(PLOTS)/smoke/REPORT.md"

bench: bench-serial bench-barrier

bench-serial: install
	$(PY) -m spbench.sptrsv.kernel_bench serial --grid 400 --repeats 100

bench-barrier: install
	$(PY) -m spbench.sptrsv.kernel_bench barrier --grid 300 --cores 2 --rounds 5

clean:
	rm -rf build *.egg-info kernels/*.c kernels/*.so
