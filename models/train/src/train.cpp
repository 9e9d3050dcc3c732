// SPDX-License-Identifier: Apache-2.0
// The golden training loop (tpu/train.h). Compiled with -ffp-contract=off: every float and double
// operation below is rounded on its own, as docs/numerics.md ("Training") defines them.
#include "tpu/train.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <stdexcept>

#include "train_util.h"

namespace tpu::train {

using namespace detail;

namespace {

void Need(bool ok, const std::string& what) {
  if (!ok) throw std::invalid_argument(what);
}

// The forward pass: X_l for every layer (X_0 the rounded input) and the logits.
struct Forward {
  std::vector<std::vector<uint16_t>> x;
  std::vector<std::vector<uint16_t>> wb;  // each layer's bf16 weights, for its input gradient
  std::vector<float> logits;
  uint64_t macs = 0;
};

Forward RunForward(const Mlp& m, const std::vector<float>& x, int batch, const net::AccelFn& run,
                   num::Mode mode) {
  const auto& ls = m.layers;
  Need(!ls.empty(), "train: the MLP has no layers");
  Need(batch >= 1 && x.size() == size_t(batch) * size_t(ls[0].in),
       fmt::format("train: {} input values for a batch of {} rows of {}", x.size(), batch,
                   ls[0].in));
  Forward f;
  f.x.push_back(ToBf16(x, mode));
  for (size_t l = 0; l < ls.size(); ++l) {
    const Dense& d = ls[l];
    const bool last = l + 1 == ls.size();
    net::AccelJob job;
    job.m = batch, job.k = d.in, job.n = d.out;
    job.a = f.x.back();
    job.b = ToBf16(d.w, mode);
    job.bias.resize(d.b.size());
    for (size_t j = 0; j < d.b.size(); ++j) job.bias[j] = Bits(d.b[j]);
    job.relu = !last;
    job.out = last ? host::OutFormat::kFp32 : host::OutFormat::kBf16;
    const std::vector<uint32_t> y = run(job, kForward);
    f.macs += job.Macs();
    f.wb.push_back(std::move(job.b));
    if (last) {
      f.logits = Floats(y);
    } else {
      f.x.emplace_back(y.begin(), y.end());  // bf16 bits in the low half
    }
  }
  return f;
}

}  // namespace

Mlp MlpFromGraph(const net::Graph& g, MlpBinding* binding) {
  if (g.inputs.size() != 1 || g.outputs.size() != 1) {
    throw net::Error(
        fmt::format("train: the graph has {} inputs and {} outputs; an MLP has one "
                    "of each",
                    g.inputs.size(), g.outputs.size()));
  }
  MlpBinding b;
  b.input = g.inputs[0].name;
  b.output = g.outputs[0].name;
  Mlp m;
  std::vector<bool> relu;
  std::string cur = b.input;
  auto constant = [&](const net::Node& n, size_t i, int rank) -> const net::Tensor& {
    if (i >= n.inputs.size() || !g.constants.count(n.inputs[i])) {
      Fail(n, fmt::format("input {} must be an initializer", i));
    }
    const net::Tensor& t = g.constants.at(n.inputs[i]);
    if (t.is_int || int(t.shape.size()) != rank) {
      Fail(n, fmt::format("initializer '{}' must be a {}-D float tensor", n.inputs[i], rank));
    }
    return t;
  };
  auto add_layer = [&](const net::Node& n, const net::Tensor& w, bool trans_b,
                       const net::Tensor& bias, const std::string& bias_name) {
    Dense d;
    d.in = int(trans_b ? w.shape[1] : w.shape[0]);
    d.out = int(trans_b ? w.shape[0] : w.shape[1]);
    if (bias.shape[0] != d.out)
      Fail(n, fmt::format("a bias of {} for {} outputs", bias.shape[0], d.out));
    if (!m.layers.empty() && m.layers.back().out != d.in) {
      Fail(n, fmt::format("{} inputs after a layer of {} outputs", d.in, m.layers.back().out));
    }
    d.w.resize(size_t(d.in) * size_t(d.out));
    for (int k = 0; k < d.in; ++k) {
      for (int j = 0; j < d.out; ++j) {
        d.w[size_t(k) * size_t(d.out) + size_t(j)] =
            trans_b ? w.f[size_t(j) * size_t(d.in) + size_t(k)]
                    : w.f[size_t(k) * size_t(d.out) + size_t(j)];
      }
    }
    d.b = bias.f;
    m.layers.push_back(std::move(d));
    relu.push_back(false);
    b.layers.push_back({n.inputs[1], bias_name, trans_b});
  };
  const std::string kWhat = "training takes MLPs: Flatten, Gemm or MatMul + Add, Relu";
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    const net::Node& n = g.nodes[i];
    if (n.inputs.empty() || n.inputs[0] != cur)
      Fail(n, "not on the chain from the input (" + kWhat + ")");
    if (n.op == "Flatten" || n.op == "Reshape" || n.op == "Identity") {
      if (!m.layers.empty()) Fail(n, "only before the first layer (" + kWhat + ")");
    } else if (n.op == "Gemm") {
      if (FloatAttr(n, "alpha", 1) != 1.0f || FloatAttr(n, "beta", 1) != 1.0f ||
          IntAttr(n, "transA", 0) != 0) {
        Fail(n, "alpha and beta must be 1 and transA 0");
      }
      if (n.inputs.size() < 3 || n.inputs[2].empty()) Fail(n, "needs a bias (input C)");
      add_layer(n, constant(n, 1, 2), IntAttr(n, "transB", 0) != 0, constant(n, 2, 1), n.inputs[2]);
    } else if (n.op == "MatMul") {
      const net::Tensor& w = constant(n, 1, 2);
      if (i + 1 >= g.nodes.size() || g.nodes[i + 1].op != "Add" ||
          g.nodes[i + 1].inputs.size() != 2 || g.nodes[i + 1].inputs[0] != n.outputs[0]) {
        Fail(n, "must be followed by an Add of its bias");
      }
      const net::Node& a = g.nodes[++i];
      add_layer(n, w, false, constant(a, 1, 1), a.inputs[1]);
      cur = a.outputs[0];
      continue;
    } else if (n.op == "Relu") {
      if (m.layers.empty() || relu.back()) Fail(n, "a Relu must follow a layer (" + kWhat + ")");
      relu.back() = true;
    } else {
      Fail(n, kWhat);
    }
    cur = n.outputs[0];
  }
  if (m.layers.empty()) throw net::Error("train: the graph has no Gemm or MatMul layer");
  if (cur != b.output)
    throw net::Error(
        fmt::format("train: the chain ends in '{}', not the graph output '{}'", cur, b.output));
  for (size_t l = 0; l < relu.size(); ++l) {
    if (relu[l] != (l + 1 < relu.size())) {
      throw net::Error(
          fmt::format("train: layer {} {} a Relu; every layer but the last (the logits) "
                      "needs one",
                      l, relu[l] ? "has" : "lacks"));
    }
  }
  int64_t features = 1;
  const net::Shape& in = g.inputs[0].shape;
  for (size_t i = 1; i < in.size(); ++i) features *= in[i];
  if (in.size() < 2 || features != m.layers[0].in) {
    throw net::Error(fmt::format("train: input '{}' {} does not give rows of {} features", b.input,
                                 net::ShapeText(in), m.layers[0].in));
  }
  if (binding != nullptr) *binding = std::move(b);
  return m;
}

