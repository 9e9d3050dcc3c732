# SPDX-License-Identifier: Apache-2.0
# Top-level entry points; `make help` lists them. C++ and Verilated models build with CMake into
# build/ (incremental, ccache); every Verilator build prints its time.
SHELL := /bin/bash
BUILD ?= build
TRACE_BUILD ?= build-trace
JOBS ?= 2
CTEST_ARGS ?=

.DEFAULT_GOAL := help
.PHONY: help deps configure build run test test-long lint synth bench bench-golden bench-mxu bench-accel bench-tpu bench-hbm bench-models bench-train bench-jobs models verify-exhaustive mutants clean

help: ## list the targets
	@echo "TPU-style bf16 matrix accelerator: RTL, golden models and verification."
	@echo
	@grep -hE '^[a-z-]+:.*## ' $(MAKEFILE_LIST) | sed 's/:.*## /\t/' | awk -F'\t' '{printf "  make %-18s %s\n", $$1, $$2}'
	@echo
	@echo "Variables: SEED=n (reproduce a random run), TEST=Suite.Test (make waves), JOBS=$(JOBS),"
	@echo "  RUN_ARGS=... (tpusim options for make run), BENCH_ARGS=... (tpu_mxu_bench options),"
	@echo "  ACCEL_BENCH_ARGS=... (tpu_accel_bench options, e.g. --quick --no-stack),"
	@echo "  HBM_BENCH_ARGS=... (tpu_hbm_replay options, e.g. --requests-scale 0.1),"
	@echo "  MODELS_BENCH_ARGS=... (scripts/bench_models.py options, e.g. --models resnet18)"
	@echo "  TRAIN_BENCH_ARGS=... (scripts/bench_train.py options, e.g. --quick)"

deps: ## install missing Debian packages (idempotent; quick when all are present)
	@scripts/deps.sh

$(BUILD)/Makefile: CMakeLists.txt | deps
	@cmake -S . -B $(BUILD) -DCMAKE_BUILD_TYPE=Release > /dev/null

configure: deps $(BUILD)/Makefile

build: configure ## build models, Verilated RTL, tests and programs
	@cmake --build $(BUILD) -j $(JOBS) -- --no-print-directory 2>&1 \
	  | grep -vE '^\[ *[0-9]+%\] (Built target|Building|Linking|Verilating)|^Consolidate|^Scanning'; \
	  exit $${PIPESTATUS[0]}

run: build ## the main job: the trained digits CNN (examples/) on the default accelerator over the digits test split, checked
	@cmake --build $(BUILD) -j $(JOBS) --target tpusim-16x16_1ch -- --no-print-directory 2>&1 \
	  | grep -E '\[verilator\]|error|Error'; exit $${PIPESTATUS[0]}
	@$(BUILD)/sim/tpusim onnx examples/digits_cnn.onnx --input examples/digits_test_x.npy \
	  --labels examples/digits_test_labels.npy --reference examples/digits_cnn_torch_logits.npy \
	  --out $(BUILD)/run $(RUN_ARGS)

test: build ## the fast test tier (what CI runs): GoogleTest suites, the Python module, Slurm, through ctest; JUnit in build/junit-fast.xml
	@cmake --build $(BUILD) -j $(JOBS) --target tpusim-16x16_1ch -- --no-print-directory 2>&1 \
	  | grep -E '\[verilator\]|error|Error'; exit $${PIPESTATUS[0]}
	@cd $(BUILD) && $(if $(SEED),TPU_SEED=$(SEED)) ctest -j $(JOBS) -L fast --output-on-failure \
	  --output-junit $(abspath $(BUILD))/junit-fast.xml $(CTEST_ARGS)

test-long: configure ## the long tier: matrix unit 16×16 … 128×128, HBM full stack, accelerator 16×16 and the TPU-class 128×128 on 8 channels, ResNet-18 from ONNX on it, issue 35's torchvision models with the vector unit (builds and exports them first)
	@cmake --build $(BUILD) -j $(JOBS) --target mxu_long_test hbm_long_test accel_long_test models_long_test zoo_long_test numerics_long_test -- --no-print-directory 2>&1 \
	  | grep -E '\[verilator\]|error|Error'; exit $${PIPESTATUS[0]}
	@for m in resnet18 resnet50 mobilenet_v2 squeezenet1_1 efficientnet_b0 vgg11; do \
	  test -f $(BUILD)/examples/$$m.onnx || { scripts/deps.sh models && \
	  /usr/bin/python3 scripts/make_models.py $$m --out $(BUILD)/examples; } || exit 1; done
	@cd $(BUILD) && $(if $(SEED),TPU_SEED=$(SEED)) ctest -j $(JOBS) -L long --output-on-failure \
	  --output-junit $(abspath $(BUILD))/junit-long.xml $(CTEST_ARGS)

