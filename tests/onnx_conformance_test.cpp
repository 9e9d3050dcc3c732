// SPDX-License-Identifier: Apache-2.0
// ONNX's own backend node tests (Debian's libonnx-testdata, /usr/share/libonnx-testdata/data/node)
// for the operators a CNN or an MLP needs, run through the importer and the network planner on two
// Verilated accelerators (8x8 and 3x5 arrays):
//  * every accelerator job's output bit-exact against the golden model (the runner's check);
//  * the graph outputs of the two arrays identical, bit for bit (the contract's order of MACs);
//  * every graph output within a bound of ONNX's float32 expected output that follows from the
//    bf16 rounding of the accelerator's operands (docs/onnx.md, "Conformance"):
//      |got - want| <= eps · S + 2^-100,  eps = 2^-7 + 2^-16 + (K + 2)·2^-23 with an accelerator
//      step (K its longest sum), (n + 2)·2^-23 for the host operators alone (n terms summed),
//      2^-20 for Softmax, where S is the output of the same graph on |inputs| and |constants|
//      (a BatchNormalization's mean negated: S bounds |x - mean|·s + |beta|), times 1.02.
//    The bound checks the importer's semantics (layouts, attributes, broadcasting), never the
//    hardware, which the bit-exact checks cover.
// The cases listed in kUnsupported must fail to plan with the given reason (a clear error, never a
// wrong answer); every other case of the listed operators must pass.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <map>
#include <set>
#include <string>

#include "Vaccel_3x5.h"
#include "Vaccel_8x8.h"
#include "test_support.h"
#include "tpu/net.h"
#include "tpu/onnx_import.h"
#include "tpu/tb/accel_config.h"
#include "tpu/tb/accel_harness.h"
#include "tpu/tb/model_sim.h"
#include "tpu/tb/net_run.h"