std::map<std::string, net::Tensor> MlpInitializers(const Mlp& m, const MlpBinding& binding) {
  std::map<std::string, net::Tensor> r;
  for (size_t l = 0; l < m.layers.size() && l < binding.layers.size(); ++l) {
    const Dense& d = m.layers[l];
    const auto& bl = binding.layers[l];
    net::Tensor w;
    w.shape = bl.trans_b ? net::Shape{d.out, d.in} : net::Shape{d.in, d.out};
    w.f.resize(d.w.size());
    for (int k = 0; k < d.in; ++k) {
      for (int j = 0; j < d.out; ++j) {
        const float v = d.w[size_t(k) * size_t(d.out) + size_t(j)];
        w.f[bl.trans_b ? size_t(j) * size_t(d.in) + size_t(k)
                       : size_t(k) * size_t(d.out) + size_t(j)] = v;
      }
    }
    net::Tensor b;
    b.shape = {d.out};
    b.f = d.b;
    r[bl.w] = std::move(w);
    r[bl.b] = std::move(b);
  }
  return r;
}

std::vector<int> Mlp::Sizes() const {
  std::vector<int> s;
  if (layers.empty()) return s;
  s.push_back(layers[0].in);
  for (const auto& d : layers) s.push_back(d.out);
  return s;
}

