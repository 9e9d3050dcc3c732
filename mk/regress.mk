# SPDX-License-Identifier: Apache-2.0
# make regress: the test x seed matrix in parallel, with a JUnit file and a Markdown report
# (scripts/regress.py; docs/regress.md). Builds what it runs first.
.PHONY: regress

REGRESS_LONG_TARGETS := mxu_long_test hbm_long_test accel_long_test
REGRESS_ARGS ?=

# A bad TIER or LAUNCHER stops here, before the build (the script checks the other options).
ifneq ($(filter regress,$(MAKECMDGOALS)),)
ifneq ($(filter-out smoke full,$(TIER)),)
$(error TIER must be smoke or full, got '$(TIER)')
endif
ifneq ($(filter-out local slurm,$(LAUNCHER)),)
$(error LAUNCHER must be local or slurm, got '$(LAUNCHER)')
endif
endif

regress: build ## test x seed matrix [TIER=smoke|full SEEDS=n SEED=s FILTER=glob LAUNCHER=slurm PARTITION=p SLURM_ARGS=...] (docs/regress.md)
	@$(if $(filter full,$(TIER)),cmake --build $(BUILD) -j $(JOBS) --target $(REGRESS_LONG_TARGETS) \
	  -- --no-print-directory 2>&1 | grep -E '\[verilator\]|error|Error'; exit $${PIPESTATUS[0]})
	@/usr/bin/python3 scripts/regress.py --build $(BUILD) --jobs $(JOBS) $(if $(TIER),--tier $(TIER)) \
	  $(if $(SEEDS),--seeds $(SEEDS)) $(if $(SEED),--seed $(SEED)) \
	  $(if $(FILTER),--filter '$(FILTER)') $(if $(LAUNCHER),--launcher $(LAUNCHER)) \
	  $(if $(PARTITION),--partition '$(PARTITION)') $(if $(SLURM_ARGS),--slurm-args '$(SLURM_ARGS)') \
	  $(REGRESS_ARGS)