lint: deps ## verilator --lint-only -Wall on every RTL module, and the Yosys-subset checks
	@scripts/lint.sh

synth: deps ## Yosys on every synthesis configuration (JOBS at a time): cells, flip-flops, logic levels
	@JOBS=$(JOBS) scripts/synth.sh

bench: build ## MAC speed; matrix-unit utilization; HBM bandwidth; the accelerator end to end (~135 min)
	@cmake --build $(BUILD) -j $(JOBS) --target tpu_mxu_bench tpu_hbm_replay -- --no-print-directory 2>&1 \
	  | grep -E '\[verilator\]|error|Error'; exit $${PIPESTATUS[0]}
	@mkdir -p $(BUILD)/bench
	@$(BUILD)/sim/tpu_bench
	@$(BUILD)/sim/tpu_golden_bench --csv $(BUILD)/bench/golden.csv
	@/usr/bin/python3 scripts/bench_table.py --dir $(BUILD)/bench stamp golden
	@$(BUILD)/sim/tpu_mxu_bench $(BENCH_ARGS) --csv $(BUILD)/bench/mxu.csv
	@/usr/bin/python3 scripts/bench_table.py --dir $(BUILD)/bench stamp mxu
	@echo
	@$(BUILD)/sim/tpu_hbm_replay --bench $(if $(SEED),--seed $(SEED)) $(HBM_BENCH_ARGS) --csv $(BUILD)/bench/hbm.csv
	@/usr/bin/python3 scripts/bench_table.py --dir $(BUILD)/bench stamp hbm
	@echo
	@$(MAKE) --no-print-directory bench-accel

bench-golden: build ## the golden GEMM's MACs/s on one thread per kernel (exact, scalar FMA, AVX2, AVX-512), both modes (~1 min)
	@mkdir -p $(BUILD)/bench
	@$(BUILD)/sim/tpu_golden_bench $(if $(SEED),--seed $(SEED)) --csv $(BUILD)/bench/golden.csv
	@/usr/bin/python3 scripts/bench_table.py --dir $(BUILD)/bench stamp golden

bench-mxu: configure ## only the matrix-unit part of make bench: utilization on 4x4 .. 128x128, then simulation speed and cold builds (~13 min once built; BENCH_ARGS=--sizes 4,8,...,256 adds TPU v1's array)
	@cmake --build $(BUILD) -j $(JOBS) --target tpu_mxu_bench -- --no-print-directory 2>&1 \
	  | grep -E '\[verilator\]|error|Error'; exit $${PIPESTATUS[0]}
	@mkdir -p $(BUILD)/bench
	@$(BUILD)/sim/tpu_mxu_bench $(BENCH_ARGS) --csv $(BUILD)/bench/mxu.csv
	@/usr/bin/python3 scripts/bench_table.py --dir $(BUILD)/bench stamp mxu

bench-jobs: configure ## --jobs N: the digits CNN over 450 images on 16x16_1ch with 1, 2, ... engine processes: wall time, speed-up, outputs identical (~1 min); scripts/bench_jobs.py --help for ResNet-50 at batch 8
	@cmake --build $(BUILD) -j $(JOBS) --target tpusim tpusim-16x16_1ch -- --no-print-directory 2>&1 \
	  | grep -E '\[verilator\]|error|Error'; exit $${PIPESTATUS[0]}
	@/usr/bin/python3 scripts/bench_jobs.py --build $(BUILD)
	@/usr/bin/python3 scripts/bench_table.py --dir $(BUILD)/bench stamp jobs

bench-models: configure ## ResNet-18 and ResNet-50 from ONNX on 128x128_8ch and 16x16_1ch: cycles, utilization, HBM traffic, layer classes (~40 min)
	@scripts/deps.sh models
	@cmake --build $(BUILD) -j $(JOBS) --target tpusim tpusim-16x16_1ch tpusim-128x128_8ch -- --no-print-directory 2>&1 \
	  | grep -E '\[verilator\]|error|Error'; exit $${PIPESTATUS[0]}
	@mkdir -p $(BUILD)/bench
	@/usr/bin/python3 scripts/bench_models.py --tpusim $(BUILD)/sim/tpusim --examples $(BUILD)/examples \
	  --out $(BUILD)/bench $(MODELS_BENCH_ARGS)
	@/usr/bin/python3 scripts/bench_table.py --dir $(BUILD)/bench stamp models