uint64_t Mlp::ForwardMacs(int batch) const {
  uint64_t n = 0;
  for (const auto& d : layers) n += uint64_t(batch) * d.in * d.out;
  return n;
}

Mlp InitMlp(const std::vector<int>& sizes, uint64_t seed) {
  Need(sizes.size() >= 2, "train: an MLP needs an input size and at least one layer");
  for (int s : sizes) Need(s >= 1, fmt::format("train: layer size {} (must be at least 1)", s));
  uint64_t state = WeightStream(seed);
  Mlp m;
  for (size_t l = 0; l + 1 < sizes.size(); ++l) {
    Dense d;
    d.in = sizes[l], d.out = sizes[l + 1];
    const double limit = std::sqrt(6.0 / double(d.in));
    d.w.resize(size_t(d.in) * size_t(d.out));
    for (auto& w : d.w) w = float((2.0 * Uniform(state) - 1.0) * limit);
    d.b.assign(size_t(d.out), 0.0f);
    m.layers.push_back(std::move(d));
  }
  return m;
}

std::vector<int> EpochOrder(int n, uint64_t seed, int epoch) {
  std::vector<int> order(size_t(std::max(n, 0)));
  for (int i = 0; i < n; ++i) order[size_t(i)] = i;
  uint64_t state = seed + uint64_t(epoch);
  for (int i = n - 1; i > 0; --i) {
    const int j = int(SplitMix64(state) % uint64_t(i + 1));
    std::swap(order[size_t(i)], order[size_t(j)]);
  }
  return order;
}

namespace {

using host::VectorB;
using host::VectorStage;
using isa::VectorOp;

// Elementwise vector work on `size` elements: A and B (B empty when no stage reads it) as one
// tensor of the machine's lanes wide (the rows past `size` +0), a job of kind kVector where the
// machine has the vector unit, else host::VectorOnHost: the same bits.
std::vector<uint32_t> Elementwise(size_t size, const std::vector<VectorStage>& stages,
                                  std::vector<uint32_t> a, std::vector<uint32_t> b,
                                  const net::AccelFn& run, int pass, num::Mode mode,
                                  VectorUnit vu) {
  if (size == 0) return {};
  const size_t n = size_t(std::max(vu.lanes, 1)), m = (size + n - 1) / n;
  Need(m <= size_t(std::numeric_limits<int>::max()), "train: a vector step too large");
  a.resize(m * n, 0);
  if (!b.empty()) b.resize(m * n, 0);
  std::vector<uint32_t> r;
  if (run && vu.vmem_depth > 0) {
    net::AccelJob job;
    job.kind = net::AccelJob::Kind::kVector;
    job.m = int(m), job.n = int(n);
    job.stages = stages;
    job.va = std::move(a);
    job.vb = std::move(b);
    r = run(job, pass);
  } else {
    r = host::VectorOnHost(int(m), int(n), stages, std::move(a), b, mode);
  }
  r.resize(size);
  return r;
}

std::vector<uint32_t> AllBits(const std::vector<float>& v) {
  std::vector<uint32_t> r(v.size());
  for (size_t i = 0; i < v.size(); ++i) r[i] = Bits(v[i]);
  return r;
}

}  // namespace

