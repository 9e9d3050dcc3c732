// SPDX-License-Identifier: Apache-2.0
// Issue 35's torchvision models (long tier; `make test-long` exports them with
// scripts/make_models.py) on the golden model of the TPU-class machine with a vector unit: what
// the importer and the planner make of whole real networks. No RTL: the vector unit's programs
// and the RTL are checked bit for bit by the fast tier.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <map>
#include <set>

#include "tpu/io/npy.h"
#include "tpu/net.h"
#include "tpu/onnx_import.h"
#include "tpu/tb/accel_config.h"
#include "tpu/tb/model_sim.h"
#include "tpu/tb/net_run.h"

namespace {

using namespace tpu;

// Issue 35's torchvision models (make_models.py; `make test-long` exports them) on the golden
// model of the TPU-class machine with a vector unit of 2,048 rows: every operator that computes
// runs on the accelerator (the host keeps only data moves: Flatten, SqueezeNet's Concats), and
// the top-1 class and the logits (relative L2 within 5%: bf16 operands) agree with PyTorch's
// float32 answer; as whole-network programs, the same bits in the programs the layouts allow.
TEST(Models, TorchvisionModelsComputeOnlyOnTheAccelerator) {
  const std::string dir = std::string(TPU_BINARY_DIR) + "/examples";
  auto cfg = tb::accel::ConfigFromName("128x128_8ch");
  cfg.machine.vmem_depth = 2048;
  const std::set<std::string> moves = {"Flatten", "Reshape",   "Transpose", "Identity",
                                       "Dropout", "Concat",    "Split",     "Slice",
                                       "Squeeze", "Unsqueeze", "Pad"};
  for (const char* name :
       {"resnet18", "resnet50", "mobilenet_v2", "squeezenet1_1", "efficientnet_b0", "vgg11"}) {
    SCOPED_TRACE(name);
    const std::string model = dir + "/" + name + ".onnx";
    ASSERT_TRUE(std::filesystem::exists(model))
        << model << " is missing: /usr/bin/python3 scripts/make_models.py " << name
        << " (make test-long does it)";
    net::Graph g = onnx_import::LoadModel(model);
    std::map<std::string, net::Tensor> in{
        {g.inputs.at(0).name, io::ReadNpy(dir + "/" + name + "_input.npy")}};
    const net::Tensor ref = io::ReadNpy(dir + "/" + name + "_torch_logits.npy");
    net::Plan plan = net::PlanForInputs(&g, &in, cfg.machine.mode, true, cfg.machine.vmem_depth);
    int host = 0, views = 0;
    for (const auto& s : plan.steps()) {
      views += s.view ? 1 : 0;
      if (!s.accel && !s.view) {
        ++host;
        EXPECT_TRUE(moves.count(s.op)) << s.label << " (" << s.op << ") computes on the host";
      }
    }
    tb::accel::ModelSim sim(cfg);
    tb::accel::NetRunner runner(sim, false);
    const auto out = runner.Run(plan, in);
    const net::Tensor& y = out.at(g.outputs.at(0).name);
    ASSERT_EQ(y.f.size(), ref.f.size());
    double num = 0, den = 0;
    size_t best = 0, best_ref = 0;
    for (size_t i = 0; i < y.f.size(); ++i) {
      num += (double(y.f[i]) - ref.f[i]) * (double(y.f[i]) - ref.f[i]);
      den += double(ref.f[i]) * ref.f[i];
      if (y.f[i] > y.f[best]) best = i;
      if (ref.f[i] > ref.f[best_ref]) best_ref = i;
    }
    const double rel = std::sqrt(num / den);
    std::printf(
        "%s: %zu steps, %d on the host (data moves), %d views, %d jobs; top-1 %zu (PyTorch "
        "%zu); relative L2 difference %.4f\n",
        name, plan.steps().size(), host, views, runner.Total().jobs, best, best_ref, rel);
    EXPECT_EQ(best, best_ref);
    EXPECT_LT(rel, 0.05);
    // As whole-network programs (docs/onnx.md, "One program per network"): the same outputs,
    // every program's outputs checked against the jobs above, and as few programs as the
    // machine's layouts allow: one each (since ISA 1.6 SqueezeNet's too, whose Concat pieces
    // off a tile boundary are stored in parts), and no host step: its Concats are address
    // arithmetic in the program.
    tb::accel::NetRunner whole(sim, false);
    whole.SetWholeNetwork(true);
    const auto wout = whole.Run(plan, in);
    const auto& wy = wout.at(g.outputs.at(0).name).f;
    ASSERT_EQ(wy.size(), y.f.size());
    EXPECT_EQ(0, std::memcmp(wy.data(), y.f.data(), wy.size() * sizeof(float)));
    const std::map<std::string, size_t> programs = {{"resnet18", 1},        {"resnet50", 1},
                                                    {"mobilenet_v2", 1},    {"squeezenet1_1", 1},
                                                    {"efficientnet_b0", 1}, {"vgg11", 1}};
    EXPECT_EQ(whole.programs().size(), programs.at(name));
    int whole_host = 0;
    for (const auto& s : plan.steps()) {
      if (!s.accel && !s.view && !whole.steps().at(size_t(s.index)).addressed) {
        ++whole_host;
        ADD_FAILURE() << s.label << " (" << s.op << ") is a host step in the whole network";
      }
    }
    std::printf("%s: %zu programs as a whole network, %d host steps\n", name,
                whole.programs().size(), whole_host);
  }
}

}  // namespace
