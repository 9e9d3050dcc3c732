// SPDX-License-Identifier: Apache-2.0
// The network planner (tpu/net.h) against references written here from the contract alone:
//  * convolutions (groups, depthwise, strides, unequal pads, dilations, 1-D), with a
//    BatchNormalization folded and a relu fused, and chained through bf16 outputs; Gemm (alpha,
//    beta, transA, transB, every C shape); batched MatMul with broadcasting: bit for bit against
//    mac() in the contract's k order (taps i, j, then channels) from the bias or C0, on random
//    data with random weights (ONNX's node tests use all-ones kernels, which hide a weight layout);
//  * the host operators' definitions (docs/numerics.md, "Host operators") on directed values;
//  * bad graphs: each a net::Error naming the node and the operator.
// The back end is the golden model (tpu/tb/model_sim.h); tests/onnx_conformance_test.cpp runs the
// RTL.
#include "tpu/net.h"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <functional>
#include <map>
#include <string>
#include <utility>

#include "test_support.h"
#include "tpu/isa_model.h"
#include "tpu/numerics.h"
#include "tpu/tb/accel_config.h"
#include "tpu/tb/model_sim.h"
#include "tpu/tb/net_run.h"
#include "tpu/tb/rng.h"
#include "tpu/tb/workloads.h"

