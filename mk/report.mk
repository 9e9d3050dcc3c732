# SPDX-License-Identifier: Apache-2.0
# make report: the benchmarks in a quick mode, or the CSVs of an earlier run (REPORT_DATA=dir, e.g.
# a full `make bench`'s), plotted with gnuplot into $(REPORT_OUT) (README.md, PNGs, data/), which
# the top README links to. The quick runs write their CSVs and logs to $(BUILD)/report/data.
.PHONY: report
REPORT_OUT ?= docs/report
REPORT_DATA ?=

report: $(if $(REPORT_DATA),deps,configure) ## PNG plots and tables (utilization, HBM bandwidth, roofline, stalls, training curves) into docs/report/: quick benches, ~24 min; REPORT_DATA=dir plots earlier CSVs
	@if [ -z "$(REPORT_DATA)" ]; then \
	  cmake --build $(BUILD) -j $(JOBS) --target tpu_mxu_bench tpu_hbm_replay tpu_accel_bench \
	    tpusim tpusim-16x16_1ch \
	    -- --no-print-directory 2>&1 | grep -E '\[verilator\]|error|Error'; \
	  test $${PIPESTATUS[0]} = 0 || exit 1; \
	fi
	@scripts/report.py --build $(BUILD) --out $(REPORT_OUT) --jobs $(JOBS) \
	  $(if $(REPORT_DATA),--data $(REPORT_DATA)) $(if $(SEED),--seed $(SEED))