float SoftmaxCrossEntropy(const std::vector<float>& logits, const std::vector<int32_t>& y, int n,
                          std::vector<float>* grad, num::Mode mode, const net::AccelFn& run,
                          VectorUnit vu) {
  const int batch = int(y.size());
  Need(n >= 1 && batch >= 1 && logits.size() == size_t(batch) * size_t(n),
       fmt::format("train: {} logits for {} labels of {} classes", logits.size(), batch, n));
  // The loss (reported): binary64.
  double total = 0;
  for (int i = 0; i < batch; ++i) {
    const int32_t label = y[size_t(i)];
    Need(label >= 0 && label < n,
         fmt::format("train: label {} of row {} is outside 0..{}", label, i, n - 1));
    const float* z = &logits[size_t(i) * size_t(n)];
    double mx = z[0];
    for (int j = 1; j < n; ++j) mx = std::max(mx, double(z[j]));
    double s = 0;
    for (int j = 0; j < n; ++j) s += std::exp(double(z[j]) - mx);
    total += -((double(z[label]) - mx) - std::log(s));
  }
  // The gradient: the contract's vector softmax of each row (the rows are the slices: stored
  // classes × batch), then (p - onehot)·fp32(1/B).
  const size_t size = logits.size();
  std::vector<uint32_t> zt(size), onehot(size, 0);
  for (int i = 0; i < batch; ++i) {
    for (int j = 0; j < n; ++j) zt[size_t(j) * batch + i] = Bits(logits[size_t(i) * n + j]);
    onehot[size_t(y[size_t(i)]) * batch + i] = Bits(1.0f);
  }
  std::vector<uint32_t> p;
  if (run && vu.vmem_depth >= host::SoftmaxRows(n)) {
    net::AccelJob job;
    job.kind = net::AccelJob::Kind::kSoftmax;
    job.m = n, job.n = batch;
    job.va = std::move(zt);
    p = run(job, kBackward);
  } else {
    p = host::SoftmaxOnHost(n, batch, false, zt, mode);
  }
  const float inv = 1.0f / float(batch);
  const std::vector<uint32_t> dzt = Elementwise(
      size, {{VectorOp::kSub, VectorB::kTensor, 0}, {VectorOp::kMul, VectorB::kScalar, Bits(inv)}},
      std::move(p), std::move(onehot), run, kBackward, mode, vu);
  grad->assign(size, 0.0f);
  for (int i = 0; i < batch; ++i) {
    for (int j = 0; j < n; ++j) (*grad)[size_t(i) * n + j] = FromBits(dzt[size_t(j) * batch + i]);
  }
  return Canon(float(total / double(batch)));
}

std::vector<float> ReluBackward(const std::vector<float>& x, const std::vector<float>& dy,
                                num::Mode mode, const net::AccelFn& run, VectorUnit vu) {
  Need(x.size() == dy.size(),
       fmt::format("train: relu's mask of {} values for {} gradients", x.size(), dy.size()));
  return Floats(Elementwise(x.size(),
                            {{VectorOp::kGt, VectorB::kScalar, 0},
                             {VectorOp::kMul, VectorB::kTensor, 0},
                             {VectorOp::kAdd, VectorB::kScalar, 0}},
                            AllBits(x), AllBits(dy), run, kBackward, mode, vu));
}