namespace {

namespace fs = std::filesystem;
using tpu::net::F32Bits;
using namespace tpu;
using tpu::tb::accel::Config;

const char* kDataDir = "/usr/share/libonnx-testdata/data/node";

// The operators of the list (test case name prefixes).
const char* kOps[] = {"test_gemm_", "test_matmul_", "test_conv_", "test_basic_conv_", "test_relu",
                      "test_maxpool_", "test_averagepool_", "test_globalaveragepool",
                      "test_globalmaxpool", "test_add", "test_softmax_", "test_batchnorm_",
                      "test_flatten_", "test_reshape_", "test_transpose_", "test_identity",
                      // The vector unit's operators (version 1.4): on the 3x5 array's vector unit,
                      // on the host on the 8x8 one, and the two bit for bit the same.
                      "test_sigmoid", "test_tanh", "test_exp", "test_sqrt", "test_reciprocal",
                      "test_neg", "test_clip", "test_leakyrelu", "test_mul", "test_sub",
                      "test_max_", "test_min_", "test_log$", "test_log_example", "test_erf",
                      "test_div",
                      // Data moves (host steps until whole-network programs).
                      "test_concat_", "test_split_", "test_slice", "test_squeeze", "test_unsqueeze",
                      "test_constant_pad", "test_edge_pad", "test_reflect_pad", "test_logsoftmax_",
                      "test_resize_", "test_convtranspose", "test_gather_"};

// Cases of those operators that are not supported, with (part of) the reason the planner gives.
const std::map<std::string, std::string> kUnsupported = {
    {"test_add_uint8", "element type uint8"},
    {"test_div_uint8", "element type uint8"},
    {"test_averagepool_3d_default", "only 1-D and 2-D pooling"},
    {"test_maxpool_3d_default", "only 1-D and 2-D pooling"},
    {"test_maxpool_2d_uint8", "element type uint8"},
    {"test_maxpool_with_argmax_2d_precomputed_pads", "Indices output"},
    {"test_maxpool_with_argmax_2d_precomputed_strides", "Indices output"},
    {"test_batchnorm_epsilon_training_mode", "training_mode (running statistics"},
    {"test_batchnorm_example_training_mode", "training_mode (running statistics"},
    {"test_identity_opt", "element type"},
    {"test_reshape_allowzero_reordered", "is empty"},
    {"test_identity_sequence", "element type"},
    {"test_max_float16", "element type float16"},
    {"test_max_int16", "element type int16"},
    {"test_max_int32", "element type int32"},
    {"test_max_int8", "element type int8"},
    {"test_max_uint16", "element type uint16"},
    {"test_max_uint32", "element type uint32"},
    {"test_max_uint64", "element type uint64"},
    {"test_max_uint8", "element type uint8"},
    {"test_max_int64", "is an integer tensor"},
    {"test_min_float16", "element type float16"},
    {"test_min_int16", "element type int16"},
    {"test_min_int32", "element type int32"},
    {"test_min_int8", "element type int8"},
    {"test_min_uint16", "element type uint16"},
    {"test_min_uint32", "element type uint32"},
    {"test_min_uint64", "element type uint64"},
    {"test_min_uint8", "element type uint8"},
    {"test_min_int64", "is an integer tensor"},
    {"test_clip_default_int8_inbounds", "element type int8"},
    {"test_clip_default_int8_max", "element type int8"},
    {"test_clip_default_int8_min", "element type int8"},
    {"test_expand_dim_changed", "operator not supported"},
    {"test_expand_dim_unchanged", "operator not supported"},
    {"test_mul_uint8", "element type uint8"},
    {"test_sub_uint8", "element type uint8"},
    {"test_edge_pad", "element type int32"},
    {"test_reflect_pad", "element type int32"},
    {"test_split_zero_size_splits", "is empty"},
    {"test_slice_start_out_of_bounds", "is empty"},
    {"test_resize_downsample_scales_cubic", "mode 'cubic'"},
    {"test_resize_downsample_scales_cubic_A_n0p5_exclude_outside", "mode 'cubic'"},
    {"test_resize_downsample_scales_cubic_align_corners", "mode 'cubic'"},
    {"test_resize_downsample_sizes_cubic", "mode 'cubic'"},
    {"test_resize_upsample_scales_cubic", "mode 'cubic'"},
    {"test_resize_upsample_scales_cubic_A_n0p5_exclude_outside", "mode 'cubic'"},
    {"test_resize_upsample_scales_cubic_align_corners", "mode 'cubic'"},
    {"test_resize_upsample_scales_cubic_asymmetric", "mode 'cubic'"},
    {"test_resize_upsample_sizes_cubic", "mode 'cubic'"},
    {"test_resize_downsample_scales_linear", "mode 'linear'"},
    {"test_resize_downsample_scales_linear_align_corners", "mode 'linear'"},
    {"test_resize_downsample_sizes_linear_pytorch_half_pixel", "mode 'linear'"},
    {"test_resize_tf_crop_and_resize", "mode 'linear'"},
    {"test_resize_upsample_scales_linear", "mode 'linear'"},
    {"test_resize_upsample_scales_linear_align_corners", "mode 'linear'"},
    {"test_convtranspose_3d", "is not 1-D or 2-D"},
    {"test_gather_elements_0", "operator not supported"},
    {"test_gather_elements_1", "operator not supported"},
    {"test_gather_elements_negative_indices", "operator not supported"},
    {"test_logsoftmax_axis_0_expanded", "operator not supported"},
    {"test_logsoftmax_axis_1_expanded", "operator not supported"},
    {"test_logsoftmax_axis_2_expanded", "operator not supported"},
    {"test_logsoftmax_default_axis_expanded", "operator not supported"},
    {"test_logsoftmax_example_1_expanded", "operator not supported"},
    {"test_logsoftmax_large_number_expanded", "operator not supported"},
    {"test_logsoftmax_negative_axis_expanded", "operator not supported"},
    {"test_softmax_axis_0_expanded", "operator not supported"},
    {"test_softmax_axis_1_expanded", "operator not supported"},
    {"test_softmax_axis_2_expanded", "operator not supported"},
    {"test_softmax_default_axis_expanded", "operator not supported"},
    {"test_softmax_example_expanded", "operator not supported"},
    {"test_softmax_large_number_expanded", "operator not supported"},
    {"test_softmax_negative_axis_expanded", "operator not supported"},
};

std::vector<std::string> Cases() {
  std::vector<std::string> r;
  if (!fs::is_directory(kDataDir)) return r;
  for (const auto& e : fs::directory_iterator(kDataDir)) {
    const std::string name = e.path().filename().string();
    for (const char* p : kOps) {
      const std::string prefix(p);
      // A name ending in '$' is one case (test_log, not test_logsoftmax_*), else a prefix.
      const bool exact = prefix.back() == '$';
      if (exact ? name == prefix.substr(0, prefix.size() - 1) : name.rfind(prefix, 0) == 0) {
        r.push_back(name);
        break;
      }
    }
  }
  std::sort(r.begin(), r.end());
  return r;
}

struct Case {
  net::Graph graph;
  std::map<std::string, net::Tensor> inputs;
  std::vector<net::Tensor> expected;
};

Case Load(const std::string& name) {
  const fs::path dir = fs::path(kDataDir) / name;
  Case c;
  c.graph = onnx_import::LoadModel((dir / "model.onnx").string());
  const fs::path data = dir / "test_data_set_0";
  for (const auto& vi : c.graph.inputs) {
    const bool ok = vi.dtype == "float32" || vi.dtype == "int64";
    if (!ok) net::Plan::Build(c.graph, {}, num::Mode::kIeee);  // throws the element type error
  }
  for (size_t i = 0; i < c.graph.inputs.size(); ++i) {
    c.inputs[c.graph.inputs[i].name] =
        onnx_import::LoadTensor((data / ("input_" + std::to_string(i) + ".pb")).string());
  }
  net::BindIntInputs(c.graph, c.inputs);
  for (size_t i = 0; i < c.graph.outputs.size(); ++i) {
    c.expected.push_back(
        onnx_import::LoadTensor((data / ("output_" + std::to_string(i) + ".pb")).string()));
  }
  return c;
}

std::map<std::string, net::Shape> Shapes(const std::map<std::string, net::Tensor>& in) {
  std::map<std::string, net::Shape> s;
  for (const auto& [k, v] : in) s[k] = v.shape;
  return s;
}

// The graph on magnitudes (see the header comment); `negate` gets the inputs to negate.
net::Graph AbsGraph(net::Graph g, std::set<std::string>* negate) {
  for (auto& [name, t] : g.constants) {
    for (auto& v : t.f) v = std::fabs(v);
  }
  for (auto& n : g.nodes) {
    for (auto& [an, a] : n.attrs) {
      if (a.kind == net::Attr::Kind::kFloat && (an == "alpha" || an == "beta"))
        a.f = std::fabs(a.f);
    }
    if (n.op == "BatchNormalization" && n.inputs.size() > 3) {
      auto mean = g.constants.find(n.inputs[3]);
      if (mean == g.constants.end()) {
        negate->insert(n.inputs[3]);
      } else {
        for (auto& v : mean->second.f) v = -std::fabs(v);
      }
    }
  }
  return g;
}

template <typename Model>
std::map<std::string, net::Tensor> RunRtl(const net::Graph& g, const Case& c, const Config& cfg,
                                          tb::accel::NetStepStats* total) {
  const net::Plan plan = net::Plan::Build(g, Shapes(c.inputs), cfg.machine.mode,
                                          cfg.machine.vector_unit(), cfg.machine.vmem_depth);
  auto sim = tb::accel::MakeAccelSim<Model>(cfg);
  tb::accel::NetRunner runner(*sim, /*check=*/true);
  auto out = runner.Run(plan, c.inputs);
  *total = runner.Total();
  return out;
}

class OnnxNode : public ::testing::TestWithParam<std::string> {};

TEST_P(OnnxNode, MatchesOnnxAndGoldenModel) {
  const std::string name = GetParam();
  Case c;
  std::string error;
  try {
    c = Load(name);
    net::Plan::Build(c.graph, Shapes(c.inputs), num::Mode::kIeee);
  } catch (const net::Error& e) {
    error = e.what();
  }
  const auto un = kUnsupported.find(name);
  if (un != kUnsupported.end()) {
    EXPECT_NE(error.find(un->second), std::string::npos)
        << name << " should be unsupported (" << un->second
        << "); got: " << (error.empty() ? "it planned" : error);
    std::printf("unsupported: %s: %s\n", name.c_str(), error.c_str());
    return;
  }
  ASSERT_TRUE(error.empty()) << name << ": " << error;

  const Config c8 = tb::accel::ConfigFromBuild("accel_8x8");
  const Config c3 = tb::accel::ConfigFromBuild("accel_3x5");
  tb::accel::NetStepStats t8, t3;
  const auto got = RunRtl<Vaccel_8x8>(c.graph, c, c8, &t8);
  const auto got3 = RunRtl<Vaccel_3x5>(c.graph, c, c3, &t3);
  // The 3x5 array has the vector unit: its vector steps are accelerator jobs too.
  bool vector_steps = false;
  const net::Plan vplan =
      net::Plan::Build(c.graph, Shapes(c.inputs), num::Mode::kIeee, true, c3.machine.vmem_depth);
  // Softmax and BatchNormalization on the vector unit have their own contract entries: other
  // bits than the host's (binary64), checked against ONNX's answer within a bound instead.
  bool vector_softmax = false, vector_bn = false;
  int64_t softmax_len = 0;
  double spread = 0;  // bounds every |x_i - m|
  for (const auto& [k, v] : c.inputs) {
    float lo = INFINITY, hi = -INFINITY;
    for (float f : v.f) {
      if (std::isfinite(f)) lo = std::min(lo, f), hi = std::max(hi, f);
    }
    if (lo <= hi) spread = std::max(spread, double(hi) - double(lo));
  }
  for (const auto& s : vplan.steps()) {
    if ((s.op == "Softmax" || s.op == "LogSoftmax") && s.accel) {
      vector_softmax = true;
      softmax_len = std::max<int64_t>(softmax_len, net::Elements(s.out_shape));
    }
    vector_bn = vector_bn || (s.op == "BatchNormalization" && s.accel);
  }
  for (const auto& s : vplan.steps()) {
    vector_steps = vector_steps || s.klass == "vector" || s.klass == "pool";
  }
  if (vector_steps) {
    EXPECT_GT(t3.checked, t8.checked) << "the vector unit's jobs ran unchecked";
  } else {
    EXPECT_EQ(t8.checked, t3.checked);
  }
  if (t8.jobs > 0) {
    EXPECT_GT(t8.checked, 0u) << "accelerator jobs ran unchecked";
  }

  // Magnitudes, on the golden model.
  std::set<std::string> negate;
  const net::Graph ag = AbsGraph(c.graph, &negate);
  std::map<std::string, net::Tensor> ain = c.inputs;
  for (auto& [k, v] : ain) {
    for (auto& x : v.f) x = negate.count(k) ? -std::fabs(x) : std::fabs(x);
  }
  const net::Plan aplan = net::Plan::Build(ag, Shapes(ain), num::Mode::kIeee);
  tb::accel::ModelSim msim(c8);
  tb::accel::NetRunner arun(msim, false);
  const auto mag = arun.Run(aplan, ain);

  // The bound's epsilon.
  const net::Plan plan = net::Plan::Build(c.graph, Shapes(c.inputs), num::Mode::kIeee);
  double eps = 0;
  int64_t kmax = 0;
  bool accel = false, softmax = false;
  for (const auto& s : plan.steps()) {
    accel = accel || s.accel;
    softmax = softmax || s.op == "Softmax" || s.op == "LogSoftmax";
  }
  for (const auto& n : c.graph.nodes) {
    if (n.op == "MaxPool" || n.op == "AveragePool" || n.op == "GlobalAveragePool") kmax = 1 << 12;
  }
  if (accel) {
    for (const auto& s : plan.steps()) {
      if (s.accel)
        kmax = std::max<int64_t>(
            kmax, int64_t(s.macs / std::max<int64_t>(1, net::Elements(s.out_shape))));
    }
    eps = std::ldexp(1.0, -7) + std::ldexp(1.0, -16) + double(kmax + 2) * std::ldexp(1.0, -23);
  } else if (softmax) {
    eps = std::ldexp(1.0, -20);
  } else {
    // Pool windows here have at most a few dozen terms; global pools sum H·W.
    int64_t terms = 1;
    for (const auto& [k, v] : c.inputs) terms = std::max<int64_t>(terms, v.Size());
    eps = double(terms + 2) * std::ldexp(1.0, -23);
  }

  ASSERT_EQ(c.expected.size(), plan.outputs().size());
  uint64_t checked = 0;
  for (size_t o = 0; o < c.expected.size(); ++o) {
    const auto& name_o = plan.outputs()[o].name;
    const net::Tensor& want = c.expected[o];
    const net::Tensor& y = got.at(name_o);
    const net::Tensor& y3 = got3.at(name_o);
    const net::Tensor& m = mag.at(name_o);
    ASSERT_EQ(y.shape, want.shape) << name_o;
    ASSERT_EQ(y.f.size(), y3.f.size());
    for (size_t i = 0; i < y.f.size(); ++i) {
      if (vector_softmax) {
        // The vector softmax's bound (HostTest.SoftmaxProgramsComputeTheContractsSoftmax): the
        // slice's length (at most the elements) + 4 + |x_i - m| ulp of the value (log-softmax:
        // of max(1, |y|)).
        const double w3 = want.f[i], g3 = y3.f[i];
        if (std::isnan(w3)) {
          EXPECT_TRUE(std::isnan(g3)) << name_o << "[" << i << "]";
        } else {
          EXPECT_LE(std::fabs(g3 - w3), (double(softmax_len) + 4 + spread) * std::ldexp(1.0, -23) *
                                            std::max(1.0, std::fabs(w3)))
              << name_o << "[" << i << "]: vector unit " << g3 << ", ONNX " << w3;
        }
      } else if (!vector_bn) {
        ASSERT_EQ(F32Bits(y.f[i]), F32Bits(y3.f[i]))
            << name_o << "[" << i << "]: 8x8 and 3x5 differ";
      }
      const double w = want.f[i], g = y.f[i];
      if (std::isnan(w) || std::isinf(w)) {
        EXPECT_EQ(std::isnan(g), std::isnan(w)) << name_o << "[" << i << "]";
        if (std::isinf(w)) {
          EXPECT_EQ(g, w) << name_o << "[" << i << "]";
        }
        continue;
      }
      const double s = softmax && !accel ? 1.0 : std::fabs(double(m.f[i])) * 1.02;
      const double bound = eps * s + std::ldexp(1.0, -100);
      EXPECT_LE(std::fabs(g - w), bound) << name << " " << name_o << "[" << i << "]: got " << g
                                         << ", ONNX " << w << ", S " << s << ", eps " << eps;
      if (vector_bn) {  // fma32(x, a, b): within the host's bound of ONNX's answer too
        EXPECT_LE(std::fabs(double(y3.f[i]) - w), bound)
            << name << " " << name_o << "[" << i << "]: vector unit " << y3.f[i] << ", ONNX " << w
            << ", S " << s << ", eps " << eps;
      }
      ++checked;
    }
  }
  std::printf(
      "passed: %s: %llu outputs within the bound, %d accelerator jobs (%d with the vector unit), "
      "%llu elements bit-exact (%llu)\n",
      name.c_str(), static_cast<unsigned long long>(checked), t8.jobs, t3.jobs,
      static_cast<unsigned long long>(t8.checked), static_cast<unsigned long long>(t3.checked));
}

INSTANTIATE_TEST_SUITE_P(Libonnx, OnnxNode, ::testing::ValuesIn(Cases()),
                         [](const ::testing::TestParamInfo<std::string>& i) { return i.param; });
GTEST_ALLOW_UNINSTANTIATED_PARAMETERIZED_TEST(OnnxNode);

TEST(OnnxConformance, TestDataIsInstalled) {
  ASSERT_TRUE(fs::is_directory(kDataDir))
      << kDataDir << " is missing: apt-get install libonnx-testdata (make deps)";
  EXPECT_GE(Cases().size(), 100u);
}

}  // namespace
