// SPDX-License-Identifier: Apache-2.0
// Training a network given as an ONNX graph (tpu/train.h, train::Network): convolutions and
// dense layers on the accelerator, the rest on the host, every host step as docs/numerics.md
// ("Training", networks) defines it. Compiled with -ffp-contract=off.
#include <fmt/format.h>

#include <cmath>
#include <cstring>
#include <set>
#include <stdexcept>

#include "tpu/train.h"
#include "train_util.h"

namespace tpu::train {

using namespace detail;

namespace {

// NCHW <-> NHWC (pixel rows of channels).
std::vector<float> ToNhwc(const std::vector<float>& x, int n, int c, int h, int w) {
  std::vector<float> r(x.size());
  for (int b = 0; b < n; ++b)
    for (int ch = 0; ch < c; ++ch)
      for (int p = 0; p < h * w; ++p)
        r[(size_t(b) * h * w + p) * c + ch] = x[(size_t(b) * c + ch) * h * w + p];
  return r;
}
std::vector<float> ToNchw(const std::vector<float>& x, int n, int c, int h, int w) {
  std::vector<float> r(x.size());
  for (int b = 0; b < n; ++b)
    for (int ch = 0; ch < c; ++ch)
      for (int p = 0; p < h * w; ++p)
        r[(size_t(b) * c + ch) * h * w + p] = x[(size_t(b) * h * w + p) * c + ch];
  return r;
}

}  // namespace

// One node of the network, with what its forward pass keeps for the backward one.
struct Network::Op {
  enum class Kind { kConv, kGemm, kBatchNorm, kRelu, kAdd, kMaxPool, kGlobalAvgPool, kFlatten };
  Kind kind;
  const net::Node* node = nullptr;
  std::vector<std::string> in;  // value names (data inputs only)
  std::string out;
  // Parameters by initializer name ("" when absent): conv/gemm weight and bias, BN scale/bias
  // and running mean/var.
  std::string w, b, mean, var;
  bool trans_b = false;            // Gemm: the weight is N × K
  host::ConvShape conv;            // n is set per batch
  int kh = 0, kw = 0, stride = 1;  // max pooling
  float eps = 1e-5f, momentum = 0.9f;
};

// The forward pass's values and caches of one batch.
struct Network::Trace {
  std::map<std::string, net::Tensor> v;
  std::map<const Op*, std::vector<uint16_t>> xb, wb;  // accelerator operands (bf16)
  std::map<const Op*, std::vector<double>> xhat;      // BN: normalized input
  std::map<const Op*, std::vector<double>> inv;       // BN: 1/sqrt(var + eps) per channel
  std::map<const Op*, std::vector<double>> bmean, bvar;
  std::map<const Op*, std::vector<int64_t>> argmax;  // max pooling
  uint64_t macs = 0;
};

Network::Network() = default;
Network::Network(Network&&) noexcept = default;
Network& Network::operator=(Network&&) noexcept = default;
Network::~Network() = default;

Network Network::FromGraph(const net::Graph& g) {
  Network nw;
  if (g.inputs.size() != 1 || g.outputs.size() != 1) {
    throw net::Error(
        fmt::format("train: the graph has {} inputs and {} outputs; training takes "
                    "one of each",
                    g.inputs.size(), g.outputs.size()));
  }
  nw.input_ = g.inputs[0].name;
  nw.output_ = g.outputs[0].name;
  nw.input_shape_ = g.inputs[0].shape;
  if (nw.input_shape_.size() < 2) {
    throw net::Error(fmt::format("train: input '{}' {} has no batch dimension", nw.input_,
                                 net::ShapeText(nw.input_shape_)));
  }
  for (size_t i = 1; i < nw.input_shape_.size(); ++i) {
    if (nw.input_shape_[i] < 1) {
      throw net::Error(
          fmt::format("train: input '{}' {}: every dimension but the batch must be "
                      "known",
                      nw.input_, net::ShapeText(nw.input_shape_)));
    }
  }
  for (const auto& [name, t] : g.constants) {
    if (!t.is_int) nw.params_[name] = t;
  }
  auto param = [&](const net::Node& n, size_t i, size_t rank) -> std::string {
    if (i >= n.inputs.size() || n.inputs[i].empty()) return "";
    const auto it = nw.params_.find(n.inputs[i]);
    if (it == nw.params_.end() || it->second.shape.size() != rank) {
      Fail(n, fmt::format("input {} must be a {}-D float initializer", i, rank));
    }
    return n.inputs[i];
  };
  const std::string kWhat =
      "training takes Conv, BatchNormalization, Relu, Add, MaxPool, GlobalAveragePool, Flatten "
      "and Gemm";
  for (const net::Node& n : g.nodes) {
    Op op;
    op.node = &n;
    op.out = n.outputs.at(0);
    if (n.outputs.size() != 1) Fail(n, "one output only (no training-mode extra outputs)");
    if (n.op == "Conv") {
      op.kind = Op::Kind::kConv;
      op.w = param(n, 1, 4);
      op.b = param(n, 2, 1);
      if (op.w.empty()) Fail(n, "needs its weights as an initializer");
      const auto& ws = nw.params_.at(op.w).shape;
      const auto pads = IntsAttr(n, "pads"), strides = IntsAttr(n, "strides"),
                 dil = IntsAttr(n, "dilations");
      if (IntAttr(n, "group", 1) != 1) Fail(n, "groups are not supported in training");
      for (auto d : dil) {
        if (d != 1) Fail(n, "dilations are not supported in training");
      }
      if (!pads.empty() &&
          (pads.size() != 4 || pads[0] != pads[1] || pads[1] != pads[2] || pads[2] != pads[3])) {
        Fail(n, "pads must be equal on every side");
      }
      if (!strides.empty() && (strides.size() != 2 || strides[0] != strides[1])) {
        Fail(n, "strides must be equal");
      }
      if (n.attrs.count("auto_pad") && n.attrs.at("auto_pad").s != "NOTSET") {
        Fail(n, "auto_pad is not supported in training");
      }
      op.conv.cout = int(ws[0]);
      op.conv.cin = int(ws[1]);
      op.conv.kh = int(ws[2]);
      op.conv.kw = int(ws[3]);
      op.conv.pad = pads.empty() ? 0 : int(pads[0]);
      op.conv.stride = strides.empty() ? 1 : int(strides[0]);
    } else if (n.op == "Gemm") {
      op.kind = Op::Kind::kGemm;
      if (FloatAttr(n, "alpha", 1) != 1 || FloatAttr(n, "beta", 1) != 1 ||
          IntAttr(n, "transA", 0) != 0) {
        Fail(n, "alpha and beta must be 1 and transA 0");
      }
      op.w = param(n, 1, 2);
      op.b = param(n, 2, 1);
      if (op.w.empty()) Fail(n, "needs its weights as an initializer");
      op.trans_b = IntAttr(n, "transB", 0) != 0;
    } else if (n.op == "BatchNormalization") {
      op.kind = Op::Kind::kBatchNorm;
      op.w = param(n, 1, 1);
      op.b = param(n, 2, 1);
      op.mean = param(n, 3, 1);
      op.var = param(n, 4, 1);
      if (op.w.empty() || op.b.empty() || op.mean.empty() || op.var.empty()) {
        Fail(n, "needs scale, bias, mean and variance as initializers");
      }
      op.eps = FloatAttr(n, "epsilon", 1e-5f);
      op.momentum = FloatAttr(n, "momentum", 0.9f);
    } else if (n.op == "Relu") {
      op.kind = Op::Kind::kRelu;
    } else if (n.op == "Add") {
      op.kind = Op::Kind::kAdd;
    } else if (n.op == "MaxPool") {
      op.kind = Op::Kind::kMaxPool;
      const auto k = IntsAttr(n, "kernel_shape"), s = IntsAttr(n, "strides"),
                 p = IntsAttr(n, "pads");
      for (auto v : p) {
        if (v != 0) Fail(n, "padding is not supported in training");
      }
      if (k.size() != 2 || IntAttr(n, "ceil_mode", 0) != 0) Fail(n, "2-D, ceil_mode 0 only");
      op.kh = int(k[0]);
      op.kw = int(k[1]);
      op.stride = s.empty() ? 1 : int(s[0]);
      if (!s.empty() && (s.size() != 2 || s[0] != s[1])) Fail(n, "strides must be equal");
    } else if (n.op == "GlobalAveragePool") {
      op.kind = Op::Kind::kGlobalAvgPool;
    } else if (n.op == "Flatten") {
      op.kind = Op::Kind::kFlatten;
      if (IntAttr(n, "axis", 1) != 1) Fail(n, "axis 1 only");
    } else {
      Fail(n, kWhat);
    }
    for (size_t i = 0; i < n.inputs.size(); ++i) {
      if (!n.inputs[i].empty() && !nw.params_.count(n.inputs[i])) op.in.push_back(n.inputs[i]);
    }
    const size_t want = op.kind == Op::Kind::kAdd ? 2 : 1;
    if (op.in.size() != want) Fail(n, fmt::format("{} data input(s) expected", want));
    nw.ops_.push_back(std::make_unique<Op>(op));
  }
  if (nw.ops_.empty()) throw net::Error("train: the graph has no nodes");
  return nw;
}

int64_t Network::Features() const {
  int64_t f = 1;
  for (size_t i = 1; i < input_shape_.size(); ++i) f *= input_shape_[i];
  return f;
}

void Network::InitFromSeed(uint64_t seed) {
  uint64_t state = WeightStream(seed);
  for (const auto& op : ops_) {
    if (op->kind == Op::Kind::kConv || op->kind == Op::Kind::kGemm) {
      net::Tensor& w = params_.at(op->w);
      const bool out_first = op->kind == Op::Kind::kConv || op->trans_b;
      const int64_t fan_in = out_first ? net::Elements(w.shape) / w.shape[0] : w.shape[0];
      const double limit = std::sqrt(6.0 / double(fan_in));
      for (auto& v : w.f) v = float((2.0 * Uniform(state) - 1.0) * limit);
      if (!op->b.empty()) std::fill(params_.at(op->b).f.begin(), params_.at(op->b).f.end(), 0.0f);
    } else if (op->kind == Op::Kind::kBatchNorm) {
      std::fill(params_.at(op->w).f.begin(), params_.at(op->w).f.end(), 1.0f);
      std::fill(params_.at(op->b).f.begin(), params_.at(op->b).f.end(), 0.0f);
      std::fill(params_.at(op->mean).f.begin(), params_.at(op->mean).f.end(), 0.0f);
      std::fill(params_.at(op->var).f.begin(), params_.at(op->var).f.end(), 1.0f);
    }
  }
  velocity_.clear();
}

Network::Trace Network::Forward(const std::vector<float>& x, int batch, bool training,
                                const net::AccelFn& run, num::Mode mode) {
  const int64_t feats = Features();
  if (batch < 1 || int64_t(x.size()) != batch * feats) {
    throw std::invalid_argument(
        fmt::format("train: {} input values for a batch of {} rows of {}", x.size(), batch, feats));
  }
  Trace t;
  net::Tensor in;
  in.shape = input_shape_;
  in.shape[0] = batch;
  in.f = x;
  t.v[input_] = std::move(in);
  for (const auto& up : ops_) {
    const Op& op = *up;
    const net::Tensor& a = t.v.at(op.in[0]);
    net::Tensor y;
    switch (op.kind) {
      case Op::Kind::kConv: {
        if (a.shape.size() != 4 || a.shape[1] != op.conv.cin) {
          Fail(*op.node,
               fmt::format("input {} for {} input channels", net::ShapeText(a.shape), op.conv.cin));
        }
        host::ConvShape s = op.conv;
        s.n = int(a.shape[0]);
        s.h = int(a.shape[2]);
        s.w = int(a.shape[3]);
        if (s.OutH() < 1 || s.OutW() < 1) Fail(*op.node, "the kernel does not fit the input");
        const net::Tensor& w = params_.at(op.w);  // OIHW
        std::vector<float> hwio(w.f.size());
        for (int o = 0; o < s.cout; ++o)
          for (int c = 0; c < s.cin; ++c)
            for (int k = 0; k < s.kh * s.kw; ++k)
              hwio[(size_t(k) * s.cin + c) * s.cout + o] =
                  w.f[(size_t(o) * s.cin + c) * s.kh * s.kw + k];
        net::AccelJob job;
        job.kind = net::AccelJob::Kind::kConv;
        job.conv = s;
        job.m = s.M(), job.k = s.K(), job.n = s.cout;
        job.a = ToBf16(ToNhwc(a.f, s.n, s.cin, s.h, s.w), mode);
        job.b = ToBf16(hwio, mode);
        if (!op.b.empty()) {
          for (float v : params_.at(op.b).f) job.bias.push_back(Bits(v));
        }
        const std::vector<uint32_t> out = run(job, training ? kForward : kEvaluation);
        t.macs += job.Macs();
        y.shape = {s.n, s.cout, s.OutH(), s.OutW()};
        y.f = ToNchw(Floats(out), s.n, s.cout, s.OutH(), s.OutW());
        t.xb[&op] = std::move(job.a);
        t.wb[&op] = std::move(job.b);
        break;
      }
      case Op::Kind::kGemm: {
        const net::Tensor& w = params_.at(op.w);
        const int n_rows = int(a.shape[0]);
        const int k = int(a.Size() / n_rows), n = int(op.trans_b ? w.shape[0] : w.shape[1]);
        if (k != (op.trans_b ? w.shape[1] : w.shape[0])) {
          Fail(*op.node, fmt::format("input {} for weights {}", net::ShapeText(a.shape),
                                     net::ShapeText(w.shape)));
        }
        std::vector<float> kn(size_t(k) * size_t(n));
        for (int i = 0; i < k; ++i)
          for (int j = 0; j < n; ++j)
            kn[size_t(i) * n + j] = op.trans_b ? w.f[size_t(j) * k + i] : w.f[size_t(i) * n + j];
        net::AccelJob job;
        job.m = n_rows, job.k = k, job.n = n;
        job.a = ToBf16(a.f, mode);
        job.b = ToBf16(kn, mode);
        if (!op.b.empty()) {
          for (float v : params_.at(op.b).f) job.bias.push_back(Bits(v));
        }
        const std::vector<uint32_t> out = run(job, training ? kForward : kEvaluation);
        t.macs += job.Macs();
        y.shape = {n_rows, n};
        y.f = Floats(out);
        t.xb[&op] = std::move(job.a);
        t.wb[&op] = std::move(job.b);
        break;
      }
      case Op::Kind::kBatchNorm: {
        const int n = int(a.shape[0]), c = int(a.shape.at(1));
        const int64_t hw = a.Size() / (int64_t(n) * c), cnt = int64_t(n) * hw;
        const auto &gamma = params_.at(op.w).f, &beta = params_.at(op.b).f;
        auto &rmean = params_.at(op.mean).f, &rvar = params_.at(op.var).f;
        y.shape = a.shape;
        y.f.resize(a.f.size());
        std::vector<double> mean(static_cast<size_t>(c)), var(static_cast<size_t>(c)),
            inv(static_cast<size_t>(c)), xhat(a.f.size());
        for (int ch = 0; ch < c; ++ch) {
          if (training) {
            double s = 0;
            for (int b = 0; b < n; ++b)
              for (int64_t p = 0; p < hw; ++p) s += a.f[(size_t(b) * c + ch) * hw + p];
            mean[ch] = s / double(cnt);
            double q = 0;
            for (int b = 0; b < n; ++b)
              for (int64_t p = 0; p < hw; ++p) {
                const double d = a.f[(size_t(b) * c + ch) * hw + p] - mean[ch];
                q += d * d;
              }
            var[ch] = q / double(cnt);
          } else {
            mean[ch] = rmean[ch];
            var[ch] = rvar[ch];
          }
          inv[ch] = 1.0 / std::sqrt(var[ch] + double(op.eps));
          for (int b = 0; b < n; ++b)
            for (int64_t p = 0; p < hw; ++p) {
              const size_t i = (size_t(b) * c + ch) * hw + p;
              xhat[i] = (a.f[i] - mean[ch]) * inv[ch];
              y.f[i] = Canon(float(double(gamma[ch]) * xhat[i] + double(beta[ch])));
            }
        }
        if (training) {
          t.xhat[&op] = std::move(xhat);
          t.inv[&op] = std::move(inv);
          t.bmean[&op] = std::move(mean);
          t.bvar[&op] = std::move(var);
        }
        break;
      }
      case Op::Kind::kRelu:
        y.shape = a.shape;
        y.f.resize(a.f.size());
        for (size_t i = 0; i < a.f.size(); ++i) y.f[i] = FromBits(num::Relu(Bits(a.f[i])));
        break;
      case Op::Kind::kAdd: {
        const net::Tensor& b = t.v.at(op.in[1]);
        if (b.shape != a.shape) Fail(*op.node, "both inputs of one shape (no broadcasting)");
        y.shape = a.shape;
        y.f.resize(a.f.size());
        for (size_t i = 0; i < a.f.size(); ++i) y.f[i] = Canon(a.f[i] + b.f[i]);
        break;
      }
      case Op::Kind::kMaxPool: {
        const int n = int(a.shape[0]), c = int(a.shape[1]), h = int(a.shape[2]),
                  w = int(a.shape[3]);
        const int oh = (h - op.kh) / op.stride + 1, ow = (w - op.kw) / op.stride + 1;
        if (oh < 1 || ow < 1) Fail(*op.node, "the window does not fit the input");
        y.shape = {n, c, oh, ow};
        y.f.resize(size_t(n) * c * oh * ow);
        std::vector<int64_t> arg(y.f.size());
        for (int b = 0; b < n; ++b)
          for (int ch = 0; ch < c; ++ch)
            for (int i = 0; i < oh; ++i)
              for (int j = 0; j < ow; ++j) {
                const size_t base = (size_t(b) * c + ch) * h * w;
                int64_t best = int64_t(base) + int64_t(i * op.stride) * w + j * op.stride;
                for (int u = 0; u < op.kh; ++u)
                  for (int v = 0; v < op.kw; ++v) {
                    const int64_t at =
                        int64_t(base) + int64_t(i * op.stride + u) * w + j * op.stride + v;
                    if (a.f[size_t(at)] > a.f[size_t(best)] || std::isnan(a.f[size_t(at)])) {
                      if (!std::isnan(a.f[size_t(best)])) best = at;
                    }
                  }
                const size_t o = ((size_t(b) * c + ch) * oh + i) * ow + j;
                y.f[o] = Canon(a.f[size_t(best)]);
                arg[o] = best;
              }
        t.argmax[&op] = std::move(arg);
        break;
      }
      case Op::Kind::kGlobalAvgPool: {
        const int n = int(a.shape[0]), c = int(a.shape[1]);
        const int64_t hw = a.Size() / (int64_t(n) * c);
        y.shape = {n, c, 1, 1};
        y.f.resize(size_t(n) * c);
        for (size_t i = 0; i < y.f.size(); ++i) {
          float s = a.f[i * size_t(hw)];
          for (int64_t p = 1; p < hw; ++p) s = s + a.f[i * size_t(hw) + size_t(p)];
          y.f[i] = Canon(s / float(hw));
        }
        break;
      }
      case Op::Kind::kFlatten:
        y.shape = {a.shape[0], a.Size() / a.shape[0]};
        y.f = a.f;
        break;
    }
    t.v[op.out] = std::move(y);
  }
  return t;
}

std::vector<float> Network::Logits(const std::vector<float>& x, int batch, const net::AccelFn& run,
                                   num::Mode mode) {
  Trace t = Forward(x, batch, false, run, mode);
  return t.v.at(output_).f;
}

int Network::Classes() const {
  for (const auto& op : ops_) {
    if (op->out == output_ && op->kind == Op::Kind::kGemm) {
      const auto& w = params_.at(op->w).shape;
      return int(op->trans_b ? w[0] : w[1]);
    }
  }
  return 0;
}

Network::Grads Network::Backprop(const std::vector<float>& x, const std::vector<int32_t>& y,
                                 const net::AccelFn& run, num::Mode mode, bool update_running_stats,
                                 VectorUnit vu) {
  const int batch = int(y.size());
  Trace t = Forward(x, batch, true, run, mode);
  Grads gr;
  gr.result.forward_macs = t.macs;
  const net::Tensor& logits = t.v.at(output_);
  if (logits.shape.size() != 2 || logits.shape[0] != batch) {
    throw net::Error(fmt::format("train: the output '{}' is {}, not (batch, classes) logits",
                                 output_, net::ShapeText(logits.shape)));
  }
  const int classes = int(logits.shape[1]);
  std::vector<float> dz;
  gr.result.loss = SoftmaxCrossEntropy(logits.f, y, classes, &dz, mode, run, vu);
  for (int i = 0; i < batch; ++i) {
    int best = 0;
    for (int j = 1; j < classes; ++j) {
      if (logits.f[size_t(i) * classes + j] > logits.f[size_t(i) * classes + best]) best = j;
    }
    gr.result.correct += best == y[size_t(i)];
  }
  std::map<std::string, std::vector<float>> dv;  // gradients of values
  dv[output_] = std::move(dz);
  // A value read twice (the residual) gets the sum of its readers' gradients, in fp32, the later
  // reader's first.
  auto give = [&](const std::string& name, std::vector<float> g) {
    if (name == input_) return;
    auto it = dv.find(name);
    if (it == dv.end()) {
      dv[name] = std::move(g);
      return;
    }
    for (size_t i = 0; i < g.size(); ++i) it->second[i] = Canon(it->second[i] + g[i]);
  };
  uint64_t macs = 0;
  for (auto it = ops_.rbegin(); it != ops_.rend(); ++it) {
    const Op& op = **it;
    const auto found = dv.find(op.out);
    if (found == dv.end()) continue;  // nothing after it reaches the loss
    const std::vector<float> dy = std::move(found->second);
    dv.erase(found);
    const net::Tensor& a = t.v.at(op.in[0]);
    const bool need_dx = op.in[0] != input_;
    switch (op.kind) {
      case Op::Kind::kConv: {
        host::ConvShape s = op.conv;
        s.n = int(a.shape[0]);
        s.h = int(a.shape[2]);
        s.w = int(a.shape[3]);
        const std::vector<float> dy_nhwc = ToNhwc(dy, s.n, s.cout, s.OutH(), s.OutW());
        ConvGradients cg = ConvBackward(s, t.xb.at(&op), t.wb.at(&op), dy_nhwc, need_dx, run, mode);
        macs += cg.macs;
        std::vector<float> oihw(cg.dw.size());
        for (int o = 0; o < s.cout; ++o)
          for (int c = 0; c < s.cin; ++c)
            for (int k = 0; k < s.kh * s.kw; ++k)
              oihw[(size_t(o) * s.cin + c) * s.kh * s.kw + k] =
                  cg.dw[(size_t(k) * s.cin + c) * s.cout + o];
        gr.d[op.w] = std::move(oihw);
        if (!op.b.empty()) gr.d[op.b] = std::move(cg.db);
        if (need_dx) give(op.in[0], ToNchw(cg.dx, s.n, s.cin, s.h, s.w));
        break;
      }
      case Op::Kind::kGemm: {
        const net::Tensor& w = params_.at(op.w);
        const int n_rows = int(a.shape[0]), k = int(a.Size() / n_rows);
        const int n = int(op.trans_b ? w.shape[0] : w.shape[1]);
        const std::vector<uint16_t> g = ToBf16(dy, mode);
        net::AccelJob jw;  // dW = Xᵀ·G (K × N)
        jw.m = k, jw.k = n_rows, jw.n = n;
        jw.a = t.xb.at(&op);
        jw.b = g;
        jw.trans.a = true;
        const std::vector<uint32_t> dw = run(jw, kBackward);
        macs += jw.Macs();
        std::vector<float> dws(dw.size());
        for (int i = 0; i < k; ++i)
          for (int j = 0; j < n; ++j) {
            const float v = FromBits(dw[size_t(i) * n + j]);
            dws[op.trans_b ? size_t(j) * k + i : size_t(i) * n + j] = v;
          }
        gr.d[op.w] = std::move(dws);
        if (!op.b.empty()) gr.d[op.b] = ColumnSums(g, n_rows, n);
        if (need_dx) {
          net::AccelJob jx;  // dX = G·Wᵀ
          jx.m = n_rows, jx.k = n, jx.n = k;
          jx.a = g;
          jx.b = t.wb.at(&op);
          jx.trans.b = true;
          const std::vector<uint32_t> dx = run(jx, kBackward);
          macs += jx.Macs();
          give(op.in[0], Floats(dx));
        }
        break;
      }
      case Op::Kind::kBatchNorm: {
        const int n = int(a.shape[0]), c = int(a.shape[1]);
        const int64_t hw = a.Size() / (int64_t(n) * c), cnt = int64_t(n) * hw;
        const auto& gamma = params_.at(op.w).f;
        const auto &xhat = t.xhat.at(&op), &inv = t.inv.at(&op);
        std::vector<float> dgamma(static_cast<size_t>(c)), dbeta(static_cast<size_t>(c)),
            dx(dy.size());
        for (int ch = 0; ch < c; ++ch) {
          double sb = 0, sg = 0;
          for (int b = 0; b < n; ++b)
            for (int64_t p = 0; p < hw; ++p) {
              const size_t i = (size_t(b) * c + ch) * hw + p;
              sb += dy[i];
              sg += double(dy[i]) * xhat[i];
            }
          dbeta[ch] = Canon(float(sb));
          dgamma[ch] = Canon(float(sg));
          const double k = double(gamma[ch]) * inv[ch];
          for (int b = 0; b < n; ++b)
            for (int64_t p = 0; p < hw; ++p) {
              const size_t i = (size_t(b) * c + ch) * hw + p;
              dx[i] =
                  Canon(float(k * (double(dy[i]) - sb / double(cnt) - xhat[i] * sg / double(cnt))));
            }
        }
        gr.d[op.w] = std::move(dgamma);
        gr.d[op.b] = std::move(dbeta);
        if (update_running_stats) {
          // ONNX's momentum m: running = m·running + (1 - m)·batch, the variance unbiased (as
          // PyTorch keeps it), binary64 rounded to fp32.
          auto &rmean = params_.at(op.mean).f, &rvar = params_.at(op.var).f;
          const double m = op.momentum;
          const double unbias = cnt > 1 ? double(cnt) / double(cnt - 1) : 1.0;
          for (int ch = 0; ch < c; ++ch) {
            rmean[ch] = Canon(float(m * rmean[ch] + (1 - m) * t.bmean.at(&op)[ch]));
            rvar[ch] = Canon(float(m * rvar[ch] + (1 - m) * t.bvar.at(&op)[ch] * unbias));
          }
        }
        if (need_dx) give(op.in[0], std::move(dx));
        break;
      }
      case Op::Kind::kRelu: {
        if (need_dx) give(op.in[0], ReluBackward(t.v.at(op.out).f, dy, mode, run, vu));
        break;
      }
      case Op::Kind::kAdd:
        // The later input first (reverse order), then the first.
        give(op.in[1], dy);
        if (need_dx) give(op.in[0], dy);
        break;
      case Op::Kind::kMaxPool: {
        std::vector<float> dx(a.f.size(), 0.0f);
        const auto& arg = t.argmax.at(&op);
        for (size_t o = 0; o < dy.size(); ++o) {
          float& d = dx[size_t(arg[o])];
          d = Canon(d + dy[o]);
        }
        if (need_dx) give(op.in[0], std::move(dx));
        break;
      }
      case Op::Kind::kGlobalAvgPool: {
        const int64_t hw = a.Size() / (a.shape[0] * a.shape[1]);
        std::vector<float> dx(a.f.size());
        for (size_t i = 0; i < dy.size(); ++i) {
          const float d = Canon(dy[i] / float(hw));
          for (int64_t p = 0; p < hw; ++p) dx[i * size_t(hw) + size_t(p)] = d;
        }
        if (need_dx) give(op.in[0], std::move(dx));
        break;
      }
      case Op::Kind::kFlatten:
        if (need_dx) give(op.in[0], dy);
        break;
    }
  }
  gr.result.backward_macs = macs;
  return gr;
}

StepResult Network::Step(const Recipe& r, const std::vector<float>& x,
                         const std::vector<int32_t>& y, const net::AccelFn& run, num::Mode mode,
                         VectorUnit vu) {
  Grads gr = Backprop(x, y, run, mode, true, vu);
  // Parameters in the order of the graph's nodes (each once), updated together.
  std::vector<Param> params;
  std::set<std::string> taken;
  for (const auto& op : ops_) {
    for (const std::string* name : {&op->w, &op->b}) {
      if (name->empty() || !gr.d.count(*name) || !taken.insert(*name).second) continue;
      params.push_back({&params_.at(*name).f, &velocity_[*name], &gr.d.at(*name)});
    }
  }
  SgdUpdate(params, r.lr, r.momentum, mode, run, vu);
  return gr.result;
}

std::map<std::string, net::Tensor> Network::Initializers() const {
  return params_;
}

}  // namespace tpu::train