bench-train: configure ## training: transposed GEMMs at the same shapes, per-pass MACs/cycle of tpusim train (digits MLP and CNN, a wider MLP), on 16x16_1ch and 128x128_8ch (~60 min)
	@scripts/deps.sh models
	@cmake --build $(BUILD) -j $(JOBS) --target tpusim tpusim-16x16_1ch tpusim-128x128_8ch -- --no-print-directory 2>&1 \
	  | grep -E '\[verilator\]|error|Error'; exit $${PIPESTATUS[0]}
	@mkdir -p $(BUILD)/bench
	@/usr/bin/python3 scripts/bench_train.py --tpusim $(BUILD)/sim/tpusim --out $(BUILD)/bench $(TRAIN_BENCH_ARGS)

models: deps ## regenerate the example models with PyTorch: examples/ (the digits MLP and CNN, trained) and build/examples (torchvision's ResNet-18/50, MobileNetV2, SqueezeNet 1.1, EfficientNet-B0, VGG-11)
	@scripts/deps.sh models
	@/usr/bin/python3 scripts/make_models.py digits --out examples
	@/usr/bin/python3 scripts/train_reference.py --sizes 64,128,64,10 --train examples/digits_train.npz \
	  --test examples/digits_test.npz --epochs 10 --batch 32 --lr 0.05 --momentum 0.9 --seed 1 \
	  --json examples/digits_mlp_sgd_torch.json
	@/usr/bin/python3 scripts/train_reference.py --cnn examples/digits_cnn.onnx --train examples/digits_train.npz \
	  --test examples/digits_test.npz --epochs 5 --batch 32 --lr 0.05 --momentum 0.9 --seed 1 \
	  --json examples/digits_cnn_sgd_torch.json
	@for m in resnet18 resnet50 mobilenet_v2 squeezenet1_1 efficientnet_b0 vgg11; do \
	  /usr/bin/python3 scripts/make_models.py $$m --out $(BUILD)/examples || exit 1; done

bench-accel: configure ## the accelerator end to end: DMA bandwidth, roofline tables, sim speed, then bench-tpu (~100 min)
	@cmake --build $(BUILD) -j $(JOBS) --target tpu_accel_bench -- --no-print-directory 2>&1 \
	  | grep -E '\[verilator\]|error|Error'; exit $${PIPESTATUS[0]}
	@mkdir -p $(BUILD)/bench
	@$(BUILD)/sim/tpu_accel_bench $(if $(SEED),--seed $(SEED)) $(ACCEL_BENCH_ARGS) --csv $(BUILD)/bench/accel.csv
	@echo
	@$(MAKE) --no-print-directory bench-tpu

bench-tpu: configure ## the TPU-class table on 128x128_8ch: GEMV, GEMMs, dense, ResNet-50 layers at batch 8 (~60 min)
	@cmake --build $(BUILD) -j $(JOBS) --target tpu_accel_bench -- --no-print-directory 2>&1 \
	  | grep -E '\[verilator\]|error|Error'; exit $${PIPESTATUS[0]}
	@mkdir -p $(BUILD)/bench
	@$(BUILD)/sim/tpu_accel_bench --configs 128x128_8ch --table tpu $(if $(SEED),--seed $(SEED)) $(TPU_BENCH_ARGS) --csv $(BUILD)/bench/accel_tpu.csv

bench-hbm: configure ## only the HBM part of make bench: 5 traffic classes x 2 refresh modes (~10 min)
	@cmake --build $(BUILD) -j $(JOBS) --target tpu_hbm_replay -- --no-print-directory 2>&1 \
	  | grep -E '\[verilator\]|error|Error'; exit $${PIPESTATUS[0]}
	@mkdir -p $(BUILD)/bench
	@$(BUILD)/sim/tpu_hbm_replay --bench $(if $(SEED),--seed $(SEED)) $(HBM_BENCH_ARGS) --csv $(BUILD)/bench/hbm.csv
	@/usr/bin/python3 scripts/bench_table.py --dir $(BUILD)/bench stamp hbm

verify-exhaustive: build ## the 2^32 sweeps: golden vs host oracles, RTL vs golden, the vector unit's exp, reciprocal, rsqrt, sqrt, sigmoid, tanh, log and erf, and its division on 2^32 pairs (~2 h, 2 cores)
	@$(BUILD)/sim/tpu_sweep --all $(if $(SEED),--seed $(SEED))

mutants: deps ## inject each fault of scripts/mutants.txt; the fast tier must catch all (hours; scripts/mutate.sh N-M runs a range)
	@scripts/mutate.sh

clean: ## remove build outputs (build/, build-trace/, build-cov/) and wave dumps
	rm -rf $(BUILD) $(TRACE_BUILD) build-cov waves/*.fst

# The verification engineer's targets (regress, waves, coverage, report), one file each.
include $(sort $(wildcard mk/*.mk))
