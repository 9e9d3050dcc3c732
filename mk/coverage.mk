# SPDX-License-Identifier: Apache-2.0
# make coverage: line and toggle coverage of rtl/ over a fast-tier regression, in its own build
# (build-cov/, configured with -DTPU_COVERAGE=ON); scripts/coverage.py, docs/coverage.md.
.PHONY: coverage

COV_BUILD ?= build-cov
COVERAGE_TOGGLE ?= ON
COVERAGE_ARGS ?=

coverage: deps ## line+toggle coverage of rtl/ over the fast tier: [SEEDS=n] [SEED=s] [FILTER=glob] [COVERAGE_TOGGLE=OFF] [LAUNCHER=slurm] (docs/coverage.md)
	@cmake -S . -B $(COV_BUILD) -DCMAKE_BUILD_TYPE=Release -DTPU_COVERAGE=ON \
	  -DTPU_COVERAGE_TOGGLE=$(COVERAGE_TOGGLE) > /dev/null
	@cmake --build $(COV_BUILD) -j $(JOBS) -- --no-print-directory 2>&1 \
	  | grep -vE '^\[ *[0-9]+%\] (Built target|Building|Linking|Verilating)|^Consolidate|^Scanning'; \
	  exit $${PIPESTATUS[0]}
	@/usr/bin/python3 scripts/coverage.py --build $(COV_BUILD) --jobs $(JOBS) $(if $(SEEDS),--seeds $(SEEDS)) \
	  $(if $(SEED),--seed $(SEED)) $(if $(FILTER),--filter '$(FILTER)') \
	  $(if $(filter slurm,$(LAUNCHER)),--regress-args "--launcher slurm $(if $(PARTITION),--partition $(PARTITION)) $(if $(SLURM_ARGS),--slurm-args '$(SLURM_ARGS)')") \
	  $(COVERAGE_ARGS)