void SgdUpdate(const std::vector<Param>& params, float lr, float momentum, num::Mode mode,
               const net::AccelFn& run, VectorUnit vu) {
  std::vector<uint32_t> w, v, g;
  for (const Param& p : params) {
    Need(p.g->size() == p.w->size(), "train: a gradient of the wrong size");
    if (momentum != 0.0f && p.v->size() != p.w->size()) p.v->assign(p.w->size(), 0.0f);
    for (size_t i = 0; i < p.w->size(); ++i) {
      w.push_back(Bits((*p.w)[i]));
      g.push_back(Bits((*p.g)[i]));
      if (momentum != 0.0f) v.push_back(Bits((*p.v)[i]));
    }
  }
  const size_t size = w.size();
  if (momentum != 0.0f) {  // v = v·momentum + g
    v = Elementwise(
        size,
        {{VectorOp::kMul, VectorB::kScalar, Bits(momentum)}, {VectorOp::kAdd, VectorB::kTensor, 0}},
        std::move(v), std::move(g), run, kUpdate, mode, vu);
  }
  // w = step·(-lr) + w: w - lr·step, each operation rounded.
  w = Elementwise(
      size, {{VectorOp::kMul, VectorB::kScalar, Bits(-lr)}, {VectorOp::kAdd, VectorB::kTensor, 0}},
      momentum != 0.0f ? v : g, std::move(w), run, kUpdate, mode, vu);
  size_t at = 0;
  for (const Param& p : params) {
    for (size_t i = 0; i < p.w->size(); ++i, ++at) {
      (*p.w)[i] = FromBits(w[at]);
      if (momentum != 0.0f) (*p.v)[i] = FromBits(v[at]);
    }
  }
}

