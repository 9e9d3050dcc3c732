# SPDX-License-Identifier: Apache-2.0
# make waves: re-run one test with FST tracing.
.PHONY: waves

waves: deps ## re-run TEST=Suite.Test [SEED=s] with FST tracing into waves/<Suite>_<Test>.fst
	@test -n "$(TEST)" || { echo "usage: make waves TEST=Suite.Test [SEED=n] [FROM=cycle TO=cycle]"; exit 2; }
	@cmake -S . -B $(TRACE_BUILD) -DCMAKE_BUILD_TYPE=Release -DTPU_TRACE=ON > /dev/null
	@cmake --build $(TRACE_BUILD) -j $(JOBS) -- --no-print-directory 2>&1 | grep -E '\[verilator\]|error' || true
	@ran=0; for t in $(TRACE_BUILD)/tests/*_test; do \
	  if $$t --gtest_list_tests --gtest_filter='$(TEST)' | grep -q '^  '; then ran=1; \
	    $$t --gtest_filter='$(TEST)' --trace $(if $(SEED),--seed=$(SEED)) \
	      $(if $(FROM),--trace-from=$(FROM)) $(if $(TO),--trace-to=$(TO)) || exit 1; fi; \
	done; test $$ran = 1 || { echo "waves: no test matches '$(TEST)' (see ctest -N in $(BUILD))"; exit 2; }