namespace {

using namespace tpu;
using net::F32Bits;
using net::F32FromBits;
using net::Graph;
using net::Node;
using net::Shape;
using net::Tensor;

Tensor Random(tb::Rng& rng, const Shape& s, double scale = 1.0) {
  Tensor t;
  t.shape = s;
  t.f.resize(size_t(net::Elements(s)));
  for (auto& v : t.f) {
    // Signed values over a few binades, with exact zeros now and then.
    const int u = rng.Range(0, 99);
    v = u < 5 ? 0.0f
              : float(scale * (double(rng.U32()) / 4294967296.0 * 2.0 - 1.0) *
                      std::ldexp(1.0, rng.Range(-3, 3)));
  }
  return t;
}

net::Attr Ints(std::vector<int64_t> v) {
  net::Attr a;
  a.kind = net::Attr::Kind::kInts;
  a.ints = std::move(v);
  return a;
}
net::Attr Int(int64_t v) {
  net::Attr a;
  a.kind = net::Attr::Kind::kInt;
  a.i = v;
  return a;
}
net::Attr Float(float v) {
  net::Attr a;
  a.kind = net::Attr::Kind::kFloat;
  a.f = v;
  return a;
}

net::ValueInfo Input(const std::string& name, const Shape& s) {
  net::ValueInfo v;
  v.name = name;
  v.shape = s;
  v.known_rank = true;
  return v;
}

std::map<std::string, Tensor> RunGraph(const Graph& g, const std::map<std::string, Tensor>& in,
                                       net::Plan* plan_out = nullptr) {
  std::map<std::string, Shape> shapes;
  for (const auto& [k, v] : in) shapes[k] = v.shape;
  net::Plan plan = net::Plan::Build(g, shapes, num::Mode::kIeee);
  const auto cfg = tb::accel::ConfigFromName("8x8_1ch");
  tb::accel::ModelSim sim(cfg);
  tb::accel::NetRunner runner(sim, false);
  auto out = runner.Run(plan, in);
  if (plan_out != nullptr) *plan_out = std::move(plan);
  return out;
}

uint16_t B16(float x) {
  return num::Fp32ToBf16(F32Bits(x), num::Mode::kIeee);
}

struct ConvCase {
  int n, cin, h, w, cout, kh, kw, group;
  int sh, sw, dh, dw, pt, pl, pb, pr;
  bool bias, bn, relu;
};

// The reference convolution: NCHW in and out, from the contract.
// With `res` (the output's shape): a residual add in the accumulators, the MACs starting from
// fma32(res, 1, bias) (res alone without a bias or BN), docs/numerics.md.
Tensor RefConv(const ConvCase& c, const Tensor& x, const Tensor& w, const Tensor* b,
               const Tensor* bn /* 4 x cout: gamma, beta, mean, var */, float eps,
               const Tensor* res = nullptr) {
  const int oh = (c.h + c.pt + c.pb - ((c.kh - 1) * c.dh + 1)) / c.sh + 1;
  const int ow = (c.w + c.pl + c.pr - ((c.kw - 1) * c.dw + 1)) / c.sw + 1;
  const int cin_g = c.cin / c.group, cout_g = c.cout / c.group;
  Tensor y;
  y.shape = {c.n, c.cout, oh, ow};
  y.f.resize(size_t(net::Elements(y.shape)));
  for (int co = 0; co < c.cout; ++co) {
    double s = 0;
    float bias = b ? b->f[size_t(co)] : 0.0f;
    bool has_init = b != nullptr;
    if (bn) {
      s = net::BnScale(bn->f[size_t(co)], bn->f[size_t(3 * c.cout + co)], eps);
      bias = net::BnApply(bias, bn->f[size_t(2 * c.cout + co)], bn->f[size_t(c.cout + co)], s);
      has_init = true;
    }
    const int g = co / cout_g;
    for (int n = 0; n < c.n; ++n) {
      for (int i0 = 0; i0 < oh; ++i0) {
        for (int j0 = 0; j0 < ow; ++j0) {
          uint32_t acc = has_init ? F32Bits(bias) : 0u;
          if (res != nullptr) {
            const uint32_t r = F32Bits(res->f[size_t(((n * c.cout + co) * oh + i0) * ow + j0)]);
            acc =
                has_init ? isa::ApplyVectorOp(isa::VectorOp::kAdd, r, acc, 0, num::Mode::kIeee) : r;
          }
          for (int i = 0; i < c.kh; ++i) {
            for (int j = 0; j < c.kw; ++j) {
              for (int ci = 0; ci < cin_g; ++ci) {
                const int hh = i0 * c.sh - c.pt + i * c.dh, ww = j0 * c.sw - c.pl + j * c.dw;
                uint16_t a = 0;
                if (hh >= 0 && hh < c.h && ww >= 0 && ww < c.w) {
                  a = B16(x.f[size_t(((n * c.cin + g * cin_g + ci) * c.h + hh) * c.w + ww)]);
                }
                float wv = w.f[size_t(((co * cin_g + ci) * c.kh + i) * c.kw + j)];
                if (bn) wv = net::BnWeight(wv, s);
                acc = num::Mac(a, B16(wv), acc, num::Mode::kIeee);
              }
            }
          }
          if (c.relu) acc = num::Relu(acc);
          y.f[size_t(((n * c.cout + co) * oh + i0) * ow + j0)] = F32FromBits(acc);
        }
      }
    }
  }
  return y;
}

void ExpectBits(const Tensor& got, const Tensor& want, const std::string& what) {
  ASSERT_EQ(got.shape, want.shape) << what;
  size_t bad = 0;
  for (size_t i = 0; i < got.f.size(); ++i) {
    if (F32Bits(got.f[i]) != F32Bits(want.f[i]) && ++bad <= 5) {
      ADD_FAILURE() << what << "[" << i << "]: got " << num::FormatFp32(F32Bits(got.f[i]))
                    << ", want " << num::FormatFp32(F32Bits(want.f[i]));
    }
  }
  EXPECT_EQ(bad, 0u) << what;
}

// A Conv (+ BatchNormalization + Relu) graph for a case; weights as initializers or inputs.
Graph ConvGraph(const ConvCase& c, const Tensor& w, const Tensor* b, const Tensor* bn, float eps) {
  Graph g;
  g.opset = 13;
  const bool one_d = c.h == 1 && c.kh == 1 && c.sh == 1 && c.dh == 1 && c.pt == 0 && c.pb == 0;
  g.inputs.push_back(Input("x", one_d ? Shape{c.n, c.cin, c.w} : Shape{c.n, c.cin, c.h, c.w}));
  Tensor wt = w;
  if (one_d) wt.shape = {c.cout, c.cin / c.group, c.kw};
  g.constants["W"] = wt;
  Node conv;
  conv.name = "conv";
  conv.op = "Conv";
  conv.inputs = {"x", "W"};
  if (b) {
    g.constants["B"] = *b;
    conv.inputs.push_back("B");
  }
  conv.outputs = {"c"};
  if (one_d) {
    conv.attrs["strides"] = Ints({c.sw});
    conv.attrs["dilations"] = Ints({c.dw});
    conv.attrs["pads"] = Ints({c.pl, c.pr});
  } else {
    conv.attrs["strides"] = Ints({c.sh, c.sw});
    conv.attrs["dilations"] = Ints({c.dh, c.dw});
    conv.attrs["pads"] = Ints({c.pt, c.pl, c.pb, c.pr});
  }
  conv.attrs["group"] = Int(c.group);
  g.nodes.push_back(conv);
  std::string last = "c";
  if (bn) {
    const char* names[4] = {"gamma", "beta", "mean", "var"};
    Node n;
    n.name = "bn";
    n.op = "BatchNormalization";
    n.inputs = {last};
    for (int i = 0; i < 4; ++i) {
      Tensor p;
      p.shape = {c.cout};
      p.f.assign(bn->f.begin() + i * c.cout, bn->f.begin() + (i + 1) * c.cout);
      g.constants[names[i]] = p;
      n.inputs.push_back(names[i]);
    }
    n.attrs["epsilon"] = Float(eps);
    n.outputs = {"b"};
    g.nodes.push_back(n);
    last = "b";
  }
  if (c.relu) {
    Node r;
    r.name = "relu";
    r.op = "Relu";
    r.inputs = {last};
    r.outputs = {"r"};
    g.nodes.push_back(r);
    last = "r";
  }
  g.outputs.push_back(Input(last, {}));
  return g;
}

TEST(NetConv, BitExactAgainstTheContract) {
  tb::Rng rng(test::TestSeed());
  const ConvCase cases[] = {
      // n cin h w cout kh kw group | sh sw dh dw | pt pl pb pr | bias bn relu
      {2, 5, 7, 6, 6, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1, true, false, false},   // windows
      {1, 4, 9, 9, 8, 3, 3, 2, 2, 2, 1, 1, 1, 1, 1, 1, false, true, true},    // groups, BN, relu
      {1, 6, 6, 7, 6, 3, 3, 6, 1, 1, 1, 1, 1, 1, 1, 1, true, false, true},    // depthwise
      {1, 3, 8, 8, 4, 3, 2, 1, 2, 2, 1, 1, 0, 1, 2, 0, true, true, false},    // unequal pads
      {1, 3, 9, 9, 5, 3, 3, 1, 1, 1, 2, 2, 2, 2, 2, 2, false, false, true},   // dilations
      {1, 3, 9, 8, 5, 2, 3, 1, 2, 1, 1, 1, 0, 0, 0, 0, true, false, false},   // unequal strides
      {2, 16, 4, 4, 20, 1, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, true, true, true},   // pointwise
      {2, 3, 1, 11, 4, 1, 3, 1, 1, 2, 1, 1, 0, 1, 0, 1, true, false, false},  // 1-D
  };
  int index = 0;
  for (const auto& c : cases) {
    SCOPED_TRACE(testing::Message() << "case " << index++);
    const Tensor x = Random(rng, {c.n, c.cin, c.h, c.w});
    const Tensor w = Random(rng, {c.cout, c.cin / c.group, c.kh, c.kw});
    const Tensor b = Random(rng, {c.cout});
    Tensor bn = Random(rng, {4 * c.cout});
    for (int i = 0; i < c.cout; ++i)
      bn.f[size_t(3 * c.cout + i)] = std::fabs(bn.f[size_t(3 * c.cout + i)]);
    const float eps = 1e-3f;
    const Graph g = ConvGraph(c, w, c.bias ? &b : nullptr, c.bn ? &bn : nullptr, eps);
    Tensor xin = x;
    xin.shape = g.inputs[0].shape;
    net::Plan plan = net::Plan::Build(g, {{"x", xin.shape}}, num::Mode::kIeee);
    EXPECT_EQ(plan.steps().size(), 1u) << "BN and relu fold into the convolution's step";
    auto out = RunGraph(g, {{"x", xin}});
    Tensor want = RefConv(c, x, w, c.bias ? &b : nullptr, c.bn ? &bn : nullptr, eps);
    Tensor got = out.at(g.outputs[0].name);
    got.shape = want.shape;
    ExpectBits(got, want, "conv");
  }
}

// Residual adds in the accumulators (docs/numerics.md, ISA 1.5): an Add that is a convolution's
// only reader, of a value of its shape computed before it, joins the convolution's step (with
// its Relu), with or without the vector unit; the MACs start from the value plus the bias. Not
// fused: an Add whose other operand is computed after the convolution (it goes to that one),
// or a broadcast operand.
TEST(NetConv, ResidualAddRunsInTheAccumulators) {
  tb::Rng rng(test::TestSeed());
  const ConvCase cases[] = {
      // n cin h w cout kh kw group | sh sw dh dw | pt pl pb pr | bias bn relu
      {2, 5, 6, 6, 5, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1, true, true, false},      // BN, x + conv
      {1, 12, 4, 5, 12, 1, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, false, false, false},  // pointwise
      {1, 3, 7, 7, 3, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1, true, false, false},     // conv + x
  };
  int index = 0;
  for (const auto& c : cases) {
    for (const bool vector_unit : {false, true}) {
      SCOPED_TRACE(testing::Message() << "case " << index << (vector_unit ? " vector unit" : ""));
      const Tensor x = Random(rng, {c.n, c.cin, c.h, c.w});
      const Tensor w = Random(rng, {c.cout, c.cin, c.kh, c.kw}, 0.5);
      const Tensor b = Random(rng, {c.cout});
      Tensor bn = Random(rng, {4 * c.cout});
      for (int i = 0; i < c.cout; ++i) {
        bn.f[size_t(3 * c.cout + i)] = std::fabs(bn.f[size_t(3 * c.cout + i)]);
      }
      Graph g = ConvGraph(c, w, c.bias ? &b : nullptr, c.bn ? &bn : nullptr, 1e-3f);
      const std::string conv_out = g.nodes.back().outputs[0];
      Node add;
      add.name = "add";
      add.op = "Add";
      add.inputs = index == 2 ? std::vector<std::string>{conv_out, "x"}
                              : std::vector<std::string>{"x", conv_out};
      add.outputs = {"s"};
      g.nodes.push_back(add);
      const bool relu = index != 1;
      if (relu) {
        Node r;
        r.name = "relu";
        r.op = "Relu";
        r.inputs = {"s"};
        r.outputs = {"y"};
        g.nodes.push_back(r);
      }
      g.outputs = {Input(relu ? "y" : "s", {})};
      const net::Plan plan =
          net::Plan::Build(g, {{"x", x.shape}}, num::Mode::kIeee, vector_unit, 64);
      ASSERT_EQ(plan.steps().size(), 1u);
      const net::Step& st = plan.steps()[0];
      EXPECT_TRUE(st.accel);
      EXPECT_EQ(st.residual, "x");
      EXPECT_NE(st.detail.find("residual add in the accumulators"), std::string::npos) << st.detail;
      EXPECT_NE(st.label.find("add"), std::string::npos) << st.label;
      auto cfg = tb::accel::ConfigFromName("8x8_1ch");
      cfg.machine.vmem_depth = vector_unit ? 64 : 0;
      tb::accel::ModelSim sim(cfg);
      tb::accel::NetRunner runner(sim, false);
      const auto out = runner.Run(plan, {{"x", x}});
      ConvCase cr = c;
      cr.relu = relu;
      ExpectBits(out.at(g.outputs[0].name),
                 RefConv(cr, x, w, c.bias ? &b : nullptr, c.bn ? &bn : nullptr, 1e-3f, &x),
                 "fused residual");
    }
    ++index;
  }
  // Add(ca, cb) of two convolutions of x: cb is computed after ca, so ca's step cannot read it;
  // cb's step reads ca's output (fp32) as its residual.
  {
    const ConvCase c{1, 4, 5, 5, 4, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1, true, false, false};
    Graph g;
    g.opset = 13;
    g.inputs = {Input("x", {1, 4, 5, 5})};
    g.constants["w1"] = Random(rng, {4, 4, 3, 3}, 0.5);
    g.constants["w2"] = Random(rng, {4, 4, 3, 3}, 0.5);
    g.constants["b1"] = Random(rng, {4});
    g.constants["b2"] = Random(rng, {4});
    const auto node = [&](const std::string& op, std::vector<std::string> in,
                          const std::string& out) {
      Node n;
      n.name = out;
      n.op = op;
      n.inputs = std::move(in);
      n.outputs = {out};
      if (op == "Conv") n.attrs = {{"pads", Ints({1, 1, 1, 1})}};
      g.nodes.push_back(n);
    };
    node("Conv", {"x", "w1", "b1"}, "ca");
    node("Conv", {"x", "w2", "b2"}, "cb");
    node("Add", {"ca", "cb"}, "s");
    // A broadcast Add (one value per channel) is not fused.
    g.constants["w3"] = Random(rng, {4, 4, 1, 1}, 0.5);
    g.constants["per_c"] = Random(rng, {1, 4, 1, 1});
    node("Conv", {"s", "w3"}, "c3");
    node("Add", {"c3", "per_c"}, "t");
    g.outputs = {Input("s", {}), Input("t", {})};
    const Tensor x = Random(rng, {1, 4, 5, 5});
    const net::Plan plan = net::Plan::Build(g, {{"x", x.shape}}, num::Mode::kIeee);
    ASSERT_EQ(plan.steps().size(), 4u);
    EXPECT_EQ(plan.steps()[0].residual, "");
    EXPECT_EQ(plan.steps()[1].residual, "ca");
    EXPECT_EQ(plan.steps()[2].residual, "");
    EXPECT_FALSE(plan.steps()[3].accel);  // the broadcast Add, on the host
    const auto out = RunGraph(g, {{"x", x}});
    const Tensor ca = RefConv(c, x, g.constants.at("w1"), &g.constants.at("b1"), nullptr, 0);
    ExpectBits(out.at("s"),
               RefConv(c, x, g.constants.at("w2"), &g.constants.at("b2"), nullptr, 0, &ca),
               "the later convolution takes the earlier one's output");
  }
}

// ConvTranspose: the convolution it equals (docs/numerics.md), bit for bit against a reference
// written from that definition (per output, from the bias, mac over the flipped taps (i, j) and
// the group's input channels, +0 where the tap falls between input pixels or in the padding),
// and within bf16 rounding of the scatter definition (each input pixel times the kernel added
// at its stride) in binary64: random weights, groups, strides, dilations, unequal pads,
// output_padding, output_shape, 1-D.
TEST(NetConv, TransposeIsTheConvolutionItEquals) {
  tb::Rng rng(test::TestSeed());
  struct Case {
    int n, cin, h, w, cout_g, kh, kw, group, sh, sw, dh, dw, pt, pl, pb, pr, oph, opw;
    bool bias;
  };
  const Case cases[] = {
      {1, 2, 3, 4, 3, 3, 3, 1, 2, 2, 1, 1, 1, 1, 1, 1, 0, 0, true},
      {2, 4, 3, 3, 2, 2, 3, 2, 3, 2, 1, 1, 0, 1, 1, 0, 1, 1, false},
      {1, 3, 4, 3, 2, 3, 2, 1, 1, 2, 2, 1, 2, 0, 0, 1, 0, 1, true},
      {1, 2, 1, 5, 2, 1, 3, 1, 1, 2, 1, 1, 0, 0, 0, 2, 0, 1, true},  // 1-D
  };
  int index = 0;
  for (const Case& k : cases) {
    SCOPED_TRACE(testing::Message() << "case " << index++);
    const bool one_d = k.h == 1 && k.kh == 1;
    const int cout = k.cout_g * k.group;
    const Tensor x = Random(rng, {k.n, k.cin, k.h, k.w});
    const Tensor w = Random(rng, {k.cin, k.cout_g, k.kh, k.kw});
    const Tensor b = Random(rng, {cout});
    Graph g;
    g.opset = 13;
    Tensor xin = x, wt = w;
    if (one_d) xin.shape = {k.n, k.cin, k.w}, wt.shape = {k.cin, k.cout_g, k.kw};
    g.inputs = {Input("x", xin.shape)};
    g.constants["W"] = wt;
    Node n;
    n.name = "ct";
    n.op = "ConvTranspose";
    n.inputs = {"x", "W"};
    if (k.bias) {
      g.constants["B"] = b;
      n.inputs.push_back("B");
    }
    n.outputs = {"y"};
    n.attrs["group"] = Int(k.group);
    if (one_d) {
      n.attrs["strides"] = Ints({k.sw});
      n.attrs["dilations"] = Ints({k.dw});
      n.attrs["pads"] = Ints({k.pl, k.pr});
      n.attrs["output_padding"] = Ints({k.opw});
    } else {
      n.attrs["strides"] = Ints({k.sh, k.sw});
      n.attrs["dilations"] = Ints({k.dh, k.dw});
      n.attrs["pads"] = Ints({k.pt, k.pl, k.pb, k.pr});
      n.attrs["output_padding"] = Ints({k.oph, k.opw});
    }
    g.nodes = {n};
    g.outputs = {Input("y", {})};
    const auto out = RunGraph(g, {{"x", xin}});
    const int oh = (k.h - 1) * k.sh + (k.kh - 1) * k.dh + 1 + k.oph - k.pt - k.pb;
    const int ow = (k.w - 1) * k.sw + (k.kw - 1) * k.dw + 1 + k.opw - k.pl - k.pr;
    const Tensor& y = out.at("y");
    ASSERT_EQ(net::Elements(y.shape), int64_t(k.n) * cout * oh * ow);
    const int cin_g = k.cin / k.group;
    for (int b0 = 0; b0 < k.n; ++b0) {
      for (int co = 0; co < cout; ++co) {
        const int g0 = co / k.cout_g, cog = co % k.cout_g;
        for (int p = 0; p < oh; ++p) {
          for (int q = 0; q < ow; ++q) {
            uint32_t acc = k.bias ? F32Bits(b.f[size_t(co)]) : 0u;
            // ConvTranspose's definition (each input scattered through the kernel) on the same
            // bf16 operands, summed in binary64: the fused MACs' K roundings to fp32 stay within
            // (K + 1)·2^-24 of the terms' absolute sum (a derived bound, not a tolerance).
            double scatter = k.bias ? b.f[size_t(co)] : 0.0, mag = std::fabs(scatter);
            int terms = 0;
            for (int i = 0; i < k.kh; ++i) {
              for (int j = 0; j < k.kw; ++j) {
                for (int ci = 0; ci < cin_g; ++ci) {
                  const int c_in = g0 * cin_g + ci;
                  // The flipped tap (i, j) reads kernel element (kh-1-i, kw-1-j) at input
                  // position (p + pt - (kh-1-i)·dh) / sh, when that divides.
                  const int fi = k.kh - 1 - i, fj = k.kw - 1 - j;
                  const int ph = p + k.pt - fi * k.dh, pw = q + k.pl - fj * k.dw;
                  uint16_t a = 0;
                  if (ph % k.sh == 0 && pw % k.sw == 0 && ph >= 0 && pw >= 0 && ph / k.sh < k.h &&
                      pw / k.sw < k.w) {
                    const float xv =
                        x.f[size_t(((b0 * k.cin + c_in) * k.h + ph / k.sh) * k.w + pw / k.sw)];
                    a = B16(xv);
                    const double t =
                        double(F32FromBits(uint32_t(a) << 16)) *
                        double(F32FromBits(
                            uint32_t(
                                B16(w.f[size_t(((c_in * k.cout_g + cog) * k.kh + fi) * k.kw + fj)]))
                            << 16));
                    scatter += t;
                    mag += std::fabs(t);
                    ++terms;
                  }
                  acc = num::Mac(
                      a, B16(w.f[size_t(((c_in * k.cout_g + cog) * k.kh + fi) * k.kw + fj)]), acc,
                      num::Mode::kIeee);
                }
              }
            }
            const float got = y.f[size_t(((b0 * cout + co) * oh + p) * ow + q)];
            ASSERT_EQ(F32Bits(got), acc) << "output " << co << " " << p << " " << q;
            EXPECT_LE(std::fabs(double(got) - scatter), (terms + 1) * std::ldexp(mag, -24))
                << "output " << co << " " << p << " " << q;
          }
        }
      }
    }
  }
}

// Two convolutions in a row: the first stores bf16 (its only reader rounds it anyway); the
// answer equals the reference of the two with fp32 in between.
TEST(NetConv, ChainThroughBf16Outputs) {
  tb::Rng rng(test::TestSeed());
  const ConvCase c1{1, 3, 6, 6, 8, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1, true, false, true};
  const ConvCase c2{1, 8, 6, 6, 4, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1, true, false, false};
  const Tensor x = Random(rng, {1, 3, 6, 6});
  const Tensor w1 = Random(rng, {8, 3, 3, 3}), b1 = Random(rng, {8});
  const Tensor w2 = Random(rng, {4, 8, 3, 3}), b2 = Random(rng, {4});
  Graph g = ConvGraph(c1, w1, &b1, nullptr, 0);
  g.constants["W2"] = w2;
  g.constants["B2"] = b2;
  Node conv2;
  conv2.name = "conv2";
  conv2.op = "Conv";
  conv2.inputs = {"r", "W2", "B2"};
  conv2.outputs = {"y"};
  conv2.attrs["pads"] = Ints({1, 1, 1, 1});
  g.nodes.push_back(conv2);
  g.outputs = {Input("y", {})};
  net::Plan plan = net::Plan::Build(g, {{"x", x.shape}}, num::Mode::kIeee);
  ASSERT_EQ(plan.steps().size(), 2u);
  // The first step's output is bf16 (every reader is an accelerator operand).
  const auto cfg = tb::accel::ConfigFromName("8x8_1ch");
  const auto out = RunGraph(g, {{"x", x}});
  const Tensor mid = RefConv(c1, x, w1, &b1, nullptr, 0);
  ExpectBits(out.at("y"), RefConv(c2, mid, w2, &b2, nullptr, 0), "conv2");
  // And the plan really stores bf16 there: its job says so.
  bool bf16 = false;
  plan.Run({{"x", x}}, [&](const net::AccelJob& job, int step) {
    if (step == 0) bf16 = job.out == host::OutFormat::kBf16;
    tb::accel::ModelSim s(cfg);
    const auto w = tb::accel::MakeJob(cfg, job);
    tb::accel::Load(s, w);
    tb::accel::Run(s, w, {});
    return tb::accel::ReadTensor(s, w.outputs[0]);
  });
  EXPECT_TRUE(bf16);
}

// Gemm: every attribute and C shape, against mac() from C0 (or from +0 with alpha on the host).
TEST(NetGemm, AttributesBitExact) {
  tb::Rng rng(test::TestSeed());
  struct G {
    int m, k, n;
    bool ta, tb;
    float alpha, beta;
    Shape c;  // empty: no C
  };
  const G cases[] = {{5, 7, 9, false, false, 1, 1, {9}},      {5, 7, 9, true, true, 1, 1, {5, 9}},
                     {6, 3, 4, false, true, 1, 0.5f, {1, 4}}, {6, 3, 4, true, false, 2, 1, {6, 1}},
                     {4, 20, 3, false, false, -0.5f, 3, {}},  {4, 20, 3, false, false, 1, 1, {1}},
                     {3, 17, 12, false, false, 1, 0, {3, 12}}};
  int index = 0;
  for (const auto& c : cases) {
    SCOPED_TRACE(testing::Message() << "case " << index++);
    const Tensor a = Random(rng, c.ta ? Shape{c.k, c.m} : Shape{c.m, c.k});
    const Tensor b = Random(rng, c.tb ? Shape{c.n, c.k} : Shape{c.k, c.n});
    const Tensor cc = c.c.empty() ? Tensor{} : Random(rng, c.c);
    Graph g;
    g.opset = 13;
    g.inputs = {Input("a", a.shape), Input("b", b.shape)};
    Node n;
    n.name = "gemm";
    n.op = "Gemm";
    n.inputs = {"a", "b"};
    if (!c.c.empty()) {
      g.constants["c"] = cc;
      n.inputs.push_back("c");
    }
    n.outputs = {"y"};
    n.attrs["transA"] = Int(c.ta);
    n.attrs["transB"] = Int(c.tb);
    n.attrs["alpha"] = Float(c.alpha);
    n.attrs["beta"] = Float(c.beta);
    g.nodes.push_back(n);
    g.outputs = {Input("y", {})};
    const auto out = RunGraph(g, {{"a", a}, {"b", b}});
    Tensor want;
    want.shape = {c.m, c.n};
    for (int i = 0; i < c.m; ++i) {
      for (int j = 0; j < c.n; ++j) {
        float cv = 0;
        const bool has_c = !c.c.empty() && c.beta != 0;
        if (has_c) {
          const int ci = c.c.size() == 2 ? (c.c[0] == 1 ? 0 : i) : 0;
          const int cj = c.c.back() == 1 ? 0 : j;
          cv = cc.f[size_t(ci * (c.c.back() == 1 ? 1 : c.n) + cj)];
          if (c.beta != 1) cv = cv * c.beta;  // one binary32 multiply
        }
        const bool host = c.alpha != 1;
        uint32_t acc = has_c && !host ? F32Bits(cv) : 0u;
        for (int k = 0; k < c.k; ++k) {
          const float av = c.ta ? a.f[size_t(k * c.m + i)] : a.f[size_t(i * c.k + k)];
          const float bv = c.tb ? b.f[size_t(j * c.k + k)] : b.f[size_t(k * c.n + j)];
          acc = num::Mac(B16(av), B16(bv), acc, num::Mode::kIeee);
        }
        float y = F32FromBits(acc);
        if (host) {
          y = c.alpha * y;
          if (has_c) y = y + cv;
        }
        want.f.push_back(y);
      }
    }
    ExpectBits(out.at("y"), want, "gemm");
  }
}

// Gemm with alpha != 1 read only by an accelerator operand: alpha applies to the fp32 sum, so
// its output stays fp32 (a bf16 store would round before alpha). Y = 3·(X·W), Z = Y·1 with
// X = [1, 2^-8], W = [1, 1]: the sum 1 + 2^-8 is exact in fp32, not in bf16.
// A chain of Gemms (an MLP) runs as one program (host::CompileMlp: the hidden layers' bf16
// outputs stay in HBM), with the same bits as one job a layer: the chain broken by making a
// hidden value a graph output gives the same logits; on the 3x5 machine too. A hidden layer
// without the others' Relu ends the chain there.
TEST(NetGemm, ChainsRunAsOneProgram) {
  tb::Rng rng(test::TestSeed());
  const auto make = [&](bool relu2, bool expose) {
    Graph g;
    g.opset = 13;
    g.inputs = {Input("x", {5, 7})};
    g.constants["W1"] = Random(rng, {7, 9});
    g.constants["b1"] = Random(rng, {9});
    g.constants["W2"] = Random(rng, {6, 9});  // transB
    g.constants["b2"] = Random(rng, {6});
    g.constants["W3"] = Random(rng, {6, 4});
    g.constants["b3"] = Random(rng, {1, 4});
    const auto node = [&](const std::string& op, std::vector<std::string> in,
                          const std::string& out) {
      Node n;
      n.name = out;
      n.op = op;
      n.inputs = std::move(in);
      n.outputs = {out};
      g.nodes.push_back(n);
    };
    node("Gemm", {"x", "W1", "b1"}, "g1");
    node("Relu", {"g1"}, "h1");
    node("Gemm", {"h1", "W2", "b2"}, "g2");
    g.nodes.back().attrs["transB"] = Int(1);
    if (relu2) node("Relu", {"g2"}, "h2");
    node("Gemm", {relu2 ? "h2" : "g2", "W3", "b3"}, "y");
    g.outputs = {Input("y", {})};
    if (expose) g.outputs.push_back(Input("h1", {}));
    return g;
  };
  const uint64_t seed = rng.Next();
  rng = tb::Rng(seed);
  const Graph chain = make(true, false);
  rng = tb::Rng(seed);
  const Graph split = make(true, true);
  const Tensor x = Random(rng, {5, 7});
  const net::Plan plan = net::Plan::Build(chain, {{"x", x.shape}}, num::Mode::kIeee);
  ASSERT_EQ(plan.steps().size(), 1u);
  EXPECT_EQ(plan.steps()[0].klass, "mlp");
  EXPECT_EQ(plan.steps()[0].jobs, 1);
  EXPECT_EQ(plan.steps()[0].nodes.size(), 5u);
  EXPECT_EQ(plan.steps()[0].macs, uint64_t(5 * (7 * 9 + 9 * 6 + 6 * 4)));
  const net::Plan split_plan = net::Plan::Build(split, {{"x", x.shape}}, num::Mode::kIeee);
  EXPECT_EQ(split_plan.steps().size(), 2u) << "h1 is read outside the chain: layer 1 alone";
  const auto y = RunGraph(chain, {{"x", x}}).at("y");
  ExpectBits(RunGraph(split, {{"x", x}}).at("y"), y, "one program vs two");
  tb::accel::ModelSim sim(tb::accel::ConfigFromBuild("accel_3x5"));
  tb::accel::NetRunner runner(sim, false);
  ExpectBits(runner.Run(plan, {{"x", x}}).at("y"), y, "3x5 vs 8x8");
  EXPECT_EQ(runner.Total().jobs, 1);
  // Layer 2 without a Relu where layer 1 has one: the chain is layers 1 and 2, and layer 3 is
  // a step of its own; the answer is the contract's all the same.
  rng = tb::Rng(seed);
  const Graph mixed = make(false, false);
  const net::Plan mixed_plan = net::Plan::Build(mixed, {{"x", x.shape}}, num::Mode::kIeee);
  ASSERT_EQ(mixed_plan.steps().size(), 2u);
  EXPECT_EQ(mixed_plan.steps()[0].klass, "mlp");
  EXPECT_EQ(mixed_plan.steps()[1].klass, "dense");
  rng = tb::Rng(seed);
  Graph mixed_split = make(false, true);  // h1 read outside: three steps, one job a layer
  ExpectBits(RunGraph(mixed, {{"x", x}}).at("y"), RunGraph(mixed_split, {{"x", x}}).at("y"),
             "a chain ended by a Relu that is missing");
}

TEST(NetGemm, AlphaOnTheHostKeepsFp32) {
  Graph g;
  g.opset = 13;
  g.inputs = {Input("x", {1, 2})};
  Tensor w, one;
  w.shape = {2, 1};
  w.f = {1, 1};
  one.shape = {1, 1};
  one.f = {1};
  g.constants["w"] = w;
  g.constants["one"] = one;
  Node gm;
  gm.name = "gemm";
  gm.op = "Gemm";
  gm.inputs = {"x", "w"};
  gm.outputs = {"y"};
  gm.attrs["alpha"] = Float(3.0f);
  Node mm;
  mm.name = "mm";
  mm.op = "MatMul";
  mm.inputs = {"y", "one"};
  mm.outputs = {"z"};
  g.nodes = {gm, mm};
  g.outputs = {Input("z", {})};
  Tensor x;
  x.shape = {1, 2};
  x.f = {1.0f, std::ldexp(1.0f, -8)};
  const auto out = RunGraph(g, {{"x", x}});
  // y = 3·(1 + 2^-8) = 3.01171875 in fp32; z rounds it to bf16: 3.015625 (nearest even of 8 bits).
  EXPECT_EQ(out.at("z").f[0], 3.015625f);
}

// A BatchNormalization whose parameter comes from a node after the convolution is not folded
// (the parameter is not known yet) but runs on the host: a valid model, not an error.
TEST(NetConv, BatchNormWithLateParameterOnTheHost) {
  tb::Rng rng(test::TestSeed());
  const ConvCase c{1, 2, 4, 4, 3, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1, false, false, false};
  const Tensor x = Random(rng, {1, 2, 4, 4});
  const Tensor w = Random(rng, {3, 2, 3, 3});
  Graph g = ConvGraph(c, w, nullptr, nullptr, 0);
  Node k;
  k.name = "scale";
  k.op = "Constant";
  k.outputs = {"s"};
  net::Attr v;
  v.kind = net::Attr::Kind::kTensor;
  v.t.shape = {3};
  v.t.f = {2, 0.5f, -1};
  k.attrs["value"] = v;
  Node bn;
  bn.name = "bn";
  bn.op = "BatchNormalization";
  bn.inputs = {"c", "s", "beta", "mean", "var"};
  bn.outputs = {"b"};
  Tensor beta, mean, var;
  beta.shape = mean.shape = var.shape = {3};
  beta.f = {0.25f, 0, 1};
  mean.f = {0, 1, -1};
  var.f = {1, 4, 0.25f};
  g.constants["beta"] = beta;
  g.constants["mean"] = mean;
  g.constants["var"] = var;
  g.nodes.push_back(k);
  g.nodes.push_back(bn);
  g.outputs = {Input("b", {})};
  net::Plan plan = net::Plan::Build(g, {{"x", x.shape}}, num::Mode::kIeee);
  ASSERT_EQ(plan.steps().size(), 2u);
  EXPECT_FALSE(plan.steps()[1].accel);
  const auto out = RunGraph(g, {{"x", x}});
  const Tensor conv = RefConv(c, x, w, nullptr, nullptr, 0);
  for (size_t i = 0; i < conv.f.size(); ++i) {
    const size_t ch = i / 16;
    const double s = net::BnScale(v.t.f[ch], var.f[ch], 1e-5f);
    EXPECT_EQ(F32Bits(out.at("b").f[i]),
              F32Bits(net::BnApply(conv.f[i], mean.f[ch], beta.f[ch], s)));
  }
}

TEST(NetMatMul, BatchedWithBroadcastBitExact) {
  tb::Rng rng(test::TestSeed());
  const Tensor a = Random(rng, {2, 3, 4, 5});
  const Tensor b = Random(rng, {3, 5, 6});  // broadcast over the first axis
  const Tensor v = Random(rng, {5});        // 1-D: a vector
  Graph g;
  g.opset = 13;
  g.inputs = {Input("a", a.shape), Input("b", b.shape)};
  g.constants["v"] = v;
  Node m1;
  m1.name = "mm";
  m1.op = "MatMul";
  m1.inputs = {"a", "b"};
  m1.outputs = {"y"};
  Node m2;
  m2.name = "mv";
  m2.op = "MatMul";
  m2.inputs = {"a", "v"};
  m2.outputs = {"z"};
  g.nodes = {m1, m2};
  g.outputs = {Input("y", {}), Input("z", {})};
  const auto out = RunGraph(g, {{"a", a}, {"b", b}});
  ASSERT_EQ(out.at("y").shape, (Shape{2, 3, 4, 6}));
  ASSERT_EQ(out.at("z").shape, (Shape{2, 3, 4}));
  for (int p = 0; p < 2; ++p) {
    for (int q = 0; q < 3; ++q) {
      for (int i = 0; i < 4; ++i) {
        uint32_t accv = 0;
        for (int k = 0; k < 5; ++k) {
          accv = num::Mac(B16(a.f[size_t(((p * 3 + q) * 4 + i) * 5 + k)]), B16(v.f[size_t(k)]),
                          accv, num::Mode::kIeee);
        }
        EXPECT_EQ(F32Bits(out.at("z").f[size_t((p * 3 + q) * 4 + i)]), accv);
        for (int j = 0; j < 6; ++j) {
          uint32_t acc = 0;
          for (int k = 0; k < 5; ++k) {
            acc = num::Mac(B16(a.f[size_t(((p * 3 + q) * 4 + i) * 5 + k)]),
                           B16(b.f[size_t((q * 5 + k) * 6 + j)]), acc, num::Mode::kIeee);
          }
          EXPECT_EQ(F32Bits(out.at("y").f[size_t(((p * 3 + q) * 4 + i) * 6 + j)]), acc)
              << p << " " << q << " " << i << " " << j;
        }
      }
    }
  }
}

// The host operators' definitions on directed values.
TEST(NetHostOps, Definitions) {
  EXPECT_EQ(F32Bits(net::HostAdd(1.0f, std::ldexp(1.0f, -24))), F32Bits(1.0f));  // tie to even
  EXPECT_EQ(F32Bits(net::HostAdd(INFINITY, -INFINITY)), num::kFp32CanonicalNaN);
  EXPECT_EQ(F32Bits(net::HostAdd(-0.0f, -0.0f)), num::kFp32SignMask);
  EXPECT_EQ(F32Bits(net::HostAdd(-0.0f, 0.0f)), 0u);
  // BatchNormalization: s = gamma / sqrt(var + eps) and (x - mean)·s + beta in binary64, one
  // rounding to binary32 at the end.
  const double s = net::BnScale(2.0f, 3.0f, 1.0f);
  EXPECT_EQ(s, 1.0);
  EXPECT_EQ(net::BnApply(5.0f, 1.0f, 0.5f, s), 4.5f);
  EXPECT_EQ(net::BnApply(1.0f + std::ldexp(1.0f, -23), 1.0f, std::ldexp(1.0f, -30), 0.75),
            float(std::ldexp(0.75, -23) + std::ldexp(1.0, -30)));
  EXPECT_EQ(net::BnWeight(3.0f, 1.0 / 3.0), 1.0f);
  EXPECT_EQ(F32Bits(net::BnWeight(NAN, 1.0)), num::kFp32CanonicalNaN);
}

// The data moves (Concat, Split, Slice, Squeeze, Unsqueeze, Pad) on directed values, with the
// forms ONNX's node tests do not cover: opset-11 attributes, a constant Concat operand, Pad's
// edge and reflect modes, a run-time constant_value, negative pads, and their errors.
TEST(NetHostOps, DataMoves) {
  const auto node = [](const std::string& op, std::vector<std::string> in,
                       std::vector<std::string> out, std::map<std::string, net::Attr> attrs = {}) {
    Node n;
    n.name = out[0];
    n.op = op;
    n.inputs = std::move(in);
    n.outputs = std::move(out);
    n.attrs = std::move(attrs);
    return n;
  };
  Tensor x;  // 2 x 3: 0 1 2 / 3 4 5
  x.shape = {2, 3};
  x.f = {0, 1, 2, 3, 4, 5};
  Tensor k;
  k.shape = {2, 1};
  k.f = {-1, -2};
  const auto ints = [](std::vector<int64_t> v) {
    Tensor t;
    t.shape = {int64_t(v.size())};
    t.is_int = true;
    t.i = std::move(v);
    return t;
  };
  Graph g;
  g.opset = 11;
  g.inputs = {Input("x", {2, 3}), Input("v", {})};
  g.constants = {{"k", k},
                 {"pads", ints({1, -1, 0, 2})},
                 {"st", ints({2, 1})},
                 {"en", ints({-100, 2})},
                 {"ax", ints({1, 0})},
                 {"sp", ints({-1, 1})}};
  g.nodes = {node("Concat", {"x", "k"}, {"cat"}, {{"axis", Int(-1)}}),
             node("Split", {"cat"}, {"s0", "s1"}, {{"axis", Int(1)}, {"split", Ints({1, 3})}}),
             node("Slice", {"x", "st", "en", "ax", "sp"}, {"sl"}),
             node("Unsqueeze", {"x"}, {"u"}, {{"axes", Ints({0, -1})}}),
             node("Squeeze", {"u"}, {"sq"}),
             node("Pad", {"x", "pads", "v"}, {"pc"}),
             node("Pad", {"x", "pads"}, {"pe"}, {{"mode", net::Attr{}}}),
             node("Pad", {"x", "pads"}, {"pr"}, {{"mode", net::Attr{}}})};
  g.nodes[6].attrs["mode"].kind = net::Attr::Kind::kString;
  g.nodes[6].attrs["mode"].s = "edge";
  g.nodes[7].attrs["mode"].kind = net::Attr::Kind::kString;
  g.nodes[7].attrs["mode"].s = "reflect";
  // Resize, nearest: columns doubled (asymmetric, floor), rows and columns from sizes 1 x 2
  // (half_pixel, round_prefer_floor: row 0.5 -> 0, columns 0.25 -> 0, 1.75 -> 2).
  Tensor sc;
  sc.shape = {2};
  sc.f = {1.0f, 2.0f};
  g.constants["sc"] = sc;
  g.constants["sz"] = ints({1, 2});
  net::Attr asym, floor_mode;
  asym.kind = floor_mode.kind = net::Attr::Kind::kString;
  asym.s = "asymmetric";
  floor_mode.s = "floor";
  g.nodes.push_back(node("Resize", {"x", "", "sc"}, {"rs"},
                         {{"coordinate_transformation_mode", asym}, {"nearest_mode", floor_mode}}));
  g.nodes.push_back(node("Resize", {"x", "", "", "sz"}, {"rz"}));
  g.outputs.push_back(Input("rs", {}));
  g.outputs.push_back(Input("rz", {}));
  for (const char* o : {"cat", "s0", "s1", "sl", "u", "sq", "pc", "pe", "pr"}) {
    g.outputs.push_back(Input(o, {}));
  }
  Tensor v;
  v.shape = {};
  v.f = {9.5f};
  const auto out = RunGraph(g, {{"x", x}, {"v", v}});
  const auto want = [&](const char* name, Shape shape, std::vector<float> f) {
    EXPECT_EQ(out.at(name).shape, shape) << name;
    EXPECT_EQ(out.at(name).f, f) << name;
  };
  want("cat", {2, 4}, {0, 1, 2, -1, 3, 4, 5, -2});
  want("s0", {2, 1}, {0, 3});
  want("s1", {2, 3}, {1, 2, -1, 4, 5, -2});
  // Axis 1 from 2 down to the start (steps -1), axis 0 from 1 to 0 (exclusive): row 1 reversed.
  want("sl", {1, 3}, {5, 4, 3});
  want("u", {1, 2, 3, 1}, {0, 1, 2, 3, 4, 5});
  want("sq", {2, 3}, {0, 1, 2, 3, 4, 5});
  // pads: one row before, one column cut at the front, two columns after: 3 x 4.
  want("pc", {3, 4}, {9.5f, 9.5f, 9.5f, 9.5f, 1, 2, 9.5f, 9.5f, 4, 5, 9.5f, 9.5f});
  want("pe", {3, 4}, {1, 2, 2, 2, 1, 2, 2, 2, 4, 5, 5, 5});
  want("pr", {3, 4}, {4, 5, 4, 3, 1, 2, 1, 0, 4, 5, 4, 3});
  want("rs", {2, 6}, {0, 0, 1, 1, 2, 2, 3, 3, 4, 4, 5, 5});
  want("rz", {1, 2}, {0, 2});
  // Errors, one line naming the node.
  const auto fails = [&](Node n, const std::string& what, std::map<std::string, Tensor> consts) {
    Graph e;
    e.opset = 13;
    e.inputs = {Input("x", {2, 3})};
    e.constants = std::move(consts);
    e.nodes = {std::move(n)};
    for (const auto& o : e.nodes[0].outputs) e.outputs.push_back(Input(o, {}));
    try {
      net::Plan::Build(e, {}, num::Mode::kIeee);
      ADD_FAILURE() << "planned: " << what;
    } catch (const net::Error& err) {
      EXPECT_NE(std::string(err.what()).find(what), std::string::npos) << err.what();
    }
  };
  fails(node("Concat", {"x", "k"}, {"y"}, {{"axis", Int(0)}}), "does not match", {{"k", k}});
  fails(node("Concat", {"x"}, {"y"}), "axis is missing", {});
  fails(node("Split", {"x"}, {"a", "b"}, {{"axis", Int(1)}}), "into 2 equal parts", {});
  fails(node("Split", {"x", "s"}, {"a", "b"}), "does not cut", {{"s", ints({1, 2})}});
  fails(node("Slice", {"x", "x", "x"}, {"y"}), "starts must be a constant int64", {});
  fails(node("Slice", {"x", "st", "st"}, {"y"}), "is empty", {{"st", ints({1})}});
  fails(node("Squeeze", {"x", "a"}, {"y"}), "is not 1", {{"a", ints({0})}});
  fails(node("Unsqueeze", {"x"}, {"y"}), "axes are missing", {});
  fails(node("Pad", {"x", "p"}, {"y"}), "do not match", {{"p", ints({1, 1})}});
  Node wrap = node("Pad", {"x", "p"}, {"y"}, {{"mode", net::Attr{}}});
  wrap.attrs["mode"].kind = net::Attr::Kind::kString;
  wrap.attrs["mode"].s = "wrap";
  fails(wrap, "mode 'wrap'", {{"p", ints({0, 0, 0, 0})}});
  Node far = wrap;
  far.attrs["mode"].s = "reflect";
  fails(far, "exceed axis", {{"p", ints({2, 0, 0, 0})}});
}

// Shape computations fold when the plan is built: PyTorch's `x.view(x.size(0), -1)` with a
// dynamic batch exports Shape, Gather, Unsqueeze, Concat (and integer arithmetic) feeding a
// Reshape; with the input's shape known they become the Reshape's constant target. Gather and
// Cast of values computed at run time are errors naming the node.
TEST(NetHostOps, ShapeComputationsFoldWhenPlanned) {
  const auto node = [](const std::string& op, std::vector<std::string> in, const std::string& out,
                       std::map<std::string, net::Attr> attrs = {}) {
    Node n;
    n.name = out;
    n.op = op;
    n.inputs = std::move(in);
    n.outputs = {out};
    n.attrs = std::move(attrs);
    return n;
  };
  const auto ints = [](Shape shape, std::vector<int64_t> v) {
    Tensor t;
    t.shape = std::move(shape);
    t.is_int = true;
    t.i = std::move(v);
    return t;
  };
  Graph g;
  g.opset = 13;
  net::ValueInfo xi = Input("x", {-1, 3, 4});  // a dynamic batch
  g.inputs = {xi};
  g.constants = {{"i0", ints({}, {0})},
                 {"i1", ints({}, {1})},
                 {"i2", ints({1}, {-1})},
                 {"ax", ints({1}, {0})}};
  net::Attr to;
  to.kind = net::Attr::Kind::kInt;
  to.i = 7;
  g.nodes = {node("Shape", {"x"}, "s"),
             node("Gather", {"s", "i0"}, "n"),  // a scalar: the batch
             node("Gather", {"s", "i1"}, "c"),
             node("Gather", {"s", "i2"}, "w"),  // the last dimension, as a 1-element vector
             node("Mul", {"c", "w"}, "cw"),     // int64 arithmetic
             node("Unsqueeze", {"n", "ax"}, "nu"),
             node("Concat", {"nu", "cw"}, "shape", {{"axis", Int(0)}}),
             node("Cast", {"shape"}, "shape64", {{"to", to}}),
             node("Reshape", {"x", "shape64"}, "y")};
  g.outputs = {Input("y", {})};
  Tensor x;
  x.shape = {2, 3, 4};
  for (int k = 0; k < 24; ++k) x.f.push_back(float(k) - 7.5f);
  const net::Plan plan = net::Plan::Build(g, {{"x", x.shape}}, num::Mode::kIeee);
  const auto out = RunGraph(g, {{"x", x}});
  ASSERT_EQ(plan.steps().size(), 1u) << "everything but the Reshape folds";
  EXPECT_EQ(plan.steps()[0].op, "Reshape");
  EXPECT_EQ(out.at("y").shape, (Shape{2, 12}));
  EXPECT_EQ(out.at("y").f, x.f);
  // Gather of a value computed at run time with constant indices: a data move (an embedding
  // lookup); with indices computed at run time: an error naming the node.
  Graph e;
  e.opset = 13;
  e.inputs = {Input("x", {2, 3})};
  e.constants = {{"i", ints({2}, {-1, 0})}};
  e.nodes = {node("Gather", {"x", "i"}, "gx", {{"axis", Int(1)}})};
  e.outputs = {Input("gx", {})};
  Tensor x23;
  x23.shape = {2, 3};
  x23.f = {1, 2, 3, 4, 5, 6};
  EXPECT_EQ(RunGraph(e, {{"x", x23}}).at("gx").f, (std::vector<float>{3, 1, 6, 4}));
  e.nodes[0].inputs = {"x", "x"};
  try {
    net::Plan::Build(e, {}, num::Mode::kIeee);
    ADD_FAILURE() << "a Gather with run-time indices planned";
  } catch (const net::Error& err) {
    EXPECT_NE(std::string(err.what()).find("node 'gx' (Gather): the indices must be known"),
              std::string::npos)
        << err.what();
  }
}

TEST(NetHostOps, PoolsAndSoftmax) {
  Graph g;
  g.opset = 13;
  g.inputs = {Input("x", {1, 1, 3, 3})};
  Node mp;
  mp.name = "mp";
  mp.op = "MaxPool";
  mp.inputs = {"x"};
  mp.outputs = {"m"};
  mp.attrs["kernel_shape"] = Ints({2, 2});
  mp.attrs["pads"] = Ints({1, 1, 0, 0});
  Node ap = mp;
  ap.name = "ap";
  ap.op = "AveragePool";
  ap.outputs = {"a"};
  Node ap2 = ap;
  ap2.name = "ap2";
  ap2.outputs = {"a2"};
  ap2.attrs["count_include_pad"] = Int(1);
  Node gap;
  gap.name = "gap";
  gap.op = "GlobalAveragePool";
  gap.inputs = {"x"};
  gap.outputs = {"g"};
  Node fl;
  fl.name = "flat";
  fl.op = "Flatten";
  fl.inputs = {"x"};
  fl.outputs = {"f"};
  Node sm;
  sm.name = "sm";
  sm.op = "Softmax";
  sm.inputs = {"f"};
  sm.outputs = {"s"};
  g.nodes = {mp, ap, ap2, gap, fl, sm};
  g.outputs = {Input("m", {}), Input("a", {}), Input("a2", {}), Input("g", {}), Input("s", {})};
  Tensor x;
  x.shape = {1, 1, 3, 3};
  x.f = {1, -2, 3, 4, NAN, -6, 7, 8, -0.0f};
  const auto out = RunGraph(g, {{"x", x}});
  const auto& m = out.at("m").f;
  ASSERT_EQ(out.at("m").shape, (Shape{1, 1, 3, 3}));
  EXPECT_EQ(m[0], 1.0f);                             // only x[0][0] inside
  EXPECT_EQ(m[2], 3.0f);                             // max(-2, 3)
  EXPECT_EQ(F32Bits(m[4]), num::kFp32CanonicalNaN);  // a NaN in the window
  EXPECT_EQ(m[6], 7.0f);                             // max(4, 7)
  const auto& a = out.at("a").f;
  EXPECT_EQ(a[1], -0.5f);                // (1 + -2) / 2 positions inside
  EXPECT_EQ(out.at("a2").f[1], -0.25f);  // (1 + -2) / 4 with the padding
  EXPECT_EQ(F32Bits(out.at("g").f[0]), num::kFp32CanonicalNaN);
  for (float v : out.at("s").f) EXPECT_EQ(F32Bits(v), num::kFp32CanonicalNaN);
}

// Appends node `out` (named as its one output) to g.
void AddNode(Graph& g, const std::string& op, std::vector<std::string> in, const std::string& out,
             std::map<std::string, net::Attr> attrs = {}) {
  Node n;
  n.name = out;
  n.op = op;
  n.inputs = std::move(in);
  n.outputs = {out};
  n.attrs = std::move(attrs);
  g.nodes.push_back(n);
}

// A graph of one node `name` (`op`) reading `reads` (graph inputs or constants), writing "y".
Graph OneNode(const std::string& name, const std::string& op, std::vector<net::ValueInfo> inputs,
              std::vector<std::string> reads, std::map<std::string, Tensor> constants = {}) {
  Graph g;
  g.opset = 13;
  g.inputs = std::move(inputs);
  g.constants = std::move(constants);
  Node n;
  n.name = name;
  n.op = op;
  n.inputs = std::move(reads);
  n.outputs = {"y"};
  g.nodes = {n};
  g.outputs = {Input("y", {})};
  return g;
}

Tensor Filled(const Shape& s, bool is_int = false) {
  Tensor t;
  t.shape = s;
  t.is_int = is_int;
  if (is_int) {
    t.i.assign(size_t(net::Elements(s)), 1);
  } else {
    t.f.assign(size_t(net::Elements(s)), 1.0f);
  }
  return t;
}

// The vector operators (docs/onnx.md, "Vector operators"): a chain of every one of them, planned
// for a machine with the vector unit (every step an accelerator job, run by the golden model of a
// 3x5 machine with 24 vector-memory rows) and for one without (host steps): the outputs must be
// the same bits, and each step the contract's vector operations applied elementwise in order
// (checked here against isa::ApplyVectorOp directly), with operands broadcast as ONNX does.
TEST(NetVector, OperatorsOnTheVectorUnitAndTheHostAgree) {
  using isa::VectorOp;
  tb::Rng rng(test::TestSeed());
  Graph g;
  g.opset = 13;
  g.inputs = {Input("x", {2, 3, 4, 5})};
  g.constants["lo"] = Filled({});
  g.constants["lo"].f = {-0.5f};
  g.constants["hi"] = Filled({1});
  g.constants["hi"].f = {0.75f};
  g.constants["ch"] = Random(rng, {3, 1, 1});  // per channel: broadcast by the host
  g.constants["two"] = Filled({});
  g.constants["two"].f = {2.0f};
  const auto node = [&](const std::string& op, std::vector<std::string> in, const std::string& out,
                        std::map<std::string, net::Attr> attrs = {}) {
    AddNode(g, op, std::move(in), out, std::move(attrs));
  };
  node("Sigmoid", {"x"}, "s");
  node("Mul", {"x", "s"}, "silu");
  node("Clip", {"silu", "lo", "hi"}, "clip");
  node("Tanh", {"clip"}, "t");
  node("Sub", {"t", "ch"}, "sub");
  node("LeakyRelu", {"sub"}, "lr", {{"alpha", Float(0.2f)}});
  node("Exp", {"lr"}, "e");
  node("Sqrt", {"e"}, "q");
  node("Reciprocal", {"q"}, "r");
  node("Neg", {"r"}, "n");
  node("Max", {"n", "x", "ch"}, "mx");
  node("Min", {"mx", "two"}, "y");
  g.outputs = {Input("y", {})};
  const Tensor x = Random(rng, {2, 3, 4, 5});
  // On the host.
  net::Plan host_plan = net::Plan::Build(g, {{"x", x.shape}}, num::Mode::kIeee);
  for (const auto& st : host_plan.steps()) EXPECT_FALSE(st.accel) << st.label;
  const auto host_out = RunGraph(g, {{"x", x}});
  // On the vector unit: every step an accelerator step. Readers join the step of the value they
  // read while they are its only reader: Sigmoid and Mul(x, .); Clip to Min (Max of three inputs
  // starts a step); Max and Min.
  net::Plan plan = net::Plan::Build(g, {{"x", x.shape}}, num::Mode::kIeee, true);
  ASSERT_EQ(plan.steps().size(), 3u);
  EXPECT_EQ(plan.steps()[1].nodes.size(), 8u);
  for (const auto& st : plan.steps()) {
    EXPECT_TRUE(st.accel) << st.label;
    EXPECT_EQ(st.klass, "vector") << st.label;
  }
  auto cfg = tb::accel::ConfigFromBuild("accel_3x5");
  ASSERT_GT(cfg.machine.vmem_depth, 0);
  tb::accel::ModelSim sim(cfg);
  tb::accel::NetRunner runner(sim, false);
  const auto out = runner.Run(plan, {{"x", x}});
  ExpectBits(out.at("y"), host_out.at("y"), "vector unit vs host");
  EXPECT_EQ(runner.Total().jobs, 4);  // a job a step (Sub's tensor joins its part), Max of three 2
  // The reference: the contract's operations in the graph's order.
  const auto f = [](float v) { return F32Bits(v); };
  const auto apply = [](VectorOp op, uint32_t a, uint32_t b) {
    return isa::ApplyVectorOp(op, a, b, 0, num::Mode::kIeee);
  };
  Tensor want;
  want.shape = x.shape;
  const auto& ch = g.constants["ch"].f;
  for (size_t i = 0; i < x.f.size(); ++i) {
    const size_t c = i / 20 % 3;
    const uint32_t xv = f(x.f[i]);
    uint32_t v = apply(VectorOp::kMul, xv, apply(VectorOp::kSigmoid, xv, 0));
    v = apply(VectorOp::kMin, apply(VectorOp::kMax, v, f(-0.5f)), f(0.75f));
    v = apply(VectorOp::kSub, apply(VectorOp::kTanh, v, 0), f(ch[c]));
    v = apply(VectorOp::kLeakyRelu, v, f(0.2f));
    v = apply(VectorOp::kRecip, apply(VectorOp::kSqrt, apply(VectorOp::kExp, v, 0), 0), 0);
    v = apply(VectorOp::kMul, v, f(-1.0f));
    v = apply(VectorOp::kMax, apply(VectorOp::kMax, v, xv), f(ch[c]));
    v = apply(VectorOp::kMin, v, f(2.0f));
    want.f.push_back(F32FromBits(v));
  }
  ExpectBits(out.at("y"), want, "the contract's operations");
  // A vector step on a machine without the unit: a clear error from the back end.
  tb::accel::ModelSim plain(tb::accel::ConfigFromName("8x8_1ch"));
  tb::accel::NetRunner prun(plain, false);
  try {
    prun.Run(plan, {{"x", x}});
    ADD_FAILURE() << "a vector job ran on a machine without the vector unit";
  } catch (const std::exception& e) {
    EXPECT_NE(std::string(e.what()).find("no vector unit"), std::string::npos) << e.what();
  }
}

// GELU as PyTorch exports nn.GELU() before opset 20: x / sqrt(2) -> Erf -> + 1 -> x * . -> * 0.5.
// On a machine with the vector unit every step is an accelerator step (Div and Erf as the
// contract's `div` and `erf`), with the host's bits; each value is the contract's operations in
// that order, and it is within the contract's error of binary64 GELU: erf within 1.25 ulp, the
// division within 1 ulp, the other three steps half an ulp each, and the quotient's error
// carried through erf's slope, which bound |err| by 2^-21 * |x| (2^-149 for the subnormals).
TEST(NetVector, GeluAsPyTorchExportsIt) {
  using isa::VectorOp;
  tb::Rng rng(test::TestSeed());
  Graph g;
  g.opset = 17;
  g.inputs = {Input("x", {2, 3, 4, 5})};
  const auto scalar = [&](const std::string& name, float v) {
    g.constants[name] = Filled({});
    g.constants[name].f = {v};
  };
  scalar("sqrt2", 1.41421356f);
  scalar("one", 1.0f);
  scalar("half", 0.5f);
  const auto node = [&](const std::string& op, std::vector<std::string> in,
                        const std::string& out) { AddNode(g, op, std::move(in), out); };
  node("Div", {"x", "sqrt2"}, "u");
  node("Erf", {"u"}, "e");
  node("Add", {"e", "one"}, "e1");
  node("Mul", {"x", "e1"}, "xe");
  node("Mul", {"xe", "half"}, "y");
  g.outputs = {Input("y", {})};
  Tensor x = Random(rng, {2, 3, 4, 5}, 4.0);
  x.f[0] = 0.0f, x.f[1] = -0.0f, x.f[2] = 1e-40f, x.f[3] = -6.0f, x.f[4] = 6.0f;
  const auto host_out = RunGraph(g, {{"x", x}});
  // One step and one job: the five nodes' stages in order, x read as B by the Mul.
  net::Plan plan = net::Plan::Build(g, {{"x", x.shape}}, num::Mode::kIeee, true);
  ASSERT_EQ(plan.steps().size(), 1u);
  EXPECT_TRUE(plan.steps()[0].accel);
  EXPECT_EQ(plan.steps()[0].nodes.size(), g.nodes.size());
  EXPECT_EQ(plan.steps()[0].outputs, std::vector<std::string>{"y"});
  auto cfg = tb::accel::ConfigFromBuild("accel_3x5");
  tb::accel::ModelSim sim(cfg);
  tb::accel::NetRunner runner(sim, false);
  const auto out = runner.Run(plan, {{"x", x}});
  ExpectBits(out.at("y"), host_out.at("y"), "vector unit vs host");
  EXPECT_EQ(runner.Total().jobs, 1);
  const auto f = [](float v) { return F32Bits(v); };
  const auto apply = [](VectorOp op, uint32_t a, uint32_t b) {
    return isa::ApplyVectorOp(op, a, b, 0, num::Mode::kIeee);
  };
  Tensor want;
  want.shape = x.shape;
  for (size_t i = 0; i < x.f.size(); ++i) {
    const uint32_t xv = f(x.f[i]);
    uint32_t v = apply(VectorOp::kErf, apply(VectorOp::kDiv, xv, f(1.41421356f)), 0);
    v = apply(VectorOp::kMul, xv, apply(VectorOp::kAdd, v, f(1.0f)));
    want.f.push_back(F32FromBits(apply(VectorOp::kMul, v, f(0.5f))));
    const double xd = x.f[i];
    const double exact = 0.5 * xd * (1.0 + std::erf(xd / std::sqrt(2.0)));
    EXPECT_LE(std::fabs(double(want.f.back()) - exact), std::ldexp(std::fabs(xd), -21) + 0x1p-149)
        << "x = " << xd;
  }
  ExpectBits(out.at("y"), want, "the contract's operations");
  EXPECT_EQ(F32Bits(out.at("y").f[1]), 0x80000000u);  // -0 * (1 + erf(-0)) * 0.5
  EXPECT_EQ(out.at("y").f[4], 6.0f);                  // erf(6/sqrt(2)) rounds to 1
}

// ONNX's Gelu (opset 20; "none" as PyTorch's export, "tanh" with x³ = (x·x)·x) and Pow with a
// constant exponent of 1, 2, 3 or -1: one job each on the vector unit, the host's bits, each the
// contract's operations in the order the importer states, within a bound of binary64; any other
// exponent, a run-time one and another approximation are one-line errors.
TEST(NetVector, GeluAndPowOnTheVectorUnit) {
  using isa::VectorOp;
  tb::Rng rng(test::TestSeed());
  const Tensor x = Random(rng, {2, 3, 4, 5}, 4.0);
  const auto f = [](float v) { return F32Bits(v); };
  const auto apply = [](VectorOp op, uint32_t a, uint32_t b) {
    return isa::ApplyVectorOp(op, a, b, 0, num::Mode::kIeee);
  };
  struct Case {
    std::string op;
    std::map<std::string, net::Attr> attrs;
    float e;  // Pow's exponent
    std::function<uint32_t(uint32_t)> contract;
    std::function<double(double)> exact;
    double rel;  // the bound, relative to |x|^max(e, 1) (Gelu: to |x|)
  };
  const auto gelu_none = [&](uint32_t v) {
    uint32_t t = apply(VectorOp::kErf, apply(VectorOp::kDiv, v, f(1.41421356f)), 0);
    t = apply(VectorOp::kMul, apply(VectorOp::kAdd, t, f(1.0f)), v);
    return apply(VectorOp::kMul, t, f(0.5f));
  };
  const auto gelu_tanh = [&](uint32_t v) {
    uint32_t t = apply(VectorOp::kMul, apply(VectorOp::kMul, v, v), v);
    t = apply(VectorOp::kAdd, apply(VectorOp::kMul, t, f(0.044715f)), v);
    t = apply(VectorOp::kTanh, apply(VectorOp::kMul, t, f(0.797884561f)), 0);
    t = apply(VectorOp::kMul, apply(VectorOp::kAdd, t, f(1.0f)), v);
    return apply(VectorOp::kMul, t, f(0.5f));
  };
  const double s2pi = std::sqrt(2.0 / M_PI);
  const std::vector<Case> cases = {
      {"Gelu",
       {},
       0,
       gelu_none,
       [](double v) { return 0.5 * v * (1.0 + std::erf(v / std::sqrt(2.0))); },
       0x1p-21},
      {"Gelu",
       {{"approximate", net::Attr{}}},
       0,
       gelu_tanh,
       [&](double v) { return 0.5 * v * (1.0 + std::tanh(s2pi * (v + 0.044715 * v * v * v))); },
       0x1p-19},
      {"Pow", {}, 1, [](uint32_t v) { return v; }, [](double v) { return v; }, 0},
      {"Pow",
       {},
       2,
       [&](uint32_t v) { return apply(VectorOp::kMul, v, v); },
       [](double v) { return v * v; },
       0x1p-24},
      {"Pow",
       {},
       3,
       [&](uint32_t v) { return apply(VectorOp::kMul, apply(VectorOp::kMul, v, v), v); },
       [](double v) { return v * v * v; },
       0x1p-23},
      {"Pow",
       {},
       -1,
       [&](uint32_t v) { return apply(VectorOp::kRecip, v, 0); },
       [](double v) { return 1.0 / v; },
       0x1p-23},
  };
  for (Case cs : cases) {
    SCOPED_TRACE(cs.op + " " + std::to_string(cs.e));
    if (cs.attrs.count("approximate")) {
      cs.attrs["approximate"].kind = net::Attr::Kind::kString;
      cs.attrs["approximate"].s = "tanh";
    }
    Graph g;
    g.opset = 20;
    g.inputs = {Input("x", {2, 3, 4, 5})};
    Node n;
    n.name = "y";
    n.op = cs.op;
    n.inputs = {"x"};
    if (cs.op == "Pow") {
      g.constants["e"] = Filled({});
      g.constants["e"].f = {cs.e};
      n.inputs.push_back("e");
    }
    n.outputs = {"y"};
    n.attrs = cs.attrs;
    g.nodes = {n};
    g.outputs = {Input("y", {})};
    const auto host_out = RunGraph(g, {{"x", x}});
    net::Plan plan = net::Plan::Build(g, {{"x", x.shape}}, num::Mode::kIeee, true);
    ASSERT_EQ(plan.steps().size(), 1u);
    EXPECT_TRUE(plan.steps()[0].accel);
    tb::accel::ModelSim sim(tb::accel::ConfigFromBuild("accel_3x5"));
    tb::accel::NetRunner runner(sim, false);
    const auto out = runner.Run(plan, {{"x", x}});
    EXPECT_EQ(runner.Total().jobs, 1);
    ExpectBits(out.at("y"), host_out.at("y"), "vector unit vs host");
    Tensor want;
    want.shape = x.shape;
    for (float v : x.f) {
      want.f.push_back(F32FromBits(cs.contract(F32Bits(v))));
      if (v == 0.0f && cs.e < 0) continue;
      const double scale = std::pow(std::fabs(double(v)), std::max(1.0, double(cs.e)));
      const double mag = cs.e < 0 ? std::fabs(cs.exact(v)) : scale;
      EXPECT_LE(std::fabs(double(want.f.back()) - cs.exact(v)), cs.rel * mag + 0x1p-149)
          << "x = " << v;
    }
    ExpectBits(out.at("y"), want, "the contract's operations");
  }
  // Errors.
  const auto fails = [&](float e, const char* part) {
    Graph g = OneNode("p", "Pow", {Input("x", {1, 4}), Input("e", {})}, {"x", "e"});
    g.inputs.pop_back();
    g.constants["e"] = Filled({});
    g.constants["e"].f = {e};
    try {
      net::Plan::Build(g, {}, num::Mode::kIeee, true);
      ADD_FAILURE() << "no error for exponent " << e;
    } catch (const net::Error& err) {
      EXPECT_NE(std::string(err.what()).find(part), std::string::npos) << err.what();
    }
  };
  fails(0.5f, "node 'p' (Pow): the exponent must be a constant 1, 2, 3 or -1");
  fails(4.0f, "the exponent must be a constant 1, 2, 3 or -1");
}

// Which readers join a vector step: Exp's reader Sub(2, .) has the value second, so it starts a
// step (sub does not commute); Div(., x) joins it (x a graph input); Mul(., z) does not, as z is
// computed after the step (by Sigmoid(x)); a value with two readers ends its step. The bits are
// the host's, one node at a time, either way.
TEST(NetVector, ElementwiseChainsJoinOneStep) {
  tb::Rng rng(test::TestSeed());
  Graph g;
  g.opset = 13;
  g.inputs = {Input("x", {2, 3, 4, 5})};
  g.constants["two"] = Filled({});
  g.constants["two"].f = {2.0f};
  const auto node = [&](const std::string& op, std::vector<std::string> in,
                        const std::string& out) { AddNode(g, op, std::move(in), out); };
  node("Exp", {"x"}, "e");
  node("Sub", {"two", "e"}, "s");
  node("Div", {"s", "x"}, "d");
  node("Sigmoid", {"x"}, "z");
  node("Mul", {"d", "z"}, "m");
  node("Tanh", {"m"}, "t");
  node("Neg", {"t"}, "y1");
  node("Relu", {"t"}, "y2");
  g.outputs = {Input("y1", {}), Input("y2", {})};
  const Tensor x = Random(rng, {2, 3, 4, 5});
  const auto host_out = RunGraph(g, {{"x", x}});
  net::Plan plan = net::Plan::Build(g, {{"x", x.shape}}, num::Mode::kIeee, true);
  std::vector<std::vector<std::string>> steps;
  for (const auto& st : plan.steps()) steps.push_back(st.nodes);
  const std::vector<std::vector<std::string>> want = {{"e"},      {"s", "d"}, {"z"},
                                                      {"m", "t"}, {"y1"},     {"y2"}};
  EXPECT_EQ(steps, want);
  tb::accel::ModelSim sim(tb::accel::ConfigFromBuild("accel_3x5"));
  tb::accel::NetRunner runner(sim, false);
  const auto out = runner.Run(plan, {{"x", x}});
  for (const char* y : {"y1", "y2"}) ExpectBits(out.at(y), host_out.at(y), y);
}

// A residual block, x -> Conv -> Add(·, x) -> Relu, as ResNets have it: on a machine with the
// vector unit the Add and its Relu are one accelerator job (no host step), and in IEEE mode the
// bits are the host's (fp32 addition rounds once either way; relu as the store path's).
TEST(NetVector, ResidualAddAndReluOnTheVectorUnit) {
  tb::Rng rng(test::TestSeed());
  const ConvCase cc{1, 5, 6, 6, 5, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1, true, false, false};
  const Tensor w = Random(rng, {5, 5, 3, 3});
  const Tensor b = Random(rng, {5});
  Graph g = ConvGraph(cc, w, &b, nullptr, 0.0f);
  const std::string conv_out = g.nodes.back().outputs[0];
  Node add;
  add.name = "add";
  add.op = "Add";
  add.inputs = {conv_out, "x"};
  add.outputs = {"s"};
  Node relu;
  relu.name = "relu";
  relu.op = "Relu";
  relu.inputs = {"s"};
  relu.outputs = {"y"};
  g.nodes.push_back(add);
  g.nodes.push_back(relu);
  // (The convolution's output is also an output: else the add would join its step,
  // NetConv.ResidualAddRunsInTheAccumulators.)
  g.outputs = {Input("y", {}), Input(conv_out, {})};
  const Tensor x = Random(rng, {1, 5, 6, 6});
  const net::Plan host_plan = net::Plan::Build(g, {{"x", x.shape}}, num::Mode::kIeee);
  EXPECT_EQ(host_plan.steps().size(), 3u);  // conv, add, relu (the add's relu is not fused)
  const auto host_out = RunGraph(g, {{"x", x}});
  const net::Plan plan = net::Plan::Build(g, {{"x", x.shape}}, num::Mode::kIeee, true);
  ASSERT_EQ(plan.steps().size(), 2u);
  for (const auto& st : plan.steps()) EXPECT_TRUE(st.accel) << st.label;
  EXPECT_EQ(plan.steps()[1].label, "add + relu");
  tb::accel::ModelSim sim(tb::accel::ConfigFromBuild("accel_3x5"));
  tb::accel::NetRunner runner(sim, false);
  const auto out = runner.Run(plan, {{"x", x}});
  ExpectBits(out.at("y"), host_out.at("y"), "vector unit vs host, IEEE mode");
}

// Pooling on the vector unit (host::CompilePool): every pooling operator and its attributes
// (pads on each side, strides, dilations, ceil_mode, count_include_pad, 1-D and global), planned
// with the vector unit (accelerator steps, run by the golden model of the 3x5 machine with its
// 24 vector-memory rows: tiles of a few pixels, taps in chunks for the global pools) and
// without (host steps). On values without -0, NaNs or subnormal quotients the contract's vector
// pooling is the host's bits (IEEE mode), so the two must agree.
TEST(NetVector, PoolingOnTheVectorUnitAndTheHostAgree) {
  tb::Rng rng(test::TestSeed());
  Graph g;
  g.opset = 13;
  g.inputs = {Input("x", {2, 7, 9, 11}), Input("x1", {1, 6, 13})};
  const auto node = [&](const std::string& op, const std::string& in, const std::string& out,
                        std::map<std::string, net::Attr> attrs = {}) {
    Node n;
    n.name = out;
    n.op = op;
    n.inputs = {in};
    n.outputs = {out};
    n.attrs = std::move(attrs);
    g.nodes.push_back(n);
    g.outputs.push_back(Input(out, {}));
  };
  node("MaxPool", "x", "mp",
       {{"kernel_shape", Ints({3, 3})}, {"strides", Ints({2, 2})}, {"pads", Ints({1, 1, 1, 1})}});
  node("MaxPool", "x", "mpd",
       {{"kernel_shape", Ints({2, 3})},
        {"dilations", Ints({2, 1})},
        {"pads", Ints({0, 2, 1, 0})},
        {"ceil_mode", Int(1)},
        {"strides", Ints({3, 2})}});
  node("AveragePool", "x", "ap",
       {{"kernel_shape", Ints({3, 2})}, {"pads", Ints({1, 0, 2, 1})}, {"strides", Ints({2, 1})}});
  node("AveragePool", "x", "api",
       {{"kernel_shape", Ints({3, 3})},
        {"pads", Ints({1, 1, 1, 1})},
        {"count_include_pad", Int(1)},
        {"ceil_mode", Int(1)},
        {"strides", Ints({2, 2})}});
  node("GlobalAveragePool", "x", "gap");
  node("GlobalMaxPool", "x", "gmp");
  node("MaxPool", "x1", "mp1", {{"kernel_shape", Ints({4})}, {"strides", Ints({3})}});
  node("AveragePool", "x1", "ap1", {{"kernel_shape", Ints({5})}, {"pads", Ints({2, 2})}});
  const Tensor x = Random(rng, {2, 7, 9, 11}), x1 = Random(rng, {1, 6, 13});
  const std::map<std::string, Tensor> in = {{"x", x}, {"x1", x1}};
  const net::Plan host_plan =
      net::Plan::Build(g, {{"x", x.shape}, {"x1", x1.shape}}, num::Mode::kIeee);
  for (const auto& st : host_plan.steps()) EXPECT_FALSE(st.accel) << st.label;
  const auto host_out = RunGraph(g, in);
  const net::Plan plan =
      net::Plan::Build(g, {{"x", x.shape}, {"x1", x1.shape}}, num::Mode::kIeee, true);
  ASSERT_EQ(plan.steps().size(), g.nodes.size());
  for (const auto& st : plan.steps()) {
    EXPECT_TRUE(st.accel) << st.label;
    EXPECT_EQ(st.klass, "pool") << st.label;
    EXPECT_EQ(st.jobs, 1) << st.label;
  }
  tb::accel::ModelSim sim(tb::accel::ConfigFromBuild("accel_3x5"));
  tb::accel::NetRunner runner(sim, false);
  const auto out = runner.Run(plan, in);
  EXPECT_EQ(runner.Total().jobs, int(g.nodes.size()));
  EXPECT_EQ(runner.Total().perf.macs, 0u);
  for (const auto& o : g.outputs) {
    ASSERT_EQ(out.at(o.name).shape, host_out.at(o.name).shape) << o.name;
    ExpectBits(out.at(o.name), host_out.at(o.name), "vector unit vs host: " + o.name);
  }
}

// Depthwise convolutions on the vector unit (host::CompileDepthwise): one job a step instead
// of one per channel, bit for bit the contract's convolution (the reference of NetConv) through
// windows, BN and relu, strides, dilations, unequal pads and strides, 1-D, batches; with a
// vector memory too small for a kernel's weights the MXU's groups run instead. A depthwise
// convolution feeding a pointwise one stores bf16, as the MXU's does.
TEST(NetVector, DepthwiseOnTheVectorUnitIsTheContractsConvolution) {
  tb::Rng rng(test::TestSeed());
  const ConvCase cases[] = {
      // n cin h w cout kh kw group | sh sw dh dw | pt pl pb pr | bias bn relu
      {1, 6, 6, 7, 6, 3, 3, 6, 1, 1, 1, 1, 1, 1, 1, 1, true, false, true},
      {2, 7, 9, 9, 7, 3, 3, 7, 2, 2, 1, 1, 1, 1, 1, 1, false, true, true},
      {1, 5, 9, 8, 5, 5, 3, 5, 1, 2, 2, 1, 2, 0, 3, 1, true, false, false},
      {1, 4, 8, 9, 4, 2, 3, 4, 2, 1, 1, 1, 0, 1, 2, 0, true, true, false},
      {2, 3, 1, 11, 3, 1, 3, 3, 1, 2, 1, 1, 0, 1, 0, 1, true, false, false},
  };
  auto cfg = tb::accel::ConfigFromBuild("accel_3x5");
  cfg.machine.vmem_depth = 400;
  int index = 0;
  for (const auto& c : cases) {
    for (const int depth : {400, 12}) {
      SCOPED_TRACE(testing::Message() << "case " << index << ", VmemDepth " << depth);
      const Tensor x = Random(rng, {c.n, c.cin, c.h, c.w});
      const Tensor w = Random(rng, {c.cout, 1, c.kh, c.kw});
      const Tensor b = Random(rng, {c.cout});
      Tensor bn = Random(rng, {4 * c.cout});
      for (int i = 0; i < c.cout; ++i)
        bn.f[size_t(3 * c.cout + i)] = std::fabs(bn.f[size_t(3 * c.cout + i)]);
      const Graph g = ConvGraph(c, w, c.bias ? &b : nullptr, c.bn ? &bn : nullptr, 1e-3f);
      Tensor xin = x;
      xin.shape = g.inputs[0].shape;
      const net::Plan plan = net::Plan::Build(g, {{"x", xin.shape}}, num::Mode::kIeee, true, depth);
      ASSERT_EQ(plan.steps().size(), 1u);
      const bool on_vector = depth >= 1 + c.kh * c.kw + 3;
      EXPECT_EQ(plan.steps()[0].jobs, on_vector ? 1 : c.group);
      EXPECT_EQ(plan.steps()[0].detail.find("vector unit") != std::string::npos, on_vector);
      tb::accel::ModelSim sim(cfg);
      tb::accel::NetRunner runner(sim, false);
      const auto out = runner.Run(plan, {{"x", xin}});
      Tensor want = RefConv(c, x, w, c.bias ? &b : nullptr, c.bn ? &bn : nullptr, 1e-3f);
      Tensor got = out.at(g.outputs[0].name);
      got.shape = want.shape;
      ExpectBits(got, want, "depthwise conv");
      EXPECT_EQ(runner.Total().perf.macs, on_vector ? 0u : plan.Macs());  // MXU MACs
    }
    ++index;
  }
  // Depthwise (bf16 out) then pointwise: the same bits as the MXU's groups.
  const ConvCase dwc{1, 6, 7, 7, 6, 3, 3, 6, 1, 1, 1, 1, 1, 1, 1, 1, true, false, true};
  Graph g = ConvGraph(dwc, Random(rng, {6, 1, 3, 3}), nullptr, nullptr, 0.0f);
  g.constants["W2"] = Random(rng, {5, 6, 1, 1});
  Node pw;
  pw.name = "pw";
  pw.op = "Conv";
  pw.inputs = {g.outputs[0].name, "W2"};
  pw.outputs = {"z"};
  g.nodes.push_back(pw);
  g.outputs = {Input("z", {})};
  const Tensor x = Random(rng, {1, 6, 7, 7});
  const net::Plan vplan = net::Plan::Build(g, {{"x", x.shape}}, num::Mode::kIeee, true, 400);
  ASSERT_EQ(vplan.steps().size(), 2u);
  EXPECT_EQ(vplan.steps()[0].jobs, 1);
  tb::accel::ModelSim sim(cfg);
  tb::accel::NetRunner runner(sim, false);
  ExpectBits(runner.Run(vplan, {{"x", x}}).at("z"), RunGraph(g, {{"x", x}}).at("z"),
             "vector unit vs MXU");
}

// Softmax and LogSoftmax on the vector unit (host::CompileSoftmax): the slices along any axis
// moved to the lanes, within the vector softmax's bound of the host's binary64 answer (the
// slice's length + 4 + |x - m| ulp); on the host when the vector memory is too small for a slice
// (or unknown); the host's LogSoftmax is (x - m) - log(sum) in binary64, rounded once.
TEST(NetVector, SoftmaxOnTheVectorUnit) {
  tb::Rng rng(test::TestSeed());
  Graph g;
  g.opset = 13;
  g.inputs = {Input("x", {2, 5, 3, 4})};
  const auto node = [&](const std::string& op, const std::string& out, int64_t axis) {
    Node n;
    n.name = out;
    n.op = op;
    n.inputs = {"x"};
    n.outputs = {out};
    n.attrs["axis"] = Int(axis);
    g.nodes.push_back(n);
    g.outputs.push_back(Input(out, {}));
  };
  node("Softmax", "s1", 1);
  node("Softmax", "s3", -1);
  node("LogSoftmax", "l1", 1);
  node("LogSoftmax", "l2", 2);
  const Tensor x = Random(rng, {2, 5, 3, 4}, 8.0);
  const auto host = RunGraph(g, {{"x", x}});
  auto cfg = tb::accel::ConfigFromBuild("accel_3x5");
  for (const int depth : {24, 9}) {
    const net::Plan plan = net::Plan::Build(g, {{"x", x.shape}}, num::Mode::kIeee, true, depth);
    tb::accel::ModelSim sim(cfg);
    tb::accel::NetRunner runner(sim, false);
    const auto out = runner.Run(plan, {{"x", x}});
    for (const auto& st : plan.steps()) {
      const int64_t len = st.label == "s3" ? 4 : st.label == "l2" ? 3 : 5;
      EXPECT_EQ(st.accel, depth >= len + 6) << st.label << ", VmemDepth " << depth;
      const Tensor& y = out.at(st.label);
      const Tensor& h = host.at(st.label);
      for (size_t i = 0; i < y.f.size(); ++i) {
        const double bound =
            (len + 4 + 16.0) * std::ldexp(1.0, -23) * std::max(1.0f, std::fabs(h.f[i]));
        ASSERT_LE(std::fabs(double(y.f[i]) - h.f[i]), st.accel ? bound : 0.0)
            << st.label << "[" << i << "], VmemDepth " << depth;
      }
    }
  }
  EXPECT_FALSE(net::Plan::Build(g, {{"x", x.shape}}, num::Mode::kIeee, true).steps()[0].accel)
      << "vector memory unknown: on the host";
  // LogSoftmax on the host: (x - m) - log(sum) in binary64, one rounding.
  Graph one = OneNode("ls", "LogSoftmax", {Input("x", {1, 2})}, {"x"});
  Tensor t;
  t.shape = {1, 2};
  t.f = {1.0f, 1.0f};
  EXPECT_EQ(RunGraph(one, {{"x", t}}).at("y").f,
            (std::vector<float>{float(-std::log(2.0)), float(-std::log(2.0))}));
}

// BatchNormalization not after a convolution (pre-activation networks) on the vector unit: per
// channel y = fma32(x, a, b) with a = fp32(s), b = fp32(beta - mean·s) from the binary64 s, and a
// following Relu in the same job; on the host (binary64) without the vector memory's depth.
TEST(NetVector, BatchNormOnTheVectorUnit) {
  tb::Rng rng(test::TestSeed());
  for (const Shape& xs : {Shape{2, 3, 4, 5}, Shape{5, 7}}) {
    const int64_t C = xs[1];
    Graph g;
    g.opset = 13;
    g.inputs = {Input("x", xs)};
    const char* names[4] = {"gamma", "beta", "mean", "var"};
    Node bn;
    bn.name = "bn";
    bn.op = "BatchNormalization";
    bn.inputs = {"x"};
    for (const char* p : names) {
      Tensor t = Random(rng, {C});
      if (std::string(p) == "var") {
        for (auto& v : t.f) v = std::fabs(v);
      }
      g.constants[p] = t;
      bn.inputs.push_back(p);
    }
    bn.attrs["epsilon"] = Float(1e-3f);
    bn.outputs = {"b"};
    Node relu;
    relu.name = "relu";
    relu.op = "Relu";
    relu.inputs = {"b"};
    relu.outputs = {"y"};
    g.nodes = {bn, relu};
    g.outputs = {Input("y", {})};
    const Tensor x = Random(rng, xs);
    const net::Plan plan = net::Plan::Build(g, {{"x", xs}}, num::Mode::kIeee, true, 24);
    ASSERT_EQ(plan.steps().size(), 1u);
    EXPECT_TRUE(plan.steps()[0].accel);
    EXPECT_EQ(plan.steps()[0].label, "bn + relu");
    tb::accel::ModelSim sim(tb::accel::ConfigFromBuild("accel_3x5"));
    tb::accel::NetRunner runner(sim, false);
    const Tensor y = runner.Run(plan, {{"x", x}}).at("y");
    const int64_t hw = net::Elements(xs) / (xs[0] * C);
    for (size_t i = 0; i < y.f.size(); ++i) {
      const size_t ch = size_t(int64_t(i) / hw % C);
      const double sc = net::BnScale(g.constants["gamma"].f[ch], g.constants["var"].f[ch], 1e-3f);
      const uint32_t a = F32Bits(float(sc));
      const uint32_t b =
          F32Bits(net::BnApply(0.0f, g.constants["mean"].f[ch], g.constants["beta"].f[ch], sc));
      const uint32_t want = num::Relu(num::Fma32(F32Bits(x.f[i]), a, b, num::Mode::kIeee));
      ASSERT_EQ(F32Bits(y.f[i]), want) << "element " << i;
    }
    EXPECT_FALSE(net::Plan::Build(g, {{"x", xs}}, num::Mode::kIeee, true, 4).steps()[0].accel)
        << "4 vector-memory rows: on the host";
  }
}

// A float64 graph (what PyTorch exports from a double model) is computed in float32 with one
// warning per float64 input; other element types stay errors.
TEST(NetInputs, Float64GraphsRunInFloat32WithAWarning) {
  Graph g = OneNode("r", "Relu", {Input("x", {2, 3})}, {"x"});
  g.inputs[0].dtype = "float64";
  const net::Plan plan = net::Plan::Build(g, {}, num::Mode::kIeee);
  ASSERT_EQ(plan.warnings().size(), 1u);
  EXPECT_NE(plan.warnings()[0].find("graph input 'x' is float64"), std::string::npos)
      << plan.warnings()[0];
  Tensor x;
  x.shape = {2, 3};
  x.f = {-1.5f, 2.0f, -0.0f, 3.25f, -7.0f, 0.5f};
  const auto out = RunGraph(g, {{"x", x}});
  EXPECT_EQ(out.at("y").f, (std::vector<float>{0.0f, 2.0f, 0.0f, 3.25f, 0.0f, 0.5f}));
  g.inputs[0].dtype = "float16";
  try {
    net::Plan::Build(g, {}, num::Mode::kIeee);
    ADD_FAILURE() << "a float16 input planned";
  } catch (const net::Error& e) {
    EXPECT_NE(std::string(e.what()).find("element type float16"), std::string::npos) << e.what();
  }
  g.inputs[0].dtype = "float32";
  EXPECT_TRUE(net::Plan::Build(g, {}, num::Mode::kIeee).warnings().empty());
}

// Bad graphs: one net::Error each, naming the node and the operator.
TEST(NetErrors, NameTheNodeAndTheOperator) {
  auto expect = [](const Graph& g, const std::map<std::string, Shape>& shapes,
                   const std::string& part) {
    try {
      net::Plan::Build(g, shapes, num::Mode::kIeee);
      ADD_FAILURE() << "no error; expected: " << part;
    } catch (const net::Error& e) {
      EXPECT_NE(std::string(e.what()).find(part), std::string::npos) << e.what();
      EXPECT_EQ(std::string(e.what()).find('\n'), std::string::npos) << "one line: " << e.what();
    }
  };
  Graph g = OneNode("sig", "Sin", {Input("x", {1, 4})}, {"x"});
  expect(g, {}, "node 'sig' (Sin): operator not supported");

  expect(OneNode("clip", "Clip", {Input("x", {1, 4}), Input("lo", {2})}, {"x", "lo"}), {},
         "node 'clip' (Clip): min has shape (2,); a scalar is required");
  expect(OneNode("mul", "Mul", {Input("x", {1, 4})}, {"x"}), {},
         "node 'mul' (Mul): 1 inputs; two are supported");
  expect(OneNode("sub", "Sub", {Input("x", {2, 4}), Input("z", {3, 4})}, {"x", "z"}), {},
         "node 'sub' (Sub): shapes (2, 4) and (3, 4) do not broadcast");

  g.nodes[0].op = "Relu";
  g.nodes[0].attrs["alpha"] = Float(0.1f);
  expect(g, {}, "node 'sig' (Relu): attribute 'alpha' is not supported");

  g.nodes[0].attrs.clear();
  expect(g, {{"x", {2, 4}}}, "input 'x': shape (2, 4), but the model declares (1, 4)");
  expect(g, {{"z", {1, 4}}}, "the model has no input 'z'");

  expect(OneNode("c3", "Conv", {Input("x", {1, 3, 5, 5, 5})}, {"x", "w"},
                 {{"w", Filled({2, 3, 1, 1, 1})}}),
         {}, "node 'c3' (Conv): input (1, 3, 5, 5, 5) is not 1-D or 2-D");
  expect(OneNode("mm", "MatMul", {Input("a", {2, 3}), Input("b", {4, 5})}, {"a", "b"}), {},
         "node 'mm' (MatMul): A (2, 3) and B (4, 5) do not multiply");
  // An integer constant where a float operand is needed; an empty operand.
  expect(OneNode("add", "Add", {Input("x", {1, 2})}, {"x", "ki"}, {{"ki", Filled({2}, true)}}), {},
         "node 'add' (Add): input 'ki' is an integer tensor; float32 is required");
  expect(OneNode("mm0", "MatMul", {Input("a", {3, 4})}, {"a", "b"}, {{"b", Filled({4, 0})}}), {},
         "node 'mm0' (MatMul): input 'b' is empty (shape (4, 0))");
  expect(OneNode("r", "Relu", {Input("x", {-1, 4})}, {"x"}), {},
         "input 'x': the model does not fix its shape (-1, 4)");
}

// Whole-network programs (NetRunner::SetWholeNetwork): a small residual network (a convolution
// into a second and a residual add with a relu, read by a 1x1 convolution and a max pool, a 1x1
// convolution, a global average pool, a flatten and a dense layer) runs as one program on a machine
// with the vector unit, its activations left in HBM (a value with both fp32 and bf16 readers stored
// both ways), and gives the bits the job-by-job run gives; a host step that computes from a job's
// output (here a Transpose the machine's layout cannot express) starts a second program.
TEST(NetWhole, ResidualNetworkRunsAsOneProgram) {
  tb::Rng rng(test::TestSeed());
  // (Batch 1 adds a squeeze-and-excite scale, Mul(sigmoid(gap), x): its B one row per channel.)
  for (const auto& [transpose, batch] : {std::pair{false, 2}, {true, 2}, {false, 1}}) {
    SCOPED_TRACE(fmt::format(
        "{}, batch {}", transpose ? "with a host transpose" : "all on the accelerator", batch));
    const bool se = batch == 1;
    Graph g;
    g.opset = 13;
    g.inputs = {Input("x", {batch, 8, 6, 6})};
    const auto node = [&](const std::string& op, std::vector<std::string> in,
                          const std::string& out, std::map<std::string, net::Attr> attrs = {}) {
      Node n;
      n.name = out;
      n.op = op;
      n.inputs = std::move(in);
      n.outputs = {out};
      n.attrs = std::move(attrs);
      g.nodes.push_back(n);
    };
    g.constants["w1"] = Random(rng, {8, 8, 3, 3}, 0.3);
    g.constants["b1"] = Random(rng, {8});
    g.constants["w2"] = Random(rng, {8, 8, 3, 3}, 0.3);
    g.constants["w3"] = Random(rng, {16, 12, 1, 1}, 0.3);
    g.constants["we1"] = Random(rng, {8, 8, 1, 1}, 0.3);
    g.constants["we3"] = Random(rng, {4, 8, 3, 3}, 0.3);
    g.constants["wt0"] = Random(rng, {2, 8, 1, 1}, 0.3);
    g.constants["fc2"] = Random(rng, {72, 5}, 0.3);
    g.constants["wt1"] = Random(rng, {4, 2, 3, 3}, 0.3);
    g.constants["w4"] = Random(rng, {4, 8, 1, 1}, 0.3);
    g.constants["fc"] = Random(rng, {16, 10}, 0.3);
    g.constants["fcb"] = Random(rng, {10});
    const std::map<std::string, net::Attr> pad1 = {{"pads", Ints({1, 1, 1, 1})}};
    node("Conv", {"x", "w1", "b1"}, "c1", pad1);
    node("Relu", {"c1"}, "r1");
    node("Conv", {"r1", "w2"}, "c2", pad1);
    node("Add", {"c2", "r1"}, "s");
    node("Relu", {"s"}, "r2");
    node("Conv", {"r2", "w4"}, "side");  // r2 read as bf16 too: the add's job stores both
    std::string pool_in = "r2";
    if (se) {
      node("GlobalAveragePool", {"r2"}, "sg");
      node("Sigmoid", {"sg"}, "ss");
      node("Mul", {"ss", "r2"}, "se");
      pool_in = "se";
    }
    if (transpose) {
      node("Transpose", {"r2"}, "tr", {{"perm", Ints({0, 1, 3, 2})}});
      pool_in = "tr";
    }
    node("MaxPool", {pool_in}, "p", {{"kernel_shape", Ints({2, 2})}, {"strides", Ints({2, 2})}});
    // A fire module's expand: two convolutions concatenated along the channels, which a
    // whole-network program stores side by side into the next convolution's input.
    node("Conv", {"p", "we1"}, "e1");
    node("Relu", {"e1"}, "re1");
    node("Conv", {"p", "we3"}, "e3", pad1);
    node("Relu", {"e3"}, "re3");
    node("Concat", {"re1", "re3"}, "cat", {{"axis", Int(1)}});
    node("Conv", {"cat", "w3"}, "c3");
    // A 3x3 convolution of 2 channels, which alone goes through the host's im2col (fewer passes
    // than windows): in a whole-network program through windows, reading its input in place.
    // A dense layer on the pool's 8 x 3 x 3 pixels flattened: K taken channels last.
    node("Flatten", {"p"}, "pf");
    node("Gemm", {"pf", "fc2"}, "z");
    node("Conv", {"p", "wt0"}, "t0");
    node("Conv", {"t0", "wt1"}, "thin", pad1);
    node("GlobalAveragePool", {"c3"}, "gap");
    node("Flatten", {"gap"}, "f");
    node("Gemm", {"f", "fc", "fcb"}, "y");
    g.outputs = {Input("y", {}), Input("side", {}), Input("thin", {}), Input("z", {}),
                 Input("p", {})};
    const Tensor x = Random(rng, {batch, 8, 6, 6});
    const net::Plan plan = net::Plan::Build(g, {{"x", x.shape}}, num::Mode::kIeee, true, 512);
    // On the 3x5 array a convolution's input tiles (3 columns) are not its producer's (5): the
    // program ends there and the next one's host writes that input.
    {
      tb::accel::ModelSim narrow(tb::accel::ConfigFromBuild("accel_3x5"));
      const net::Plan p35 = net::Plan::Build(g, {{"x", x.shape}}, num::Mode::kIeee, true,
                                             narrow.config().machine.vmem_depth);
      tb::accel::NetRunner a(narrow, false), b(narrow, false);
      b.SetWholeNetwork(true);
      const auto wa = a.Run(p35, {{"x", x}}), wb = b.Run(p35, {{"x", x}});
      ExpectBits(wb.at("y"), wa.at("y"), "3x5 whole");
      ExpectBits(wb.at("side"), wa.at("side"), "3x5 whole, side");
      EXPECT_GT(b.programs().size(), transpose ? 2u : 1u);
      EXPECT_LT(b.programs().size(), size_t(a.Total().jobs));
    }
    auto cfg = tb::accel::ConfigFromName("8x8_1ch");
    cfg.machine.vmem_depth = 512;
    tb::accel::ModelSim sim(cfg);
    tb::accel::NetRunner jobs(sim, false);
    const auto want = jobs.Run(plan, {{"x", x}});
    tb::accel::NetRunner whole(sim, false);
    whole.SetWholeNetwork(true);
    const auto got = whole.Run(plan, {{"x", x}});
    ExpectBits(got.at("y"), want.at("y"), "one program vs job by job");
    ExpectBits(got.at("side"), want.at("side"), "one program vs job by job, side");
    ExpectBits(got.at("thin"), want.at("thin"), "one program vs job by job, thin");
    ExpectBits(got.at("z"), want.at("z"), "one program vs job by job, z");
    // z: the contract's MACs over K in channels-last order, k' = s·8 + c for ONNX's c·9 + s.
    {
      const Tensor& p = got.at("p");
      const auto& fc2 = g.constants.at("fc2").f;
      for (int64_t n = 0; n < batch; ++n) {
        for (int64_t j = 0; j < 5; ++j) {
          uint32_t acc = 0;
          for (int64_t sp = 0; sp < 9; ++sp) {
            for (int64_t ch = 0; ch < 8; ++ch) {
              acc = num::Mac(B16(p.f[size_t((n * 8 + ch) * 9 + sp)]),
                             B16(fc2[size_t((ch * 9 + sp) * 5 + j)]), acc, num::Mode::kIeee);
            }
          }
          ASSERT_EQ(F32Bits(got.at("z").f[size_t(n * 5 + j)]), acc) << "z " << n << " " << j;
        }
      }
    }
    const int n_jobs = jobs.Total().jobs;
    // conv, conv + add + relu (the residual in the accumulators, read where conv 1 stored it),
    // conv, pool, conv, conv, conv, dense, conv, conv, pool, dense (and gap, sigmoid, mul)
    EXPECT_EQ(n_jobs, se ? 15 : 12);
    EXPECT_EQ(plan.steps()[1].residual, "r1");
    ASSERT_EQ(whole.programs().size(), transpose ? 2u : 1u);
    int linked = 0;
    for (const auto& p : whole.programs()) linked += p.stats.jobs;
    EXPECT_EQ(linked, n_jobs);
    EXPECT_EQ(whole.Total().jobs, n_jobs);
    EXPECT_EQ(whole.Total().perf.macs, plan.Macs());
    // The program computed every job's output itself: the first program's outputs are checked
    // (elements counted), bf16 copies included.
    EXPECT_GT(whole.programs()[0].stats.checked, 0u);
    EXPECT_EQ(whole.programs()[0].stats.programs, 1);
    // A job whose input the host computes from a job's output starts the second program.
    if (transpose) EXPECT_EQ(plan.steps()[size_t(whole.programs()[1].first_step)].op, "MaxPool");
    // The Concat is address arithmetic in the program (its reader read the pieces placed), not
    // a host step; job by job it is the host's.
    int cats = 0;
    for (const auto& s : plan.steps()) {
      if (s.op != "Concat") continue;
      ++cats;
      EXPECT_TRUE(whole.steps()[size_t(s.index)].addressed) << s.label;
      EXPECT_FALSE(jobs.steps()[size_t(s.index)].addressed) << s.label;
    }
    EXPECT_EQ(cats, 1);
    const std::string table =
        tb::accel::FormatNetTable(plan, whole.steps(), cfg, false, whole.programs());
    EXPECT_NE(table.find("1 address arithmetic in the program"), std::string::npos) << table;
  }
}

// A Concat whose pieces come from two programs (a host step between their producers): the
// reader starts a third program, whose host writes the concatenation; it is never written by the
// host into the program that computes one of its pieces.
TEST(NetWhole, ConcatAcrossProgramsStartsAProgram) {
  tb::Rng rng(test::TestSeed());
  Graph g;
  g.opset = 13;
  g.inputs = {Input("x", {1, 8, 5, 5})};
  const auto node = [&](const std::string& op, std::vector<std::string> in, const std::string& out,
                        std::map<std::string, net::Attr> attrs = {}) {
    AddNode(g, op, std::move(in), out, std::move(attrs));
  };
  g.constants["w1"] = Random(rng, {8, 8, 1, 1}, 0.3);
  g.constants["w2"] = Random(rng, {8, 8, 1, 1}, 0.3);
  g.constants["w3"] = Random(rng, {4, 16, 1, 1}, 0.3);
  g.constants["w0"] = Random(rng, {8, 8, 1, 1}, 0.3);
  node("Conv", {"x", "w0"}, "p0");
  node("Conv", {"x", "w1"}, "p1");
  node("Transpose", {"p0"}, "t", {{"perm", Ints({0, 1, 3, 2})}});  // a host step on a job's output
  node("Conv", {"t", "w2"}, "p2");
  node("Concat", {"p1", "p2"}, "cat", {{"axis", Int(1)}});
  node("Conv", {"cat", "w3"}, "y");
  g.outputs = {Input("y", {})};
  const Tensor x = Random(rng, {1, 8, 5, 5});
  const net::Plan plan = net::Plan::Build(g, {{"x", x.shape}}, num::Mode::kIeee, true, 512);
  auto cfg = tb::accel::ConfigFromName("8x8_1ch");
  cfg.machine.vmem_depth = 512;
  tb::accel::ModelSim sim(cfg);
  tb::accel::NetRunner jobs(sim, false), whole(sim, false);
  whole.SetWholeNetwork(true);
  ExpectBits(whole.Run(plan, {{"x", x}}).at("y"), jobs.Run(plan, {{"x", x}}).at("y"), "whole");
  ASSERT_EQ(whole.programs().size(), 3u);
  EXPECT_EQ(plan.steps()[size_t(whole.programs()[2].first_step)].label, "y");
  // The host wrote the concatenation: a host step, not address arithmetic.
  for (const auto& s : plan.steps()) {
    if (s.op == "Concat") EXPECT_FALSE(whole.steps()[size_t(s.index)].addressed);
  }
}

}  // namespace