ConvGradients ConvBackward(const host::ConvShape& s, const std::vector<uint16_t>& x,
                           const std::vector<uint16_t>& w, const std::vector<float>& dy,
                           bool need_dx, const net::AccelFn& run, num::Mode mode) {
  const int M = s.M(), K = s.K(), pixels_in = s.n * s.h * s.w;
  Need(x.size() == size_t(pixels_in) * size_t(s.cin) && w.size() == size_t(K) * size_t(s.cout) &&
           dy.size() == size_t(M) * size_t(s.cout),
       fmt::format("train: convolution gradients of {} inputs, {} weights, {} output gradients "
                   "for a {}x{}x{}x{} -> {} convolution",
                   x.size(), w.size(), dy.size(), s.n, s.h, s.w, s.cin, s.cout));
  ConvGradients r;
  const std::vector<uint16_t> g = ToBf16(dy, mode);
  const int OH = s.OutH(), OW = s.OutW();
  if (s.stride == 1) {
    // dW = a convolution whose images are x's Cin channels (H × W, the batch as their channels,
    // padded as the forward pass) and whose kernel is G (OH × OW taps, the batch in, Cout out):
    // output pixel (i, j) of image ci is dW's row (i·kw + j)·Cin + ci. The machine reads x
    // through its windows, not the host's im2col (kh·kw times x's bytes).
    host::ConvShape t;
    t.n = s.cin, t.h = s.h, t.w = s.w, t.cin = s.n, t.cout = s.cout;
    t.kh = OH, t.kw = OW, t.stride = 1, t.pad = s.pad;
    std::vector<uint16_t> xt(x.size()), gt(g.size());
    for (int b = 0; b < s.n; ++b)
      for (int p = 0; p < s.h * s.w; ++p)
        for (int c = 0; c < s.cin; ++c)
          xt[(size_t(c) * s.h * s.w + p) * s.n + b] = x[(size_t(b) * s.h * s.w + p) * s.cin + c];
    for (int b = 0; b < s.n; ++b)
      for (int p = 0; p < OH * OW; ++p)
        for (int co = 0; co < s.cout; ++co)
          gt[(size_t(p) * s.n + b) * s.cout + co] = g[(size_t(b) * OH * OW + p) * s.cout + co];
    net::AccelJob jw;
    jw.kind = net::AccelJob::Kind::kConv;
    jw.conv = t;
    jw.m = t.M(), jw.k = t.K(), jw.n = t.cout;
    jw.a = std::move(xt);
    jw.b = std::move(gt);
    const std::vector<uint32_t> dw = run(jw, kBackward);
    r.macs += jw.Macs();
    r.dw.resize(dw.size());
    for (int c = 0; c < s.cin; ++c)
      for (int ij = 0; ij < s.kh * s.kw; ++ij)
        for (int co = 0; co < s.cout; ++co)
          r.dw[(size_t(ij) * s.cin + c) * s.cout + co] =
              FromBits(dw[(size_t(c) * s.kh * s.kw + ij) * s.cout + co]);
  } else {
    // dW = im2col(x)ᵀ·G: the stored im2col matrix (M × K) is the transposed A of a K × M × Cout
    // GEMM.
    net::AccelJob jw;
    jw.m = K, jw.k = M, jw.n = s.cout;
    jw.a = host::Im2col(s, x);
    jw.b = g;
    jw.trans.a = true;
    const std::vector<uint32_t> dw = run(jw, kBackward);
    r.macs += jw.Macs();
    r.dw = Floats(dw);
  }
  r.db = ColumnSums(g, M, s.cout);
  if (!need_dx) return r;
  if (s.stride == 1 && s.kh == s.kw && s.pad <= s.kh - 1) {
    // dX = the convolution of G, padded by k - 1 - pad, with W turned by 180° and its channels
    // swapped (HWIO [i][j][co][ci] = W[kh-1-i][kw-1-j][ci][co]): the machine's own convolution
    // job (windows where it can), no col2im on the host.
    host::ConvShape t;
    t.n = s.n, t.h = s.OutH(), t.w = s.OutW(), t.cin = s.cout, t.cout = s.cin;
    t.kh = s.kh, t.kw = s.kw, t.stride = 1, t.pad = s.kh - 1 - s.pad;
    std::vector<uint16_t> wt(w.size());
    for (int i = 0; i < s.kh; ++i)
      for (int j = 0; j < s.kw; ++j)
        for (int co = 0; co < s.cout; ++co)
          for (int ci = 0; ci < s.cin; ++ci)
            wt[((size_t(i) * s.kw + j) * s.cout + co) * s.cin + ci] =
                w[((size_t(s.kh - 1 - i) * s.kw + (s.kw - 1 - j)) * s.cin + ci) * s.cout + co];
    net::AccelJob jx;
    jx.kind = net::AccelJob::Kind::kConv;
    jx.conv = t;
    jx.m = t.M(), jx.k = t.K(), jx.n = t.cout;
    jx.a = g;
    jx.b = std::move(wt);
    r.dx = Floats(run(jx, kBackward));
    r.macs += jx.Macs();
    return r;
  }
  // Else (a stride, a rectangular kernel, pads past the kernel) dX's im2col view = G·Wᵀ: the stored
  // HWIO W (K × Cout) is the transposed B of an M × Cout × K GEMM; col2im sums each input element's
  // taps.
  net::AccelJob jx;
  jx.m = M, jx.k = s.cout, jx.n = K;
  jx.a = g;
  jx.b = w;
  jx.trans.b = true;
  const std::vector<uint32_t> dcol = run(jx, kBackward);
  r.macs += jx.Macs();
  r.dx.assign(size_t(pixels_in) * size_t(s.cin), 0.0f);
  for (int p = 0; p < M; ++p) {
    const int b = p / (OH * OW), oh = p / OW % OH, ow = p % OW;
    for (int i = 0; i < s.kh; ++i) {
      for (int j = 0; j < s.kw; ++j) {
        const int ih = oh * s.stride - s.pad + i, iw = ow * s.stride - s.pad + j;
        if (ih < 0 || ih >= s.h || iw < 0 || iw >= s.w) continue;  // a padded tap: no input
        for (int c = 0; c < s.cin; ++c) {
          float& d = r.dx[((size_t(b) * s.h + ih) * s.w + iw) * s.cin + c];
          d = d + FromBits(dcol[size_t(p) * size_t(K) + (size_t(i) * s.kw + j) * s.cin + c]);
        }
      }
    }
  }
  for (auto& v : r.dx) v = Canon(v);
  return r;
}

