# spbench make targets.  `make demo` and `make test` do all the set-up on a fresh clone.
PYTHON   ?= python3
VENV     ?= .venv
PY       := $(VENV)/bin/python
SPBENCH  := $(VENV)/bin/spbench
RESULTS  ?= results
PLOTS    ?= plots
# A kernel or build change re-installs (the .so is built by pip from kernels/**/*.pyx).
BUILD_INPUTS := pyproject.toml setup.py $(wildcard kernels/*.pyx kernels/*/*.pyx kernels/*/*.pxd kernels/*/*.h)
# iChol data sets need scikit-sparse, which builds against SuiteSparse; without it they are skipped.
SUITESPARSE_INCLUDE ?= /usr/include/suitesparse
ICHOL_HINT := spbench: iChol data sets disabled (no SuiteSparse): run apt-get install libsuitesparse-dev (or conda install suitesparse), then $(PY) -m pip install scikit-sparse==0.4.16

.PHONY: install test demo bench bench-serial bench-barrier bench-schedulers bench-lite bench-hooi bench-tucker-scale bench-ingest tucker-calibration clean \
	$(RUN_TARGETS) $(SCHEDULE_TARGETS) $(FIGURES) papers sptrsv tucker

# ---- Reproducing the papers (docs/reproducing.md) ----------------------------------
# `make fig10` runs the figure's configs then profiles them into $(PLOTS)/<name>/REPORT.md.
#   SCALE=small      quick pass (`--scale small`: smaller stand-ins, <= 10 repeats; results/<name>_small/)
#   LAUNCHER='srun -n {ranks}'   Tucker MPI launcher (`--launcher`), with EXECUTION=measured
#   EXECUTION=measured|simulate  override the configs' execution
#   CALIBRATION=FILE model simulated Tucker times with this calibration (`spbench calibrate` wrote it) instead of
#                    this machine's, which is then neither measured nor needed
#   FORCE=1          keep a Tucker calibration measured on a busy machine (every report it feeds says so)
SCALE       ?=
LAUNCHER    ?=
EXECUTION   ?=
CALIBRATION ?=
FORCE       ?=
SUFFIX    := $(if $(filter small,$(SCALE)),_small)
RUN_FLAGS := $(if $(SCALE),--scale $(SCALE)) $(if $(EXECUTION),--execution $(EXECUTION))
TUCKER_CONFIGS := tucker_32 tucker_512 tucker_k20 tucker_hyper tucker_big tucker_scaling
SPTRSV_CONFIGS := sptrsv_suitesparse sptrsv_ichol sptrsv_metis
RUN_TARGETS := $(addprefix run-,$(TUCKER_CONFIGS) $(SPTRSV_CONFIGS))
SCHEDULE_TARGETS := $(addprefix schedule-,$(SPTRSV_CONFIGS))
FIGURES := fig1.1 fig5.1 fig6.1 fig6.2 table6.1 table6.2 table6.3 \
	fig10 fig11 fig12 fig13 fig14 fig15 fig16 fig17

