# SPDX-License-Identifier: Apache-2.0
# Formal: bounded model checking and proofs with Yosys, yosys-smtbmc, z3 and ABC (no SymbiYosys),
# then every injected fault of formal/faults.txt, which must each give a counterexample.
# scripts/formal.py, docs/formal.md. Results (logs, models, counterexample VCDs, summary.md and
# summary.json) in build/formal/.
.PHONY: formal

formal: deps ## formal checks (docs/formal.md): the AXI4-Lite registers and the HBM AXI4 port (handshakes, responses, order), the matrix-unit controller (order, errors, no hang, completion bound), the HBM pseudo-channel controller (every JEDEC timing rule the device model checks), the accelerator's dependency tokens (balance, no module ahead of its tokens, overflow error); all proven for every depth; every property group also caught on injected faults (~12 min; FAULTS=0: checks only, FORMAL=name: one check or group)
	@scripts/formal.py --jobs $(JOBS) $(if $(filter 0,$(FAULTS)),--no-faults) $(FORMAL)