std::vector<float> Logits(const Mlp& m, const std::vector<float>& x, int batch,
                          const net::AccelFn& run, num::Mode mode) {
  return RunForward(m, x, batch, run, mode).logits;
}

Gradients Backprop(const Mlp& m, const std::vector<float>& x, const std::vector<int32_t>& y,
                   const net::AccelFn& run, num::Mode mode, VectorUnit vu) {
  const int batch = int(y.size());
  Forward f = RunForward(m, x, batch, run, mode);
  Gradients gr;
  StepResult& res = gr.result;
  res.forward_macs = f.macs;
  const int classes = m.layers.back().out;
  std::vector<float> dz;
  res.loss = SoftmaxCrossEntropy(f.logits, y, classes, &dz, mode, run, vu);
  for (int i = 0; i < batch; ++i) {
    const float* z = &f.logits[size_t(i) * size_t(classes)];
    int best = 0;
    for (int j = 1; j < classes; ++j) {
      if (z[j] > z[best]) best = j;
    }
    res.correct += best == y[size_t(i)];
  }
  gr.dw.resize(m.layers.size());
  gr.db.resize(m.layers.size());
  std::vector<uint16_t> g = ToBf16(dz, mode);  // G_{L-1}
  for (size_t l = m.layers.size(); l-- > 0;) {
    const Dense& d = m.layers[l];
    // dW = X_lᵀ·G_l: the stored X_l (batch × in) is the transposed A of an in × batch × out GEMM.
    net::AccelJob jw;
    jw.m = d.in, jw.k = batch, jw.n = d.out;
    jw.a = f.x[l];
    jw.b = g;
    jw.trans.a = true;
    const std::vector<uint32_t> dw = run(jw, kBackward);
    res.backward_macs += jw.Macs();
    gr.dw[l] = Floats(dw);
    gr.db[l] = ColumnSums(g, batch, d.out);
    if (l == 0) break;
    // dX = G_l·W_lᵀ: the stored W_l (in × out) is the transposed B of a batch × out × in GEMM.
    net::AccelJob jx;
    jx.m = batch, jx.k = d.out, jx.n = d.in;
    jx.a = g;
    jx.b = f.wb[l];
    jx.trans.b = true;
    jx.out = host::OutFormat::kBf16;
    const std::vector<uint32_t> dx = run(jx, kBackward);
    res.backward_macs += jx.Macs();
    // Relu's mask on the bf16 values as fp32 (the result is one of them, or +0: exact in bf16).
    const std::vector<uint16_t>& xl = f.x[l];
    std::vector<float> xf(xl.size()), dxf(dx.size());
    for (size_t i = 0; i < xl.size(); ++i) xf[i] = FromBits(num::Bf16ToFp32(xl[i]));
    for (size_t i = 0; i < dx.size(); ++i) dxf[i] = FromBits(num::Bf16ToFp32(uint16_t(dx[i])));
    g = ToBf16(ReluBackward(xf, dxf, mode, run, vu), mode);
  }
  return gr;
}

StepResult Step(Mlp& m, const Recipe& r, const std::vector<float>& x, const std::vector<int32_t>& y,
                const net::AccelFn& run, num::Mode mode, VectorUnit vu) {
  Gradients gr = Backprop(m, x, y, run, mode, vu);
  std::vector<Param> params;
  for (size_t l = 0; l < m.layers.size(); ++l) {
    Dense& d = m.layers[l];
    params.push_back({&d.w, &d.v_w, &gr.dw[l]});
    params.push_back({&d.b, &d.v_b, &gr.db[l]});
  }
  SgdUpdate(params, r.lr, r.momentum, mode, run, vu);
  return gr.result;
}

}  // namespace tpu::train
