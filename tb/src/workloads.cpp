// SPDX-License-Identifier: Apache-2.0
#include "tpu/tb/workloads.h"

#include <fmt/format.h>

#include <cstring>
#include <functional>
#include <set>
#include <stdexcept>

#include "tpu/numerics.h"
#include "tpu/tb/mac_vectors.h"
#include "tpu/tb/rng.h"

namespace tpu::tb::accel {
namespace {

using Writer = std::function<void(uint64_t addr, const void* data, uint64_t n)>;
using Reader = std::function<void(uint64_t addr, void* data, uint64_t n)>;

uint16_t RandomBf16(Rng& rng, Values v) {
  const int u = rng.Range(0, 99);
  if (v == Values::kSpecials && u < 4) {
    const auto& s = Bf16Specials();
    return s[rng.Range(0, int(s.size()) - 1)];
  }
  const uint16_t sign = rng.Bit() ? num::kBf16SignMask : 0;
  if (u < 9) return sign;                                        // ±0
  if (u < 10) return uint16_t(sign | ((rng.U16() & 0x7F) | 1));  // subnormal
  const auto exp = uint16_t(127 + rng.Range(-12, 12));
  return uint16_t(sign | (exp << 7) | (rng.U16() & 0x7F));
}

uint32_t RandomFp32(Rng& rng, Values v) {
  const int u = rng.Range(0, 99);
  if (v == Values::kSpecials && u < 4) {
    const auto& s = Fp32Specials();
    return s[rng.Range(0, int(s.size()) - 1)];
  }
  const uint32_t sign = rng.Bit() ? num::kFp32SignMask : 0;
  if (u < 9) return sign;
  const auto exp = uint32_t(127 + rng.Range(-12, 12));
  return sign | (exp << 23) | (rng.U32() & 0x7FFFFF);
}

std::vector<uint32_t> RandomData(uint64_t seed, const std::string& name, uint64_t n, int elem_bytes,
                                 Values v) {
  Rng rng(DeriveSeed(seed, name));
  std::vector<uint32_t> d(n);
  for (auto& x : d) x = elem_bytes == 2 ? RandomBf16(rng, v) : RandomFp32(rng, v);
  return d;
}

Tensor Matrix(const std::string& name, const host::TiledMatrix& l) {
  Tensor t;
  t.name = name;
  t.mat = l;
  t.elem_bytes = l.elem_bytes;
  return t;
}

Tensor Weights(const std::string& name, const host::WeightTiles& l) {
  Tensor t;
  t.name = name;
  t.weights = true;
  t.wgt = l;
  t.elem_bytes = 2;
  return t;
}

Tensor RandomInput(Tensor t, uint64_t seed, Values v) {
  t.data = RandomData(seed, t.name, t.Elements(), t.elem_bytes, v);
  return t;
}

// Calls f(addr, first element, count) for every row segment of a tensor's layout.
void ForEachSegment(const Tensor& t, const std::function<void(uint64_t, uint64_t, int)>& f) {
  if (t.weights) {
    const auto& l = t.wgt;
    for (int kt = 0; kt < l.KTiles(); ++kt) {
      for (int nt = 0; nt < l.NTiles(); ++nt) {
        const int cols = std::min(l.ntile, l.n - nt * l.ntile);
        for (int i = 0; i < l.KTileRows(kt); ++i) {
          f(l.RowAddr(kt, nt, i), uint64_t(l.KTileStart(kt) + i) * l.n + uint64_t(nt) * l.ntile,
            cols);
        }
      }
    }
    return;
  }
  const auto& l = t.mat;
  for (int tile = 0; tile < l.Tiles(); ++tile) {
    for (int r = 0; r < l.rows; ++r) {
      f(l.RowAddr(tile, r), uint64_t(r) * l.cols + uint64_t(tile) * l.tile, l.TileCols(tile));
    }
  }
}

void WriteTensor(const Writer& write, const Tensor& t) {
  if (t.data.size() != t.Elements()) {
    throw std::logic_error(fmt::format("tensor {}: {} data elements for a {}x{} layout", t.name,
                                       t.data.size(), t.Rows(), t.Cols()));
  }
  std::vector<uint8_t> buf;
  ForEachSegment(t, [&](uint64_t addr, uint64_t first, int n) {
    buf.resize(size_t(n) * t.elem_bytes);
    for (int i = 0; i < n; ++i) {
      const uint32_t x = t.data[first + i];
      if (t.elem_bytes == 2) {
        const auto h = uint16_t(x);
        std::memcpy(&buf[size_t(i) * 2], &h, 2);
      } else {
        std::memcpy(&buf[size_t(i) * 4], &x, 4);
      }
    }
    write(addr, buf.data(), buf.size());
  });
}

std::vector<uint32_t> ReadTensorWith(const Reader& read, const Tensor& t) {
  std::vector<uint32_t> v(t.Elements());
  std::vector<uint8_t> buf;
  ForEachSegment(t, [&](uint64_t addr, uint64_t first, int n) {
    buf.resize(size_t(n) * t.elem_bytes);
    read(addr, buf.data(), buf.size());
    for (int i = 0; i < n; ++i) {
      if (t.elem_bytes == 2) {
        uint16_t h;
        std::memcpy(&h, &buf[size_t(i) * 2], 2);
        v[first + i] = h;
      } else {
        std::memcpy(&v[first + i], &buf[size_t(i) * 4], 4);
      }
    }
  });
  return v;
}

void LoadWith(const Writer& write, const Workload& w) {
  std::vector<uint8_t> prog;
  prog.reserve(w.prog.instrs.size() * isa::kInstrBytes);
  for (const auto& in : w.prog.instrs) {
    const auto b = isa::Encode(in);
    prog.insert(prog.end(), b.begin(), b.end());
  }
  write(w.prog.addr, prog.data(), prog.size());
  for (const auto& t : w.inputs) WriteTensor(write, t);
}

// The machine as the host library plans for it: with the DMA's peak bandwidth.
isa::MachineConfig Planned(const Config& cfg) {
  isa::MachineConfig m = cfg.machine;
  m.dma_bytes_per_cycle = cfg.PeakBytesPerCycle();
  return m;
}

const char* InitName(host::Init i) {
  switch (i) {
    case host::Init::kOverwrite: return "overwrite";
    case host::Init::kPreload: return "preload";
    case host::Init::kAccumulate: return "accumulate";
  }
  return "?";
}

const char* FormatName(host::OutFormat f) {
  return f == host::OutFormat::kBf16 ? "bf16 out" : "fp32 out";
}

}  // namespace

std::string Tensor::Where(uint64_t index) const {
  const uint64_t row = index / uint64_t(Cols()), col = index % uint64_t(Cols());
  if (conv) {
    const uint64_t oh = uint64_t(conv->OutH()), ow = uint64_t(conv->OutW());
    return fmt::format("n {}, oh {}, ow {}, cout {}", row / (oh * ow), row / ow % oh, row % ow,
                       col);
  }
  return fmt::format("row {}, col {}", row, col);
}

std::string Tensor::Describe() const {
  return fmt::format("{} ({}x{} {})", name, Rows(), Cols(), elem_bytes == 2 ? "bf16" : "fp32");
}

uint64_t Workload::InputBytes() const {
  uint64_t b = 0;
  for (const auto& t : inputs) b += t.Elements() * uint64_t(t.elem_bytes);
  return b;
}

uint64_t Workload::OutputBytes() const {
  uint64_t b = 0;
  for (const auto& t : outputs) b += t.Elements() * uint64_t(t.elem_bytes);
  return b;
}

const Tensor& Workload::Output(const std::string& name) const {
  for (const auto& t : outputs) {
    if (t.name == name) return t;
  }
  throw std::out_of_range(fmt::format("workload has no output tensor '{}'", name));
}

Workload MakeGemm(const Config& cfg, int m, int k, int n, host::Init init, host::OutFormat out,
                  bool relu, uint64_t seed, Values values, host::GemmTranspose trans) {
  auto p = host::CompileGemm(Planned(cfg), m, k, n, trans, init, out, relu);
  Workload w;
  w.kind = "gemm";
  w.description =
      fmt::format("{}x{}x{} (M x K x N), {}, {}{}{}{}", m, k, n, InitName(init), FormatName(out),
                  relu ? ", relu" : "", trans.a ? ", A stored transposed" : "",
                  trans.b ? ", B stored transposed" : "");
  w.seed = seed;
  w.prog = std::move(p.prog);
  w.inputs.push_back(RandomInput(Matrix("A", p.a), seed, values));
  w.inputs.push_back(RandomInput(Weights("B", p.b), seed, values));
  if (init != host::Init::kOverwrite)
    w.inputs.push_back(RandomInput(Matrix("C0", p.c0), seed, values));
  w.outputs.push_back(Matrix("C", p.out));
  return w;
}

Workload MakeDense(const Config& cfg, int m, int k, int n, bool bias, bool relu,
                   host::OutFormat out, uint64_t seed, Values values) {
  auto p = host::CompileDense(Planned(cfg), m, k, n, bias, relu, out);
  Workload w;
  w.kind = "dense";
  w.description = fmt::format("{}x{}x{} (M x K x N){}, {}{}", m, k, n, bias ? ", bias" : "",
                              FormatName(out), relu ? ", relu" : "");
  w.seed = seed;
  w.prog = std::move(p.prog);
  w.inputs.push_back(RandomInput(Matrix("A", p.a), seed, values));
  w.inputs.push_back(RandomInput(Weights("B", p.b), seed, values));
  if (bias) w.inputs.push_back(RandomInput(Matrix("bias", p.bias), seed, values));
  w.outputs.push_back(Matrix("C", p.out));
  return w;
}

Workload MakeMlp(const Config& cfg, int m, const std::vector<int>& sizes, bool bias, bool relu,
                 uint64_t seed, Values values) {
  auto p = host::CompileMlp(Planned(cfg), m, sizes, bias, relu, host::OutFormat::kFp32);
  Workload w;
  w.kind = "mlp";
  std::string s;
  for (size_t i = 0; i < sizes.size(); ++i) s += fmt::format("{}{}", i ? "," : "", sizes[i]);
  w.description =
      fmt::format("M {}, sizes {}{}{}", m, s, bias ? ", bias" : "", relu ? ", relu" : "");
  w.seed = seed;
  w.prog = std::move(p.prog);
  w.inputs.push_back(RandomInput(Matrix("X", p.input), seed, values));
  for (size_t i = 0; i < p.w.size(); ++i) {
    w.inputs.push_back(RandomInput(Weights(fmt::format("L{}.W", i), p.w[i]), seed, values));
    if (bias) {
      w.inputs.push_back(RandomInput(Matrix(fmt::format("L{}.bias", i), p.bias[i]), seed, values));
    }
    w.outputs.push_back(Matrix(fmt::format("L{}.out", i), p.output[i]));
  }
  return w;
}

namespace {

// The convolution's input tensor: the NHWC input itself (windows, pointwise) or the im2col patch
// matrix the host writes.
Tensor ConvInput(const host::ConvProgram& p, const std::vector<uint16_t>& nhwc, Workload* w) {
  if (p.window || p.pointwise) {
    w->description += p.window ? ", through windows" : ", pointwise: a GEMM on the NHWC input";
    Tensor a = Matrix("X", p.a);
    a.data.assign(nhwc.begin(), nhwc.end());
    return a;
  }
  w->description += ", host im2col: " + p.host_im2col_reason;
  Tensor a = Matrix("im2col(X)", p.a);
  const auto patches = host::Im2col(p.shape, nhwc);
  a.data.assign(patches.begin(), patches.end());
  return a;
}

std::string ConvText(const host::ConvShape& s) {
  return fmt::format(
      "N {} H {} W {} Cin {} -> Cout {}, kernel {}x{}, stride {}, pad {} (OH {} OW {}; GEMM "
      "{}x{}x{})",
      s.n, s.h, s.w, s.cin, s.cout, s.kh, s.kw, s.stride, s.pad, s.OutH(), s.OutW(), s.M(), s.K(),
      s.cout);
}

}  // namespace

Workload MakeConv(const Config& cfg, const host::ConvShape& s, bool bias, bool relu,
                  host::OutFormat out, uint64_t seed, Values values) {
  auto p = host::CompileConv(Planned(cfg), s, bias, relu, out);
  Workload w;
  w.kind = "conv";
  w.description = fmt::format("{}{}, {}{}", ConvText(s), bias ? ", bias" : "", FormatName(out),
                              relu ? ", relu" : "");
  w.seed = seed;
  w.conv = s;
  const auto x = RandomData(seed, "X", uint64_t(s.n) * s.h * s.w * s.cin, 2, values);
  w.conv_input.assign(x.begin(), x.end());
  w.inputs.push_back(ConvInput(p, w.conv_input, &w));
  w.inputs.push_back(RandomInput(Weights("W", p.b), seed, values));
  if (bias) w.inputs.push_back(RandomInput(Matrix("bias", p.bias), seed, values));
  Tensor y = Matrix("Y", p.out);
  y.conv = s;
  w.outputs.push_back(std::move(y));
  w.prog = std::move(p.prog);
  return w;
}

Workload MakeJob(const Config& cfg, const net::AccelJob& job, uint64_t data_base, bool bf16_copy) {
  const bool also = bf16_copy && job.also_bf16 && job.out == host::OutFormat::kFp32;
  const host::OutFormat out = job.out;
  const bool bias = !job.bias.empty();
  const bool residual = !job.residual.empty();
  if (residual && job.kind != net::AccelJob::Kind::kConv &&
      job.kind != net::AccelJob::Kind::kGemm) {
    throw std::invalid_argument("a residual for a job that is neither a convolution nor a GEMM");
  }
  Workload w;
  w.kind = "job";
  auto in16 = [](Tensor t, const std::vector<uint16_t>& d) {
    t.data.assign(d.begin(), d.end());
    return t;
  };
  auto in32 = [](Tensor t, const std::vector<uint32_t>& d) {
    t.data = d;
    return t;
  };
  if (job.kind == net::AccelJob::Kind::kMlp) {
    const bool has_bias = !job.layers_bias.empty() && !job.layers_bias[0].empty();
    auto p = host::CompileMlp(Planned(cfg), job.m, job.sizes, has_bias, job.relu, out, data_base);
    w.description = job.Describe();
    w.inputs.push_back(in16(Matrix("X", p.input), job.a));
    if (job.layers_b.size() != p.w.size()) {
      throw std::invalid_argument(fmt::format("job {}: {} layers' weights for {} layers",
                                              w.description, job.layers_b.size(), p.w.size()));
    }
    for (size_t i = 0; i < p.w.size(); ++i) {
      w.inputs.push_back(in16(Weights(fmt::format("L{}.W", i), p.w[i]), job.layers_b[i]));
      if (has_bias) {
        w.inputs.push_back(
            in32(Matrix(fmt::format("L{}.bias", i), p.bias[i]), job.layers_bias.at(i)));
      }
    }
    w.outputs.push_back(Matrix("Y", p.output.back()));
    w.prog = std::move(p.prog);
  } else if (job.kind == net::AccelJob::Kind::kSoftmax) {
    auto p = host::CompileSoftmax(Planned(cfg), job.m, job.n, job.log, data_base);
    w.description = job.Describe();
    w.inputs.push_back(in32(Matrix("X", p.in), job.va));
    w.outputs.push_back(Matrix("Y", p.out));
    w.prog = std::move(p.prog);
  } else if (job.kind == net::AccelJob::Kind::kDepthwise) {
    host::DepthwiseOptions o;
    o.bias = bias, o.relu = job.relu, o.out = out, o.fp32 = job.fp32, o.also_bf16 = also;
    auto p = host::CompileDepthwise(Planned(cfg), job.pool, o, data_base);
    w.description = job.Describe();
    if (job.fp32) {
      w.inputs.push_back(in32(Matrix("X", p.in), job.va));
      w.inputs.push_back(in32(Matrix("W", p.w), job.vb));
    } else {
      w.inputs.push_back(in16(Matrix("X", p.in), job.a));
      w.inputs.push_back(in16(Matrix("W", p.w), job.b));
    }
    if (bias) w.inputs.push_back(in32(Matrix("bias", p.bias), job.bias));
    w.outputs.push_back(Matrix("Y", p.out));
    if (p.out_bf16.rows > 0) w.outputs.push_back(Matrix("Y.bf16", p.out_bf16));
    w.prog = std::move(p.prog);
  } else if (job.kind == net::AccelJob::Kind::kPool) {
    auto p = host::CompilePool(Planned(cfg), job.pool, data_base, also);
    w.description = job.Describe();
    w.inputs.push_back(in32(Matrix("X", p.in), job.va));
    w.outputs.push_back(Matrix("Y", p.out));
    if (p.out_bf16.rows > 0) w.outputs.push_back(Matrix("Y.bf16", p.out_bf16));
    w.prog = std::move(p.prog);
  } else if (job.kind == net::AccelJob::Kind::kVector) {
    auto p = host::CompileVector(Planned(cfg), job.m, job.n, job.stages, data_base, also);
    w.description = job.Describe();
    w.inputs.push_back(in32(Matrix("A", p.a), job.va));
    if (p.b.rows > 0) w.inputs.push_back(in32(Matrix("B", p.b), job.vb));
    w.outputs.push_back(Matrix("out", p.out));
    if (p.out_bf16.rows > 0) w.outputs.push_back(Matrix("out.bf16", p.out_bf16));
    w.prog = std::move(p.prog);
  } else if (job.kind == net::AccelJob::Kind::kConv) {
    const host::ConvShape& s = job.conv;
    auto p = host::CompileConv(Planned(cfg), s, bias, job.relu, out, data_base, also, job.windows,
                               residual);
    w.description =
        fmt::format("{}{}{}, {}{}", ConvText(s), bias ? ", bias" : "", residual ? ", residual" : "",
                    FormatName(out), job.relu ? ", relu" : "");
    w.conv = s;
    w.conv_input = job.a;
    w.inputs.push_back(ConvInput(p, w.conv_input, &w));
    w.inputs.push_back(in16(Weights("W", p.b), job.b));
    if (bias) w.inputs.push_back(in32(Matrix("bias", p.bias), job.bias));
    if (residual) w.inputs.push_back(in32(Matrix("R", p.residual), job.residual));
    Tensor y = Matrix("Y", p.out);
    y.conv = s;
    w.outputs.push_back(std::move(y));
    if (p.out_bf16.rows > 0) w.outputs.push_back(Matrix("Y.bf16", p.out_bf16));
    w.prog = std::move(p.prog);
  } else if (!job.c0.empty() || job.trans.a || job.trans.b) {
    if (bias || residual) {
      throw std::invalid_argument("a job with a bias or a residual and C0 or a transposed operand");
    }
    const bool c0 = !job.c0.empty();
    auto p = host::CompileGemm(Planned(cfg), job.m, job.k, job.n, job.trans,
                               c0 ? host::Init::kPreload : host::Init::kOverwrite, out, job.relu,
                               data_base);
    w.description = fmt::format(
        "{}x{}x{} (M x K x N){}{}{}, {}{}", job.m, job.k, job.n,
        job.trans.a ? ", A stored transposed" : "", job.trans.b ? ", B stored transposed" : "",
        c0 ? ", C0 preloaded" : "", FormatName(out), job.relu ? ", relu" : "");
    w.inputs.push_back(in16(Matrix("A", p.a), job.a));
    w.inputs.push_back(in16(Weights("B", p.b), job.b));
    if (c0) w.inputs.push_back(in32(Matrix("C0", p.c0), job.c0));
    w.outputs.push_back(Matrix("C", p.out));
    w.prog = std::move(p.prog);
  } else {
    auto p = host::CompileDense(Planned(cfg), job.m, job.k, job.n, bias, job.relu, out, data_base,
                                also, residual);
    w.description =
        fmt::format("{}x{}x{} (M x K x N){}{}, {}{}", job.m, job.k, job.n, bias ? ", bias" : "",
                    residual ? ", residual" : "", FormatName(out), job.relu ? ", relu" : "");
    w.inputs.push_back(in16(Matrix("A", p.a), job.a));
    w.inputs.push_back(in16(Weights("B", p.b), job.b));
    if (bias) w.inputs.push_back(in32(Matrix("bias", p.bias), job.bias));
    if (residual) w.inputs.push_back(in32(Matrix("R", p.residual), job.residual));
    w.outputs.push_back(Matrix("C", p.out));
    if (p.out_bf16.rows > 0) w.outputs.push_back(Matrix("C.bf16", p.out_bf16));
    w.prog = std::move(p.prog);
  }
  for (const auto& t : w.inputs) {
    if (t.data.size() != t.Elements()) {
      throw std::invalid_argument(fmt::format("job {}: tensor {} has {} elements, not {}",
                                              job.Describe(), t.name, t.data.size(), t.Elements()));
    }
  }
  return w;
}

const Tensor* JobOperand(const Workload& w, const net::AccelJob& job, int which) {
  using K = net::AccelJob::Kind;
  const char* name = nullptr;
  if (which == 0) {
    switch (job.kind) {
      case K::kConv:
      case K::kMlp:
      case K::kPool:
      case K::kDepthwise:
        name = "X";  // a convolution through the host's im2col reads "im2col(X)"
        break;
      case K::kGemm: name = job.trans.a ? nullptr : "A"; break;
      case K::kVector: name = "A"; break;
      case K::kSoftmax: break;
    }
  } else if (which == 1 && job.kind == K::kVector) {
    name = "B";
  } else if (which == 2 && !job.residual.empty()) {
    name = "R";
  }
  if (name == nullptr) return nullptr;
  for (const auto& t : w.inputs) {
    if (t.name == name) return &t;
  }
  return nullptr;
}

Workload LinkWorkloads(const Config& cfg, const std::vector<Workload>& parts,
                       const std::vector<WorkloadLink>& links) {
  std::vector<host::LinkPart> lp(parts.size());
  std::vector<std::set<std::string>> bound(parts.size()), placed(parts.size()),
      filled(parts.size());
  auto find = [&](const std::vector<Tensor>& v, const std::string& name, size_t part,
                  const char* what) -> const Tensor& {
    for (const auto& t : v) {
      if (t.name == name && !t.weights) return t;
    }
    throw std::invalid_argument(
        fmt::format("LinkWorkloads: part {} has no {} matrix '{}'", part, what, name));
  };
  for (const auto& l : links) {
    if (l.part >= parts.size() || l.from >= l.part) {
      throw std::invalid_argument(
          fmt::format("LinkWorkloads: a link from part {} to part {}", l.from, l.part));
    }
    const Tensor& in = find(parts[l.part].inputs, l.input, l.part, "input");
    const Tensor& out = find(parts[l.from].outputs, l.output, l.from, "output");
    if (l.col0 >= 0) {  // the producer stores into the reader's input
      lp[l.from].places.push_back({out.mat, in.mat, l.col0});
      placed[l.from].insert(l.output);
      filled[l.part].insert(l.input);
    } else {
      lp[l.part].binds.push_back({in.mat, out.mat, l.group});
    }
    bound[l.part].insert(l.input);
  }
  Workload r;
  r.kind = "program";
  r.description = fmt::format("{} jobs as one program", parts.size());
  for (size_t i = 0; i < parts.size(); ++i) {
    lp[i].prog = parts[i].prog;
    for (Tensor t : parts[i].inputs) {
      if (filled[i].count(t.name)) {  // written by the producers placed into it: an output
        t.name = fmt::format("j{}.{}", i, t.name);
        t.data.clear();
        r.outputs.push_back(std::move(t));
        continue;
      }
      if (bound[i].count(t.name)) continue;
      t.name = fmt::format("j{}.{}", i, t.name);
      r.inputs.push_back(std::move(t));
    }
    for (Tensor t : parts[i].outputs) {
      if (placed[i].count(t.name)) continue;  // stored into a reader's input instead
      t.name = fmt::format("j{}.{}", i, t.name);
      r.outputs.push_back(std::move(t));
    }
  }
  r.prog = host::Link(Planned(cfg), lp);
  return r;
}

Workload MakeFromHost(const Config& cfg, int m, int k, int n, const std::vector<float>& a,
                      const std::vector<float>& b, const std::vector<float>* c) {
  auto need = [](const char* what, size_t got, int rows, int cols) {
    if (got != size_t(rows) * size_t(cols)) {
      throw std::invalid_argument(fmt::format("{}: {} elements, expected {}x{} = {}", what, got,
                                              rows, cols, size_t(rows) * size_t(cols)));
    }
  };
  need("A", a.size(), m, k);
  need("B", b.size(), k, n);
  if (c != nullptr) need("C", c->size(), m, n);
  const host::Init init = c != nullptr ? host::Init::kPreload : host::Init::kOverwrite;
  auto p = host::CompileGemm(Planned(cfg), m, k, n, init, host::OutFormat::kFp32, false);
  Workload w;
  w.kind = "host";
  w.description = fmt::format("{}x{}x{} (M x K x N) from host data, {}, fp32 out", m, k, n,
                              c != nullptr ? "C preloaded" : "overwrite");
  w.prog = std::move(p.prog);
  auto bits = [](float f) {
    uint32_t u;
    std::memcpy(&u, &f, 4);
    return u;
  };
  auto to_bf16 = [&](const std::vector<float>& v) {
    std::vector<uint32_t> d(v.size());
    for (size_t i = 0; i < v.size(); ++i) d[i] = num::Fp32ToBf16(bits(v[i]), cfg.machine.mode);
    return d;
  };
  Tensor ta = Matrix("A", p.a), tb = Weights("B", p.b);
  ta.data = to_bf16(a);
  tb.data = to_bf16(b);
  w.inputs.push_back(std::move(ta));
  w.inputs.push_back(std::move(tb));
  if (c != nullptr) {
    Tensor tc = Matrix("C0", p.c0);
    tc.data.resize(c->size());
    for (size_t i = 0; i < c->size(); ++i) tc.data[i] = bits((*c)[i]);
    w.inputs.push_back(std::move(tc));
  }
  w.outputs.push_back(Matrix("C", p.out));
  return w;
}

void Load(Sim& sim, const Workload& w) {
  LoadWith([&](uint64_t a, const void* d, uint64_t n) { sim.WriteHbm(a, d, n); }, w);
}

void Load(isa::Machine& m, const Workload& w) {
  LoadWith([&](uint64_t a, const void* d, uint64_t n) { m.WriteHbm(a, d, n); }, w);
}

Result Run(Sim& sim, const Workload& w, const RunOptions& opt) {
  return sim.Run(w.prog.addr, w.prog.count(), opt);
}

isa::RunResult RunGolden(isa::Machine& golden, const Workload& w) {
  Load(golden, w);
  return golden.Run(w.prog.addr, w.prog.count());
}

std::future<GoldenRun> StartGolden(const isa::MachineConfig& cfg, const Workload& w) {
  return std::async(std::launch::async, [cfg, &w] {
    GoldenRun g{std::make_unique<isa::Machine>(cfg), {}};
    g.result = RunGolden(*g.machine, w);
    return g;
  });
}

std::vector<uint32_t> ReadTensor(Sim& sim, const Tensor& t) {
  return ReadTensorWith([&](uint64_t a, void* d, uint64_t n) { sim.ReadHbm(a, d, n); }, t);
}

std::vector<uint32_t> ReadTensor(const isa::Machine& m, const Tensor& t) {
  return ReadTensorWith([&](uint64_t a, void* d, uint64_t n) { m.ReadHbm(a, d, n); }, t);
}

}  // namespace tpu::tb::accel