$(VENV)/.installed: $(BUILD_INPUTS)
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip setuptools wheel
	@if dpkg -s libsuitesparse-dev >/dev/null 2>&1 || test -f $(SUITESPARSE_INCLUDE)/cholmod.h; then ss=1; \
	elif [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then \
	  echo "installing libsuitesparse-dev (CHOLMOD, for the iChol data sets)"; \
	  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq libsuitesparse-dev >/dev/null && ss=1; \
	fi; \
	echo "spbench: building the kernels (about a minute)"; \
	if [ "$$ss" = 1 ] && $(PY) -m pip install --quiet -e ".[test,ichol]"; then :; else \
	  echo "$(ICHOL_HINT)"; $(PY) -m pip install --quiet -e ".[test]"; fi
	touch $@

install: $(VENV)/.installed

# the suite on every core, at most 4 (each test process stays under 4 GB): TEST_JOBS=1 runs it in one process
TEST_JOBS ?= $(shell n=$$(nproc 2>/dev/null || echo 1); [ $$n -gt 4 ] && n=4; echo $$n)
test: install
	$(PY) -m pytest -q $(if $(filter-out 1,$(TEST_JOBS)),-n $(TEST_JOBS))

demo: install
	$(SPBENCH) info
	$(SPBENCH) run configs/smoke.yaml --out $(RESULTS)/smoke
	$(SPBENCH) run configs/smoke_tucker.yaml --out $(RESULTS)/smoke_tucker
	$(SPBENCH) profile $(RESULTS)/smoke --out $(PLOTS)
	$(SPBENCH) profile $(RESULTS)/smoke_tucker --out $(PLOTS)
	@echo "tables and figures: $(PLOTS)/smoke/REPORT.md, $(PLOTS)/smoke_tucker/REPORT.md"

# docs/figures.md and docs/figures/: one example of every figure type, from fresh demo sweeps in
# $(GALLERY) (SpTrSV smoke twice with --runs 3 for the compare figure; Tucker with modelled times)
GALLERY ?= build/gallery
.PHONY: figures-gallery
figures-gallery: install
	$(MAKE) tucker-calibration SCALE=small
	rm -rf $(GALLERY)
	$(SPBENCH) run configs/smoke.yaml --runs 3 --out $(GALLERY)/results/smoke
	$(SPBENCH) run configs/smoke.yaml --runs 3 --out $(GALLERY)/results/smoke_again
	$(SPBENCH) run configs/smoke_tucker.yaml --out $(GALLERY)/results/smoke_tucker
	$(SPBENCH) calibrate --quick --force --cores 1,2 --out $(GALLERY)/sptrsv_costs.json
	$(SPBENCH) run configs/smoke.yaml --execution simulate --machine $(GALLERY)/sptrsv_costs.json --out $(GALLERY)/results/smoke_simulated
	$(SPBENCH) profile $(GALLERY)/results/smoke --out $(GALLERY)/plots
	$(SPBENCH) profile $(GALLERY)/results/smoke_simulated --out $(GALLERY)/plots
	$(SPBENCH) profile $(GALLERY)/results/smoke_tucker --out $(GALLERY)/plots
	$(SPBENCH) compare $(GALLERY)/results/smoke $(GALLERY)/results/smoke_again --out $(GALLERY)/plots/compare
	$(PY) -m spbench.report.gallery $(GALLERY)/plots docs/figures docs/figures.md

bench: bench-serial bench-barrier bench-schedulers bench-order bench-lite bench-hooi bench-ttm bench-ingest

bench-serial: install
	$(SPBENCH) bench serial --grid 400 --repeats 100 --out $(RESULTS)/bench-serial

bench-barrier: install
	$(SPBENCH) bench barrier --grid 300 --cores 2 --rounds 5 --out $(RESULTS)/bench-barrier

bench-schedulers: install
	$(SPBENCH) bench schedulers --grid 300 --cores 2 --rounds 3 --out $(RESULTS)/bench-schedulers
	$(SPBENCH) bench slope --grids 100,200,350,550 --out $(RESULTS)/bench-slope

# at 1 core a schedule is a row order: the serial kernel in natural vs wavefront (level) order
.PHONY: bench-order
bench-order: install
	$(SPBENCH) bench order --repeats 100 --rounds 5 --out $(RESULTS)/bench-order

bench-lite: install
	$(SPBENCH) bench lite --nnz 10000000 --ranks 512 --out $(RESULTS)/bench-lite

bench-tucker-scale: install
	$(SPBENCH) bench tucker-scale --ranks 1,2,4,8 --out $(RESULTS)/bench-tucker-scale

bench-hooi: install
	$(SPBENCH) bench hooi --threads 1 --out $(RESULTS)/bench-hooi
	$(SPBENCH) run configs/tucker_measured.yaml --out $(RESULTS)/tucker_measured
	$(SPBENCH) profile $(RESULTS)/tucker_measured --out $(PLOTS)

# the local TTM, csf against paper (Appendix A) in one run, at 1 and 2 threads (3-way, 4-way, nell2 stand-in)
.PHONY: bench-ttm
bench-ttm: install
	$(SPBENCH) bench ttm --threads 1,2 --reps 5 --out $(RESULTS)/bench-ttm

# SPLATT's Tucker beside ours (the TTM benchmark's four cases): SPLATT=path/to/splatt built from its public
# source (branch tucker; docs/performance.md says how), not shipped here
.PHONY: bench-splatt
bench-splatt: install
	@test -n "$(SPLATT)" || { echo "make bench-splatt: set SPLATT=path/to/splatt (docs/performance.md says how to build it)"; exit 2; }
	$(SPBENCH) bench splatt --binary "$(SPLATT)" --threads 1,2 --iterations 10 --reps 5 --out $(RESULTS)/bench-splatt

# The original HDagg (and SpMP) as a driver binary, for `spbench bench sptrsv-refs --hdagg BIN`:
#   make hdagg-ref HDAGG_SRC=path/to/HDagg-benchmark [SPMP_SRC=path/to/SpMP]
# HDAGG_SRC: a checkout of BehroozZare/HDagg-benchmark; SPMP_SRC: a checkout of IntelLabs/SpMP with
# libspmp.a built (make CUSTOM_CXX=g++ libspmp.a). Their CMake needs MKL; this compiles their
# src/ directly (no MKL, METIS or PAPI) with the flags below. Neither is shipped here.
HDAGG_REF_DIR   := build/hdagg-ref
HDAGG_REF_FLAGS := -O3 -std=c++17 -fopenmp -DNDEBUG -mavx2 -mfma -Wno-write-strings -w
HDAGG_REF_SRCS   = $(HDAGG_SRC)/src/dense_blas/BLAS.cpp $(HDAGG_SRC)/src/hdagg/hdagg.cpp \
	$(wildcard $(HDAGG_SRC)/src/Group/*.cpp $(HDAGG_SRC)/src/lbc/*.cpp $(HDAGG_SRC)/src/sparse_blas/*.cpp) \
	$(filter-out %/metis_interface.cpp,$(wildcard $(HDAGG_SRC)/src/utils/*.cpp))
HDAGG_REF_INCS   = $(addprefix -I$(HDAGG_SRC)/src/,dense_blas/includes hdagg/includes Group/includes lbc/includes \
	sparse_blas/includes utils/includes) $(if $(SPMP_SRC),-I$(SPMP_SRC) -DSPMP)
.PHONY: hdagg-ref
hdagg-ref:
	@test -n "$(HDAGG_SRC)" && test -f "$(HDAGG_SRC)/src/hdagg/hdagg.cpp" || { echo "make hdagg-ref: set HDAGG_SRC=path/to/HDagg-benchmark (a checkout with src/hdagg/hdagg.cpp)"; exit 2; }
	@test -z "$(SPMP_SRC)" || test -f "$(SPMP_SRC)/libspmp.a" || { echo "make hdagg-ref: SPMP_SRC=$(SPMP_SRC): no libspmp.a there (run make CUSTOM_CXX=g++ libspmp.a in it)"; exit 2; }
	mkdir -p $(HDAGG_REF_DIR)/obj
	for f in $(HDAGG_REF_SRCS); do \
	  o=$(HDAGG_REF_DIR)/obj/$$(basename $$(dirname $$f))_$$(basename $$f .cpp).o; \
	  test "$$o" -nt "$$f" || $(CXX) $(HDAGG_REF_FLAGS) $(HDAGG_REF_INCS) -c $$f -o $$o || exit 1; \
	done
	$(CXX) $(HDAGG_REF_FLAGS) $(HDAGG_REF_INCS) bench/sptrsv/benchmarks/reference/hdagg_ref.cpp $(HDAGG_REF_DIR)/obj/*.o \
	  $(if $(SPMP_SRC),$(SPMP_SRC)/libspmp.a) -o $(HDAGG_REF_DIR)/hdagg_ref
	@echo "built $(HDAGG_REF_DIR)/hdagg_ref"

# The original HDagg and SpMP beside ours on the generator families and the three data sets' stand-ins
.PHONY: bench-sptrsv-refs
bench-sptrsv-refs: install
	@test -x "$(HDAGG)" || { echo "make bench-sptrsv-refs: set HDAGG=path/to/hdagg_ref (make hdagg-ref builds it)"; exit 2; }
	$(SPBENCH) bench sptrsv-refs --hdagg "$(HDAGG)" --cores 2,4,8,16,32,64,128 --out $(RESULTS)/bench-sptrsv-refs

# .tns text into a tensor store: a 5e7-nonzero nell2-shaped file (generated once into $SPBENCH_DATA/bench),
# converted at the default memory setting, against pandas' reader and `cat FILE > /dev/null`
bench-ingest: install
	$(SPBENCH) bench ingest --nnz 50000000 --memory 1GB --out $(RESULTS)/bench-ingest

# the cost models against measurement: each calibrates this machine, then stores the validation rows
.PHONY: bench-sptrsv-model bench-tucker-model
bench-sptrsv-model: install
	$(SPBENCH) calibrate --validate 300 --results $(RESULTS)/bench-sptrsv-model

bench-tucker-model: install
	$(SPBENCH) calibrate --experiment tucker --validate 200000 --results $(RESULTS)/bench-tucker-model

# Simulated Tucker rows get modelled HOOI times (Figs. 10, 11, 14-16) from this machine's Tucker
# calibration: made once when missing or made for an older cost model (`--quick` with SCALE=small).
# CALIBRATION=FILE uses that file instead; FORCE=1 keeps one measured on a busy machine.
CALIBRATE_REFUSED := make: the Tucker calibration was refused (above); FORCE=1 keeps one measured on a busy machine \
	(its reports say so), CALIBRATION=FILE models with a calibration you already have
tucker-calibration: install
	@if [ -n "$(CALIBRATION)" ]; then \
	  test -f "$(CALIBRATION)" || { echo "make: CALIBRATION=$(CALIBRATION): no such file (expected a calibration spbench calibrate wrote)"; exit 2; }; \
	elif ! $(PY) -c "from spbench.tucker.calibration.calibrate import default_calibration_path as p, load_calibration as l; l(p())" 2>/dev/null; then \
	  echo "$(SPBENCH) calibrate --experiment tucker $(if $(filter small,$(SCALE)),--quick) $(if $(FORCE),--force)"; \
	  $(SPBENCH) calibrate --experiment tucker $(if $(filter small,$(SCALE)),--quick) $(if $(FORCE),--force) \
	    || { rc=$$?; echo "$(CALIBRATE_REFUSED)" >&2; exit $$rc; }; \
	fi

TUCKER_CALIBRATION_FLAGS := $(if $(CALIBRATION),$(if $(filter measured,$(EXECUTION)),,--machine "$(CALIBRATION)"))
$(addprefix run-,$(TUCKER_CONFIGS)): run-%: install tucker-calibration
	$(SPBENCH) run configs/$*.yaml --out $(RESULTS)/$*$(SUFFIX) $(RUN_FLAGS) $(if $(LAUNCHER),--launcher "$(LAUNCHER)") \
	  $(TUCKER_CALIBRATION_FLAGS)
	$(SPBENCH) profile $(RESULTS)/$*$(SUFFIX) --out $(PLOTS)

$(addprefix run-,$(SPTRSV_CONFIGS)): run-%: install
	$(SPBENCH) run configs/$*.yaml --out $(RESULTS)/$*$(SUFFIX) $(RUN_FLAGS)
	$(SPBENCH) profile $(RESULTS)/$*$(SUFFIX) --out $(PLOTS)

# schedules only (`--execution schedule`) at the paper's 16-128 cores, into the measured runs' folders.
# SCALE=full here means the matrices' full sizes (`--scale paper`: stand-ins at Table A.1's rows and
# nonzeros, results/<name>_paper/); exit status 1 (rows ended timeout or error: an HDagg schedule past its
# budget, `--timeout`) still profiles, the table says which.
SCHEDULE_SCALE  := $(if $(filter full,$(SCALE)),paper,$(SCALE))
SCHEDULE_SUFFIX := $(if $(SCHEDULE_SCALE),_$(SCHEDULE_SCALE))
TIMEOUT ?=
$(SCHEDULE_TARGETS): schedule-%: install
	$(SPBENCH) run configs/$*.yaml --out $(RESULTS)/$*$(SCHEDULE_SUFFIX) --execution schedule \
	  $(if $(SCHEDULE_SCALE),--scale $(SCHEDULE_SCALE)) $(if $(TIMEOUT),--timeout $(TIMEOUT)) || test $$? = 1
	$(SPBENCH) profile $(RESULTS)/$*$(SCHEDULE_SUFFIX) --out $(PLOTS)

# Benchmarks must not share cores (`make -j` would run two sweeps at once): run targets one by one.
.NOTPARALLEL:

# tucker-lite (Figs. 10-17); a stored run is skipped, so shared configs run once
fig10: run-tucker_32 run-tucker_512 run-tucker_k20 run-tucker_hyper
fig11 fig12 fig13 fig16 fig17: run-tucker_512 run-tucker_hyper
fig14: run-tucker_big
fig15: run-tucker_scaling
tucker: fig10 fig14 fig15
# sptrsv-elasticity (Figs. 1.1, 5.1, 6.1, 6.2, Tables 6.1-6.3): every one comes from the three data sets;
# Table 6.1 at 16-128 cores and Fig. 6.2 need only schedules (`make table6.1`: minutes), the rest measured solves
table6.1: $(SCHEDULE_TARGETS)
fig6.2 sptrsv: $(SCHEDULE_TARGETS) schedule-sptrsv_fig62 $(addprefix run-,$(SPTRSV_CONFIGS))
# Fig. 6.2's slopes over 2.6 decades of nonzeros: generator families at several sizes, schedules only
.PHONY: schedule-sptrsv_fig62
schedule-sptrsv_fig62: install
	$(SPBENCH) run configs/sptrsv_fig62.yaml --out $(RESULTS)/sptrsv_fig62$(SUFFIX) $(if $(SCALE),--scale $(SCALE))
	$(SPBENCH) profile $(RESULTS)/sptrsv_fig62$(SUFFIX) --out $(PLOTS)
fig1.1 fig5.1 fig6.1 table6.2 table6.3: $(addprefix run-,$(SPTRSV_CONFIGS))
papers: tucker sptrsv

# the batch template, srun launches and job arrays under a real single-node Slurm (root; else skipped)
.PHONY: slurm-check
slurm-check: install
	bash configs/slurm/check.sh

clean:
	rm -rf build *.egg-info kernels/*.c kernels/*.so kernels/*/*.c kernels/*/*.so

# Every claim of both papers beside ours, with a verdict and its reason, on one page: $(PLOTS)/claims/REPORT.md,
# from all results folders under $(RESULTS) together (docs/reproducing.md, "The claims, one by one")
.PHONY: claims
claims: install
	$(PY) -m spbench.report.claims $(RESULTS) --out $(PLOTS)/claims
