// SPDX-License-Identifier: Apache-2.0
// Whole networks on the TPU-class machine (long tier): torchvision's ResNet-18 (random initial
// weights, batch 1, exported to ONNX by scripts/make_models.py; `make test-long` generates it) on
// the Verilated 128x128 array over the 8-channel stack, every accelerator job bit-exact against
// the golden model; the graph's output equal bit for bit to the same network planned for a small
// machine (8x8, one channel) on the golden model (the contract's MAC order makes the answer
// independent of the machine); and PyTorch's float32 logits within 2% (relative L2 norm: bf16
// operands through 18 layers; a check of the importer's semantics, never of the hardware).
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <filesystem>

#include "Vaccel_128x128_8ch.h"
#include "tpu/io/npy.h"
#include "tpu/net.h"
#include "tpu/onnx_import.h"
#include "tpu/tb/accel_config.h"
#include "tpu/tb/accel_harness.h"
#include "tpu/tb/model_sim.h"
#include "tpu/tb/net_run.h"

namespace {

using namespace tpu;

TEST(Models, ResNet18OnTheTpuClassMachine) {
  const std::string dir = std::string(TPU_BINARY_DIR) + "/examples";
  const std::string model = dir + "/resnet18.onnx";
  ASSERT_TRUE(std::filesystem::exists(model))
      << model << " is missing: /usr/bin/python3 scripts/make_models.py resnet18 (make test-long "
      << "does it)";
  net::Graph g = onnx_import::LoadModel(model);
  std::map<std::string, net::Tensor> in{{"x", io::ReadNpy(dir + "/resnet18_input.npy")}};
  const net::Tensor ref = io::ReadNpy(dir + "/resnet18_torch_logits.npy");
  const auto cfg = tb::accel::ConfigFromName("128x128_8ch");
  const net::Plan plan = net::Plan::Build(g, {{"x", in.at("x").shape}}, cfg.machine.mode);

  auto sim = tb::accel::MakeAccelSim<Vaccel_128x128_8ch>(cfg);
  tb::accel::NetRunner runner(*sim, /*check=*/true);
  const auto out = runner.Run(plan, in);
  for (const auto& s : plan.steps()) {
    if (s.accel) EXPECT_GT(runner.steps()[size_t(s.index)].checked, 0u) << s.label;
  }
  const auto t = runner.Total();
  std::printf(
      "resnet18 on 128x128_8ch: %llu cycles, %llu MACs, utilization %.1f%%, %d jobs\n",
      static_cast<unsigned long long>(t.perf.cycles), static_cast<unsigned long long>(t.perf.macs),
      100.0 * double(t.perf.macs) / (double(t.perf.cycles) * cfg.PeakMacsPerCycle()), t.jobs);

  // The same network planned for a small machine, on the golden model: the same bits.
  const auto small = tb::accel::ConfigFromName("8x8_1ch");
  const net::Plan plan8 = net::Plan::Build(g, {{"x", in.at("x").shape}}, small.machine.mode);
  tb::accel::ModelSim msim(small);
  tb::accel::NetRunner mrun(msim, false);
  const auto out8 = mrun.Run(plan8, in);
  const auto& y = out.at("logits");
  const auto& y8 = out8.at("logits");
  ASSERT_EQ(y.f.size(), y8.f.size());
  EXPECT_EQ(std::memcmp(y.f.data(), y8.f.data(), y.f.size() * 4), 0)
      << "128x128_8ch and 8x8_1ch give different logits";

  ASSERT_EQ(y.shape, ref.shape);
  double num = 0, den = 0;
  for (size_t i = 0; i < y.f.size(); ++i) {
    num += (double(y.f[i]) - ref.f[i]) * (double(y.f[i]) - ref.f[i]);
    den += double(ref.f[i]) * ref.f[i];
  }
  const double rel = std::sqrt(num / den);
  std::printf("resnet18: relative L2 difference from PyTorch's float32 logits %.4f\n", rel);
  EXPECT_LT(rel, 0.02);
}

}  // namespace
