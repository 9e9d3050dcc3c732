// SPDX-License-Identifier: Apache-2.0
#include "tpu/net.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstring>
#include <optional>
#include <set>

#include "host_ops.h"
#include "tpu/isa_model.h"

namespace tpu::net {

std::string AccelJob::Describe() const {
  if (kind == Kind::kMlp) {
    std::string z;
    for (size_t i = 0; i < sizes.size(); ++i) z += fmt::format("{}{}", i ? "-" : "", sizes[i]);
    return fmt::format("MLP {} rows, {}{}{}, {} out", m, z,
                       layers_bias.empty() || layers_bias[0].empty() ? "" : ", bias",
                       relu ? ", relu" : "", out == host::OutFormat::kBf16 ? "bf16" : "fp32");
  }
  if (kind == Kind::kSoftmax) {
    return fmt::format("{} of {} slices of {}", log ? "log-softmax" : "softmax", n, m);
  }
  if (kind == Kind::kDepthwise && fp32) {
    return fmt::format("batch norm {}x{}x{} (fp32, y = fma32(x, a, b)){}", pool.n, pool.c, pool.w,
                       relu ? ", relu" : "");
  }
  if (kind == Kind::kDepthwise) {
    return fmt::format(
        "depthwise conv {}x{}x{}x{} -> {}x{}, {}x{} window, strides {},{}, pads {},{},{},{}{}{}, "
        "{} out",
        pool.n, pool.c, pool.h, pool.w, pool.oh, pool.ow, pool.kh, pool.kw, pool.sh, pool.sw,
        pool.pt, pool.pl, pool.pb, pool.pr, bias.empty() ? "" : ", bias", relu ? ", relu" : "",
        out == host::OutFormat::kBf16 ? "bf16" : "fp32");
  }
  if (kind == Kind::kPool) {
    return fmt::format(
        "{} pool {}x{}x{}x{} -> {}x{}, {}x{} window, strides {},{}, pads {},{},{},{}",
        pool.max ? "max" : "average", pool.n, pool.c, pool.h, pool.w, pool.oh, pool.ow, pool.kh,
        pool.kw, pool.sh, pool.sw, pool.pt, pool.pl, pool.pb, pool.pr);
  }
  if (kind == Kind::kVector) {
    std::string ops;
    for (const auto& s : stages) {
      ops += fmt::format("{}{}", ops.empty() ? "" : ", ", isa::kVectorOps[size_t(s.op)].name);
    }
    return fmt::format("vector {}x{}: {}", m, n, ops);
  }
  std::string r =
      kind == Kind::kConv
          ? fmt::format("conv {}x{}x{}x{} -> {}, {}x{} kernel, stride {}, pad {}", conv.n, conv.h,
                        conv.w, conv.cin, conv.cout, conv.kh, conv.kw, conv.stride, conv.pad)
          : fmt::format("GEMM {}x{}x{}", m, k, n);
  if (trans.a) r += ", A transposed";
  if (trans.b) r += ", B transposed";
  if (!bias.empty()) r += ", bias";
  if (!c0.empty()) r += ", C0";
  if (!residual.empty()) r += ", residual";
  if (relu) r += ", relu";
  r += out == host::OutFormat::kBf16 ? ", bf16 out" : ", fp32 out";
  return r;
}

namespace {

// The values by name, and what whole-network programs need to know of them (AccelJob::from_a,
// host_a): which are a job's output as it stored it, and which depend on some job's output.
struct Env : std::map<std::string, Tensor> {
  struct Made {
    int job = -1;
    int64_t rows = 0, cols = 0;  // the job's output matrix (channels last)
    host::OutFormat fmt = host::OutFormat::kFp32;
    bool bf16_too = false;  // an fp32 output stored a second time as bf16 (also_bf16)
  };
  std::map<std::string, Made> made;
  // Concatenations of channels (Concat): the pieces, each a job's output.
  struct Cat {
    int64_t rows = 0, cols = 0;
    std::vector<std::pair<std::string, int64_t>> parts;  // value, its columns
  };
  std::map<std::string, Cat> cats;
  std::set<std::string> dynamic;                        // computed from some job's output
  int jobs = 0;                                         // jobs run so far
  bool step_a_dynamic = false, step_b_dynamic = false;  // the running step's inputs
  bool step_res_dynamic = false;                        // its residual (Step::residual)

  // `v` is the output of the job just run, rows × cols in format f.
  void Produced(const std::string& v, int64_t rows, int64_t cols, host::OutFormat f,
                bool bf16_too = false) {
    made[v] = {jobs - 1, rows, cols, f, bf16_too && f == host::OutFormat::kFp32};
  }
  // The job whose output is `v` as a rows × cols matrix in format f, or -1.
  int From(const std::string& v, int64_t rows, int64_t cols, host::OutFormat f) const {
    auto it = made.find(v);
    if (it == made.end() || it->second.rows != rows || it->second.cols != cols ||
        (it->second.fmt != f && !(f == host::OutFormat::kBf16 && it->second.bf16_too))) {
      return -1;
    }
    return it->second.job;
  }
  // The pieces of `v` as a rows × cols matrix in format f (a concatenation of job outputs,
  // each stored in f: AccelJob::a_pieces), or none.
  std::vector<AccelJob::Piece> Pieces(const std::string& v, int64_t rows, int64_t cols,
                                      host::OutFormat f) const {
    auto it = cats.find(v);
    if (it == cats.end() || it->second.rows != rows || it->second.cols != cols) return {};
    std::vector<AccelJob::Piece> r;
    int64_t col0 = 0;
    for (const auto& [part, n] : it->second.parts) {
      const int job = From(part, rows, n, f);
      if (job < 0) return {};
      r.push_back({job, int(col0)});
      col0 += n;
    }
    return r;
  }
  // Before a job goes to the back end: its operands computed by the host from job outputs.
  void Prepare(AccelJob* job) const {
    job->host_a = step_a_dynamic && job->from_a < 0 && job->a_pieces.empty();
    job->host_b = HostB(*job);
  }
  bool HostB(const AccelJob& job) const {
    return (step_b_dynamic && job.from_b < 0) || (step_res_dynamic && job.from_res < 0);
  }
};
// A step's work: reads and writes values in the environment, sends jobs to the back end.
using Exec = std::function<void(Env& env, const AccelFn& accel, int step)>;

[[noreturn]] void Fail(const Node& n, const std::string& msg) {
  throw Error(fmt::format("node '{}' ({}): {}", n.name, n.op, msg));
}

std::string IntsText(const std::vector<int64_t>& v) {
  std::string r = "[";
  for (size_t i = 0; i < v.size(); ++i) r += fmt::format("{}{}", i ? ", " : "", v[i]);
  return r + "]";
}

// The outputs a node really has (ONNX marks an omitted optional output with an empty name).
size_t Outputs(const Node& n) {
  size_t k = 0;
  for (const auto& o : n.outputs) k += o.empty() ? 0 : 1;
  return k;
}

// Attributes: only the listed ones are accepted (an unknown one could change the meaning).
void CheckAttrs(const Node& n, std::initializer_list<const char*> known) {
  for (const auto& [name, a] : n.attrs) {
    bool ok = false;
    for (const char* k : known) ok = ok || name == k;
    if (!ok) Fail(n, fmt::format("attribute '{}' is not supported", name));
  }
}
int64_t AttrInt(const Node& n, const char* name, int64_t def) {
  auto it = n.attrs.find(name);
  if (it == n.attrs.end()) return def;
  if (it->second.kind != Attr::Kind::kInt)
    Fail(n, fmt::format("attribute '{}' is not an int", name));
  return it->second.i;
}
float AttrFloat(const Node& n, const char* name, float def) {
  auto it = n.attrs.find(name);
  if (it == n.attrs.end()) return def;
  if (it->second.kind != Attr::Kind::kFloat) {
    Fail(n, fmt::format("attribute '{}' is not a float", name));
  }
  return it->second.f;
}
std::string AttrString(const Node& n, const char* name, const std::string& def) {
  auto it = n.attrs.find(name);
  if (it == n.attrs.end()) return def;
  if (it->second.kind != Attr::Kind::kString) {
    Fail(n, fmt::format("attribute '{}' is not a string", name));
  }
  return it->second.s;
}
std::vector<int64_t> AttrInts(const Node& n, const char* name, std::vector<int64_t> def) {
  auto it = n.attrs.find(name);
  if (it == n.attrs.end()) return def;
  if (it->second.kind != Attr::Kind::kInts) {
    Fail(n, fmt::format("attribute '{}' is not a list of ints", name));
  }
  return it->second.ints;
}

// The build context: every value's shape, the constants, who reads what.
struct Ctx {
  const Graph& g;
  num::Mode mode;
  bool vector_unit = false;  // vector operators run on the accelerator (else on the host)
  std::map<std::string, Shape> shapes;
  std::map<std::string, Tensor> constants;
  std::map<std::string, std::vector<size_t>> consumers;  // value -> nodes reading it
  std::set<std::string> graph_outputs;
  int vmem_depth = 0;  // the vector memory's rows when known (0: unknown)

  const Shape& ShapeOf(const Node& n, size_t input) const {
    if (input >= n.inputs.size() || n.inputs[input].empty()) {
      Fail(n, fmt::format("input {} is missing", input));
    }
    auto it = shapes.find(n.inputs[input]);
    if (it == shapes.end()) Fail(n, fmt::format("input '{}' is not defined", n.inputs[input]));
    return it->second;
  }
  bool Has(const Node& n, size_t input) const {
    return input < n.inputs.size() && !n.inputs[input].empty();
  }
  const Tensor* Const(const Node& n, size_t input) const {
    if (!Has(n, input)) return nullptr;
    auto it = constants.find(n.inputs[input]);
    return it == constants.end() ? nullptr : &it->second;
  }
  // The single node reading `value` (and nothing else: not a graph output), or nullptr.
  const Node* OnlyConsumer(const std::string& value) const {
    if (graph_outputs.count(value)) return nullptr;
    auto it = consumers.find(value);
    if (it == consumers.end() || it->second.size() != 1) return nullptr;
    return &g.nodes[it->second[0]];
  }
  // Whether some reader of `value`, directly or through views (Flatten, Reshape, Squeeze,
  // Unsqueeze, Identity, Dropout), is an accelerator operand that rounds it to bf16.
  bool Bf16Reader(const std::string& value, int depth = 0) const {
    auto it = consumers.find(value);
    if (it == consumers.end() || depth > 16) return false;
    for (size_t i : it->second) {
      const Node& c = g.nodes[i];
      for (size_t k = 0; k < c.inputs.size(); ++k) {
        if (c.inputs[k] != value) continue;
        if ((c.op == "Conv" && k == 0) || ((c.op == "MatMul" || c.op == "Gemm") && k < 2)) {
          return true;
        }
        const bool view = c.op == "Flatten" || c.op == "Reshape" || c.op == "Squeeze" ||
                          c.op == "Unsqueeze" || c.op == "Identity" || c.op == "Dropout";
        if (((view && k == 0) || c.op == "Concat") && !c.outputs.empty() &&
            Bf16Reader(c.outputs[0], depth + 1)) {
          return true;
        }
      }
    }
    return false;
  }
  // Whether every reader of `value` is an accelerator operand that rounds it to bf16.
  bool OnlyAccelReaders(const std::string& value) const {
    if (graph_outputs.count(value)) return false;
    auto it = consumers.find(value);
    if (it == consumers.end() || it->second.empty()) return false;
    for (size_t i : it->second) {
      const Node& c = g.nodes[i];
      for (size_t k = 0; k < c.inputs.size(); ++k) {
        if (c.inputs[k] != value) continue;
        const bool operand =
            (c.op == "Conv" && k == 0) || (c.op == "MatMul" && k < 2) || (c.op == "Gemm" && k < 2);
        if (!operand) return false;
      }
    }
    return true;
  }
};

// Every element's index in NCHW (n images of c channels of hw pixels, row-major) and channels
// last (n·hw rows of c): f(nchw, nhwc), the jobs' layout moves.
template <class F>
void ForChannelsLast(int64_t n, int64_t c, int64_t hw, F&& f) {
  for (int64_t b = 0; b < n; ++b) {
    for (int64_t ch = 0; ch < c; ++ch) {
      for (int64_t i = 0; i < hw; ++i)
        f(size_t((b * c + ch) * hw + i), size_t((b * hw + i) * c + ch));
    }
  }
}

// The accelerator boundary: an fp32 value rounded to bf16 (the contract's conversion).
uint16_t Bf16(float x, num::Mode mode) {
  return num::Fp32ToBf16(F32Bits(x), mode);
}

float OutValue(uint32_t bits, host::OutFormat f) {
  return F32FromBits(f == host::OutFormat::kBf16 ? num::Bf16ToFp32(uint16_t(bits)) : bits);
}

int64_t NormAxis(const Node& n, int64_t axis, size_t rank, bool inclusive = false) {
  const auto r = int64_t(rank);
  if (axis < -r || axis > (inclusive ? r : r - 1)) {
    Fail(n, fmt::format("axis {} is out of range for rank {}", axis, rank));
  }
  return axis < 0 ? axis + r : axis;
}

// Numpy-style broadcasting of two shapes.
Shape Broadcast(const Node& n, const Shape& a, const Shape& b) {
  const size_t r = std::max(a.size(), b.size());
  Shape out(r);
  for (size_t i = 0; i < r; ++i) {
    const int64_t da = i + a.size() >= r ? a[i + a.size() - r] : 1;
    const int64_t db = i + b.size() >= r ? b[i + b.size() - r] : 1;
    if (da != db && da != 1 && db != 1) {
      Fail(n, fmt::format("shapes {} and {} do not broadcast", ShapeText(a), ShapeText(b)));
    }
    out[i] = da == 1 ? db : da;
  }
  return out;
}

// Index into a tensor of shape `s` broadcast to `out`, for the flat index of `out`.
std::vector<int64_t> BroadcastIndex(const Shape& s, const Shape& out) {
  const int64_t total = Elements(out);
  std::vector<int64_t> idx(static_cast<size_t>(total));
  const size_t r = out.size();
  std::vector<int64_t> stride(r, 0);
  int64_t st = 1;
  for (size_t i = r; i-- > 0;) {
    const size_t j = i + s.size() >= r ? i + s.size() - r : SIZE_MAX;
    const int64_t d = j == SIZE_MAX ? 1 : s[j];
    stride[i] = d == 1 ? 0 : st;
    st *= d;
  }
  std::vector<int64_t> c(r, 0);
  for (int64_t f = 0; f < total; ++f) {
    int64_t o = 0;
    for (size_t i = 0; i < r; ++i) o += c[i] * stride[i];
    idx[size_t(f)] = o;
    for (size_t i = r; i-- > 0;) {
      if (++c[i] < out[i]) break;
      c[i] = 0;
    }
  }
  return idx;
}

// The spatial geometry of a convolution or pool on (N, C, H, W): 1-D ones get H = 1.
struct Window {
  int64_t kh = 1, kw = 1, sh = 1, sw = 1, dh = 1, dw = 1;
  int64_t pt = 0, pl = 0, pb = 0, pr = 0;
  int64_t h = 1, w = 1, oh = 1, ow = 1;
  bool ceil = false;
};

Window MakeWindow(const Node& n, const Shape& x, const std::vector<int64_t>& kernel,
                  bool allow_ceil) {
  const size_t sp = x.size() - 2;
  if (sp != 1 && sp != 2) {
    Fail(n, fmt::format("{}-D input {}: only 1-D and 2-D spatial shapes are supported", sp,
                        ShapeText(x)));
  }
  if (kernel.size() != sp) {
    Fail(n, fmt::format("kernel_shape {} does not match the {}-D input {}", IntsText(kernel), sp,
                        ShapeText(x)));
  }
  const auto strides = AttrInts(n, "strides", std::vector<int64_t>(sp, 1));
  const auto dil = AttrInts(n, "dilations", std::vector<int64_t>(sp, 1));
  auto pads = AttrInts(n, "pads", std::vector<int64_t>(2 * sp, 0));
  const std::string auto_pad = AttrString(n, "auto_pad", "NOTSET");
  const bool ceil = AttrInt(n, "ceil_mode", 0) != 0;
  if (ceil && !allow_ceil) Fail(n, "ceil_mode is not supported");
  if (strides.size() != sp || dil.size() != sp || pads.size() != 2 * sp) {
    Fail(n, "strides, dilations or pads do not match the input's rank");
  }
  for (size_t i = 0; i < sp; ++i) {
    if (kernel[i] < 1 || strides[i] < 1 || dil[i] < 1) {
      Fail(n, "kernel_shape, strides and dilations must be >= 1");
    }
  }
  for (auto p : pads) {
    if (p < 0) Fail(n, fmt::format("negative pads {}", IntsText(pads)));
  }
  Window w;
  auto set = [&](size_t i, int64_t in, int64_t* k, int64_t* s, int64_t* d, int64_t* pb, int64_t* pe,
                 int64_t* out) {
    *k = kernel[i];
    *s = strides[i];
    *d = dil[i];
    const int64_t ext = (*k - 1) * *d + 1;
    if (auto_pad == "NOTSET") {
      *pb = pads[i];
      *pe = pads[i + sp];
    } else if (auto_pad == "VALID") {
      *pb = *pe = 0;
    } else if (auto_pad == "SAME_UPPER" || auto_pad == "SAME_LOWER") {
      const int64_t want = (in + *s - 1) / *s;
      const int64_t total = std::max<int64_t>(0, (want - 1) * *s + ext - in);
      const int64_t small = total / 2;
      *pb = auto_pad == "SAME_UPPER" ? small : total - small;
      *pe = total - *pb;
    } else {
      Fail(n, fmt::format("auto_pad '{}' is not supported", auto_pad));
    }
    const int64_t span = in + *pb + *pe - ext;
    if (span < 0) {
      Fail(n, fmt::format("the kernel (extent {}) does not fit the padded input ({})", ext,
                          in + *pb + *pe));
    }
    *out = (ceil ? (span + *s - 1) / *s : span / *s) + 1;
    // A window must start inside the input or its leading padding.
    if (ceil && (*out - 1) * *s >= in + *pb) --*out;
  };
  if (sp == 2) {
    w.h = x[2];
    w.w = x[3];
    set(0, w.h, &w.kh, &w.sh, &w.dh, &w.pt, &w.pb, &w.oh);
    set(1, w.w, &w.kw, &w.sw, &w.dw, &w.pl, &w.pr, &w.ow);
  } else {
    w.h = 1;
    w.w = x[2];
    set(0, w.w, &w.kw, &w.sw, &w.dw, &w.pl, &w.pr, &w.ow);
  }
  w.ceil = ceil;
  return w;
}

Shape SpatialShape(const Shape& x, int64_t c, const Window& w) {
  if (x.size() == 4) return {x[0], c, w.oh, w.ow};
  return {x[0], c, w.ow};
}

struct Impl;

}  // namespace

struct Plan::Impl {
  std::vector<Step> steps;
  std::vector<Exec> execs;
  std::vector<ValueInfo> inputs, outputs;
  std::map<std::string, Tensor> constants;
  uint64_t macs = 0;
  std::vector<std::string> warnings;
};

namespace {

// ---------------------------------------------------------------------------------------------
// Accelerator steps

// Output format and relu fusion for an accelerator node: follows `value` through a Relu that is
// its only reader. Returns the value the step finally writes.
struct Epilogue {
  bool relu = false;
  host::OutFormat out = host::OutFormat::kFp32;
  std::string value;
  std::vector<size_t> fused;  // node indices folded into the step
};

Epilogue FuseRelu(const Ctx& c, const std::string& value, bool allow_relu) {
  Epilogue e;
  e.value = value;
  if (allow_relu) {
    const Node* r = c.OnlyConsumer(value);
    if (r != nullptr && r->op == "Relu" && r->attrs.empty() && r->outputs.size() == 1) {
      e.relu = true;
      e.value = r->outputs[0];
      e.fused.push_back(size_t(r - c.g.nodes.data()));
    }
  }
  e.out = c.OnlyAccelReaders(e.value) ? host::OutFormat::kBf16 : host::OutFormat::kFp32;
  return e;
}

// Node `i` becomes part of step `st` (a folded BatchNormalization, a fused Relu).
void Fold(const Ctx& c, size_t i, Step* st, std::set<size_t>* done) {
  st->label += " + " + c.g.nodes[i].name;
  st->nodes.push_back(c.g.nodes[i].name);
  done->insert(i);
}

// A convolution (with a BatchNormalization folded in and a relu fused).
void PlanConv(Ctx& c, const Node& n, Plan::Impl& impl, Step& st, std::set<size_t>& done) {
  CheckAttrs(n, {"auto_pad", "dilations", "group", "kernel_shape", "pads", "strides"});
  const Shape x = c.ShapeOf(n, 0);
  if (x.size() != 3 && x.size() != 4) {
    Fail(n, fmt::format("input {} is not 1-D or 2-D (N, C, [H,] W)", ShapeText(x)));
  }
  const Shape ws = c.ShapeOf(n, 1);
  if (ws.size() != x.size()) {
    Fail(n, fmt::format("weights {} do not match the input {}", ShapeText(ws), ShapeText(x)));
  }
  const int64_t group = AttrInt(n, "group", 1);
  const int64_t cin = x[1], cout = ws[0];
  if (group < 1 || cin % group != 0 || cout % group != 0 || ws[1] != cin / group) {
    Fail(n, fmt::format("group {} does not divide input channels {} and weights {}", group, cin,
                        ShapeText(ws)));
  }
  std::vector<int64_t> kernel(ws.begin() + 2, ws.end());
  const auto ks = AttrInts(n, "kernel_shape", kernel);
  if (ks != kernel) {
    Fail(n, fmt::format("kernel_shape {} differs from the weights' {}", IntsText(ks),
                        IntsText(kernel)));
  }
  const Window win = MakeWindow(n, x, kernel, false);
  const int64_t cin_g = cin / group, cout_g = cout / group;
  const int64_t taps = win.kh * win.kw;
  const std::string w_name = n.inputs[1], b_name = c.Has(n, 2) ? n.inputs[2] : "";
  if (!b_name.empty() && Elements(c.ShapeOf(n, 2)) != cout) {
    Fail(n, fmt::format("bias {} is not ({},)", ShapeText(c.ShapeOf(n, 2)), cout));
  }
  st.inputs = {n.inputs[0], w_name};
  if (!b_name.empty()) st.inputs.push_back(b_name);

  // A BatchNormalization that is the convolution's only reader is folded into its weights and
  // bias (when the step runs: the parameters may be inputs).
  std::string value = n.outputs[0];
  std::vector<std::string> bn_params;  // scale, B, mean, var
  float bn_eps = 0;
  if (const Node* bn = c.OnlyConsumer(value);
      bn != nullptr && bn->op == "BatchNormalization" && Outputs(*bn) == 1 &&
      bn->inputs.size() == 5 && bn->inputs[0] == value && c.shapes.count(bn->inputs[1]) &&
      c.shapes.count(bn->inputs[2]) && c.shapes.count(bn->inputs[3]) &&
      c.shapes.count(bn->inputs[4])) {
    CheckAttrs(*bn, {"epsilon", "momentum", "training_mode", "spatial", "is_test"});
    if (AttrInt(*bn, "training_mode", 0) != 0) Fail(*bn, "training_mode = 1 is not supported");
    if (AttrInt(*bn, "spatial", 1) != 1) Fail(*bn, "spatial = 0 is not supported");
    bn_eps = AttrFloat(*bn, "epsilon", 1e-5f);
    for (size_t i = 1; i <= 4; ++i) {
      const Shape ps = c.ShapeOf(*bn, i);
      if (Elements(ps) != cout) {
        Fail(*bn, fmt::format("parameter {} is not ({},)", ShapeText(ps), cout));
      }
      bn_params.push_back(bn->inputs[i]);
      st.inputs.push_back(bn->inputs[i]);
    }
    value = bn->outputs[0];
    Fold(c, size_t(bn - c.g.nodes.data()), &st, &done);
  }
  // A residual add (docs/numerics.md "Residual adds in the accumulators"): an Add that is the
  // only reader, of two values of the output's shape, whose other operand is computed before
  // this step: the MACs start from it plus the bias (host::CompileConv's residual).
  std::string res_name;
  if (const Node* add = c.OnlyConsumer(value);
      add != nullptr && add->op == "Add" && add->inputs.size() == 2 && add->outputs.size() == 1 &&
      group == 1 && add->inputs[0] != add->inputs[1]) {
    const std::string other = add->inputs[0] == value ? add->inputs[1] : add->inputs[0];
    // c.shapes holds the graph's inputs, its constants and what earlier steps computed (a step
    // adds its outputs when planned): a value it knows is computed before this step.
    auto os = c.shapes.find(other);
    if (!c.constants.count(other) && os != c.shapes.end() &&
        os->second == SpatialShape(x, cout, win)) {
      res_name = other;
      value = add->outputs[0];
      Fold(c, size_t(add - c.g.nodes.data()), &st, &done);
    }
  }
  const Epilogue e = FuseRelu(c, value, true);
  for (size_t i : e.fused) Fold(c, i, &st, &done);

  // The lowering: the host library's convolution when its shape can say it (one stride, no
  // dilation; unequal pads become zero rows and columns the host adds), else im2col by the host.
  const bool square_stride = win.sh == win.sw || (win.h + win.pt + win.pb == win.kh);
  const bool direct = win.dh == 1 && win.dw == 1 && square_stride;
  const bool even_pad = win.pt == win.pb && win.pl == win.pr && win.pt == win.pl;
  std::vector<std::string> how;
  if (group > 1) how.push_back(fmt::format("{} groups", group));
  if (!direct) {
    how.push_back(fmt::format("host im2col ({})",
                              win.dh != 1 || win.dw != 1 ? "dilations" : "unequal strides"));
  } else if (!even_pad) {
    how.push_back("unequal pads added by the host");
  }
  if (!res_name.empty()) how.push_back("residual add in the accumulators");
  st.detail = how.empty() ? "" : fmt::format("{}", fmt::join(how, ", "));
  st.klass = fmt::format("conv {}x{}{}", win.kh, win.kw, group > 1 ? " grouped" : "");

  const int64_t N = x[0], H = win.h, W = win.w;
  const int64_t OH = win.oh, OW = win.ow;
  const num::Mode mode = c.mode;
  const Shape out_shape = SpatialShape(x, cout, win);
  // A depthwise convolution (one input and one output channel a group) on the vector unit when
  // its vector memory holds the weights (host::CompileDepthwise: the same bits as the MXU's
  // groups, in one job).
  bool fits = true;
  for (int64_t v : {N, cin, H, W, OH, OW, win.kh * win.kw, win.sh, win.sw, win.dh, win.dw, win.pt,
                    win.pl, win.pb, win.pr}) {
    fits = fits && v <= 65535;
  }
  const bool vector_dw = group > 1 && cin_g == 1 && cout_g == 1 && fits &&
                         c.vmem_depth >= 1 + taps + 1 + 2 && res_name.empty();
  if (vector_dw) st.detail = fmt::format("depthwise: {} channels on the vector unit", group);
  st.out_shape = out_shape;
  st.accel = true;
  st.jobs = vector_dw ? 1 : int(group);
  st.macs = uint64_t(N * OH * OW) * uint64_t(taps * cin_g) * uint64_t(cout_g) * uint64_t(group);
  const std::string in_name = n.inputs[0];
  const Epilogue ep = e;
  const bool has_bias = !b_name.empty() || !bn_params.empty();
  // fp32 for some readers, bf16 for others: a whole-network program stores it both ways.
  const bool copy16 = ep.out == host::OutFormat::kFp32 && c.Bf16Reader(ep.value);
  st.outputs = {ep.value};
  c.shapes[ep.value] = out_shape;
  if (!res_name.empty()) {
    st.inputs.push_back(res_name);
    st.residual = res_name;
  }

  impl.execs.push_back([=](Env& env, const AccelFn& accel, int step) {
    const Tensor& xt = env.at(in_name);
    // Weights and bias in fp32, OIHW, with the BatchNormalization folded (docs/numerics.md).
    std::vector<float> w = env.at(w_name).f;
    std::vector<float> bias;
    if (!b_name.empty()) bias = env.at(b_name).f;
    if (!bn_params.empty()) {
      const auto& gamma = env.at(bn_params[0]).f;
      const auto& beta = env.at(bn_params[1]).f;
      const auto& mean = env.at(bn_params[2]).f;
      const auto& var = env.at(bn_params[3]).f;
      if (bias.empty()) bias.assign(size_t(cout), 0.0f);
      const int64_t per = cin_g * taps;
      for (int64_t o = 0; o < cout; ++o) {
        const double s = BnScale(gamma[size_t(o)], var[size_t(o)], bn_eps);
        for (int64_t i = 0; i < per; ++i) {
          w[size_t(o * per + i)] = BnWeight(w[size_t(o * per + i)], s);
        }
        bias[size_t(o)] = BnApply(bias[size_t(o)], mean[size_t(o)], beta[size_t(o)], s);
      }
    }
    std::vector<uint32_t> bias_bits;
    for (float v : bias) bias_bits.push_back(F32Bits(v));
    Tensor y;
    y.shape = out_shape;
    y.f.assign(size_t(Elements(out_shape)), 0.0f);
    if (vector_dw) {
      AccelJob job;
      job.kind = AccelJob::Kind::kDepthwise;
      host::PoolShape& ps = job.pool;
      ps.n = int(N), ps.c = int(cin), ps.h = int(H), ps.w = int(W);
      ps.kh = int(win.kh), ps.kw = int(win.kw), ps.sh = int(win.sh), ps.sw = int(win.sw);
      ps.dh = int(win.dh), ps.dw = int(win.dw);
      ps.pt = int(win.pt), ps.pl = int(win.pl), ps.pb = int(win.pb), ps.pr = int(win.pr);
      ps.oh = int(OH), ps.ow = int(OW);
      job.m = int(N * OH * OW);
      job.k = int(taps);
      job.n = int(cin);
      job.relu = ep.relu;
      job.out = ep.out;
      job.bias = bias_bits;
      const int64_t hw = H * W;
      job.a.resize(size_t(N * hw * cin));
      ForChannelsLast(N, cin, hw,
                      [&](size_t nchw, size_t nhwc) { job.a[nhwc] = Bf16(xt.f[nchw], mode); });
      job.b.resize(size_t(taps * cin));  // tap t of channel ch at row t, column ch
      for (int64_t ch = 0; ch < cin; ++ch) {
        for (int64_t t = 0; t < taps; ++t) {
          job.b[size_t(t * cin + ch)] = Bf16(w[size_t(ch * taps + t)], mode);
        }
      }
      job.from_a = env.From(in_name, N * H * W, cin, host::OutFormat::kBf16);
      job.also_bf16 = copy16;
      env.Prepare(&job);
      const std::vector<uint32_t> out = accel(job, step);
      const int64_t ohw = OH * OW;
      ForChannelsLast(N, cin, ohw,
                      [&](size_t nchw, size_t nhwc) { y.f[nchw] = OutValue(out[nhwc], ep.out); });
      env[ep.value] = std::move(y);
      env.Produced(ep.value, N * OH * OW, cin, ep.out, copy16);
      return;
    }
    const bool pre = direct && !even_pad;
    const int64_t ph = pre ? H + win.pt + win.pb : H, pw = pre ? W + win.pl + win.pr : W;
    const int64_t ot = pre ? win.pt : 0, ol = pre ? win.pl : 0;
    for (int64_t g = 0; g < group; ++g) {
      AccelJob job;
      // HWIO weights of the group (K = taps·cin_g rows, k = (i·kw + j)·cin_g + ci), bf16.
      job.b.resize(size_t(taps * cin_g * cout_g));
      for (int64_t co = 0; co < cout_g; ++co) {
        for (int64_t ci = 0; ci < cin_g; ++ci) {
          for (int64_t t = 0; t < taps; ++t) {
            const float v = w[size_t(((g * cout_g + co) * cin_g + ci) * taps + t)];
            job.b[size_t((t * cin_g + ci) * cout_g + co)] = Bf16(v, mode);
          }
        }
      }
      if (has_bias) {
        job.bias.assign(bias_bits.begin() + g * cout_g, bias_bits.begin() + (g + 1) * cout_g);
      }
      job.relu = ep.relu;
      job.out = ep.out;
      job.m = int(N * OH * OW);
      job.k = int(taps * cin_g);
      job.n = int(cout_g);
      // The group's channels, bf16 (padding: +0).
      auto at = [&](int64_t b, int64_t ci, int64_t h, int64_t ww) -> uint16_t {
        if (h < 0 || h >= H || ww < 0 || ww >= W) return 0;
        return Bf16(xt.f[size_t(((b * cin + g * cin_g + ci) * H + h) * W + ww)], mode);
      };
      if (direct) {
        job.kind = AccelJob::Kind::kConv;
        job.conv.n = int(N);
        job.conv.h = int(ph);
        job.conv.w = int(pw);
        job.conv.cin = int(cin_g);
        job.conv.cout = int(cout_g);
        job.conv.kh = int(win.kh);
        job.conv.kw = int(win.kw);
        job.conv.stride = int(win.h + win.pt + win.pb == win.kh ? win.sw : win.sh);
        job.conv.pad = int(pre ? 0 : win.pt);
        job.a.resize(size_t(N * ph * pw * cin_g));
        for (int64_t b = 0; b < N; ++b) {
          for (int64_t h = 0; h < ph; ++h) {
            for (int64_t ww = 0; ww < pw; ++ww) {
              for (int64_t ci = 0; ci < cin_g; ++ci) {
                job.a[size_t(((b * ph + h) * pw + ww) * cin_g + ci)] = at(b, ci, h - ot, ww - ol);
              }
            }
          }
        }
      } else {
        job.kind = AccelJob::Kind::kGemm;
        job.a.resize(size_t(job.m) * job.k);
        size_t r = 0;
        for (int64_t b = 0; b < N; ++b) {
          for (int64_t oh = 0; oh < OH; ++oh) {
            for (int64_t ow = 0; ow < OW; ++ow) {
              for (int64_t i = 0; i < win.kh; ++i) {
                for (int64_t j = 0; j < win.kw; ++j) {
                  const int64_t h = oh * win.sh - win.pt + i * win.dh;
                  const int64_t ww = ow * win.sw - win.pl + j * win.dw;
                  for (int64_t ci = 0; ci < cin_g; ++ci) job.a[r++] = at(b, ci, h, ww);
                }
              }
            }
          }
        }
      }
      if (direct && !pre && group == 1) {
        job.from_a = env.From(in_name, N * H * W, cin, host::OutFormat::kBf16);
        if (job.from_a < 0) {
          job.a_pieces = env.Pieces(in_name, N * H * W, cin, host::OutFormat::kBf16);
          if (!job.a_pieces.empty()) job.a_cat = in_name;
        }
      }
      job.also_bf16 = copy16 && group == 1;
      if (!res_name.empty()) {  // NCHW fp32 into the output's rows (channels last)
        const Tensor& rt = env.at(res_name);
        const int64_t ohw = OH * OW;
        job.residual.resize(size_t(N * ohw * cout));
        ForChannelsLast(N, cout, ohw, [&](size_t nchw, size_t nhwc) {
          job.residual[nhwc] = F32Bits(rt.f[nchw]);
        });
        job.from_res = env.From(res_name, N * ohw, cout, host::OutFormat::kFp32);
      }
      env.Prepare(&job);
      const std::vector<uint32_t> out = accel(job, step);
      for (int64_t p = 0; p < N * OH * OW; ++p) {
        const int64_t b = p / (OH * OW), hw = p % (OH * OW);
        for (int64_t co = 0; co < cout_g; ++co) {
          y.f[size_t((b * cout + g * cout_g + co) * OH * OW + hw)] =
              OutValue(out[size_t(p * cout_g + co)], ep.out);
        }
      }
    }
    env[ep.value] = std::move(y);
    if (group == 1) env.Produced(ep.value, N * OH * OW, cout, ep.out, copy16);
  });
}

// Reads a 2-D matrix, transposed or not, as bf16 rows x cols.
std::vector<uint16_t> Matrix16(const Tensor& t, bool trans, num::Mode mode) {
  const int64_t r = t.shape[0], c = t.shape[1];
  std::vector<uint16_t> out(size_t(r * c));
  for (int64_t i = 0; i < r; ++i) {
    for (int64_t j = 0; j < c; ++j) {
      const uint16_t v = Bf16(t.f[size_t(i * c + j)], mode);
      if (trans) {
        out[size_t(j * r + i)] = v;
      } else {
        out[size_t(i * c + j)] = v;
      }
    }
  }
  return out;
}

// ConvTranspose as the convolution it equals (docs/numerics.md): the input with s - 1 zeros
// between its pixels and d·(k - 1) - pad rows and columns of zeros around it (a negative count
// crops), convolved at stride 1 and dilation d with the kernel flipped and its channel axes
// swapped. The host builds that input (a data move) and the step is PlanConv's, whose lowering,
// folding (BatchNormalization, Relu) and numerics it keeps.
void PlanConvTranspose(Ctx& c, const Node& n, Plan::Impl& impl, Step& st, std::set<size_t>& done) {
  CheckAttrs(n, {"auto_pad", "dilations", "group", "kernel_shape", "output_padding", "output_shape",
                 "pads", "strides"});
  const Shape x = c.ShapeOf(n, 0);
  if (x.size() != 3 && x.size() != 4) {
    Fail(n, fmt::format("input {} is not 1-D or 2-D (N, C, [H,] W)", ShapeText(x)));
  }
  const size_t sp = x.size() - 2;
  const Shape ws = c.ShapeOf(n, 1);
  const int64_t group = AttrInt(n, "group", 1);
  const int64_t cin = x[1];
  if (ws.size() != x.size() || group < 1 || cin % group != 0 || ws[0] != cin) {
    Fail(n, fmt::format("weights {} do not match the input {} with group {}", ShapeText(ws),
                        ShapeText(x), group));
  }
  const int64_t cout_g = ws[1], cout = cout_g * group, cin_g = cin / group;
  const std::vector<int64_t> kernel(ws.begin() + 2, ws.end());
  if (AttrInts(n, "kernel_shape", kernel) != kernel)
    Fail(n, "kernel_shape differs from the weights'");
  const auto strides = AttrInts(n, "strides", std::vector<int64_t>(sp, 1));
  const auto dil = AttrInts(n, "dilations", std::vector<int64_t>(sp, 1));
  const auto opad = AttrInts(n, "output_padding", std::vector<int64_t>(sp, 0));
  auto pads = AttrInts(n, "pads", std::vector<int64_t>(2 * sp, 0));
  const std::string auto_pad = AttrString(n, "auto_pad", "NOTSET");
  if (strides.size() != sp || dil.size() != sp || opad.size() != sp || pads.size() != 2 * sp) {
    Fail(n, "strides, dilations, output_padding or pads do not match the input's rank");
  }
  if (auto_pad != "NOTSET" && auto_pad != "SAME_UPPER" && auto_pad != "SAME_LOWER" &&
      auto_pad != "VALID") {
    Fail(n, fmt::format("auto_pad '{}' is not supported", auto_pad));
  }
  std::vector<int64_t> out_shape = AttrInts(n, "output_shape", {});
  if (!out_shape.empty() && out_shape.size() != sp) {
    if (out_shape.size() == x.size()) {
      out_shape.erase(out_shape.begin(), out_shape.begin() + 2);
    } else {
      Fail(n, fmt::format("output_shape {} does not match the input's rank", IntsText(out_shape)));
    }
  }
  for (size_t a = 0; a < sp; ++a) {
    if (kernel[a] < 1 || strides[a] < 1 || dil[a] < 1 || opad[a] < 0) {
      Fail(n, "kernel_shape, strides, dilations must be >= 1 and output_padding >= 0");
    }
    const int64_t ext = (kernel[a] - 1) * dil[a] + 1, in = x[2 + a];
    const int64_t full = strides[a] * (in - 1) + opad[a] + ext;
    if (!out_shape.empty() || auto_pad == "SAME_UPPER" || auto_pad == "SAME_LOWER") {
      const int64_t want = out_shape.empty() ? in * strides[a] : out_shape[a];
      // ONNX's equations, with Python's floor division: a negative total (an output_shape past
      // the full result) adds zeros at the end.
      const int64_t total = full - want;
      const int64_t half = total >= 0 ? total / 2 : -((-total + 1) / 2);
      if (auto_pad == "SAME_UPPER") {
        pads[a] = half, pads[a + sp] = total - half;
      } else {
        pads[a] = total - half, pads[a + sp] = half;
      }
    } else if (auto_pad == "VALID") {
      pads[a] = pads[a + sp] = 0;
    }
  }
  // The equivalent convolution's input: per spatial axis, size and where input pixel 0 lands.
  Shape px = {x[0], cin};
  std::vector<int64_t> first(sp), step(sp);
  for (size_t a = 0; a < sp; ++a) {
    const int64_t edge = dil[a] * (kernel[a] - 1);
    const int64_t lo = edge - pads[a], hi = edge - pads[a + sp] + opad[a];
    const int64_t size = (x[2 + a] - 1) * strides[a] + 1 + lo + hi;
    if (size < (kernel[a] - 1) * dil[a] + 1) Fail(n, "the pads leave no output");
    px.push_back(size);
    first[a] = lo, step[a] = strides[a];
  }
  // The equivalent convolution's weights: [co][ci within the group][flipped taps].
  const std::string stuffed = n.outputs.at(0) + ":convtranspose_input";
  const std::string wname = n.outputs.at(0) + ":convtranspose_weights";
  const int64_t taps = Elements(kernel);
  Shape wshape = {cout, cin_g};
  wshape.insert(wshape.end(), kernel.begin(), kernel.end());
  c.shapes[stuffed] = px;
  c.shapes[wname] = wshape;
  Node conv;
  conv.name = n.name;
  conv.op = "Conv";
  conv.inputs = {stuffed, wname};
  if (c.Has(n, 2)) conv.inputs.push_back(n.inputs[2]);
  conv.outputs = {n.outputs.at(0)};
  net::Attr a_ints;
  a_ints.kind = net::Attr::Kind::kInts;
  a_ints.ints = dil;
  conv.attrs["dilations"] = a_ints;
  a_ints.ints.assign(sp, 1);
  conv.attrs["strides"] = a_ints;
  a_ints.ints.assign(2 * sp, 0);
  conv.attrs["pads"] = a_ints;
  net::Attr a_group;
  a_group.kind = net::Attr::Kind::kInt;
  a_group.i = group;
  conv.attrs["group"] = a_group;
  Plan::Impl tmp;
  PlanConv(c, conv, tmp, st, done);
  st.inputs.at(0) = n.inputs[0];
  st.inputs.erase(std::remove(st.inputs.begin(), st.inputs.end(), wname), st.inputs.end());
  st.inputs.insert(st.inputs.begin() + 1, n.inputs[1]);
  st.detail = "zeros inserted and the kernel flipped by the host" +
              (st.detail.empty() ? std::string() : ", " + st.detail);
  const std::string in = n.inputs[0], w_in = n.inputs[1];
  const Exec conv_exec = tmp.execs.at(0);
  impl.execs.push_back([=](Env& env, const AccelFn& accel, int step_index) {
    const Tensor& wt = env.at(w_in);
    Tensor wc;
    wc.shape = wshape;
    wc.f.resize(size_t(Elements(wshape)));
    for (int64_t g = 0; g < group; ++g) {
      for (int64_t co = 0; co < cout_g; ++co) {
        for (int64_t ci = 0; ci < cin_g; ++ci) {
          for (int64_t t = 0; t < taps; ++t) {
            wc.f[size_t(((g * cout_g + co) * cin_g + ci) * taps + (taps - 1 - t))] =
                wt.f[size_t(((g * cin_g + ci) * cout_g + co) * taps + t)];
          }
        }
      }
    }
    env[wname] = std::move(wc);
    const Tensor& xt = env.at(in);
    Tensor p;
    p.shape = px;
    p.f.assign(size_t(Elements(px)), 0.0f);
    const int64_t inner_in = sp == 2 ? x[3] : 1, inner_p = sp == 2 ? px[3] : 1;
    const int64_t rows_in = x[2], rows_p = px[2];
    for (int64_t b = 0; b < x[0] * cin; ++b) {
      for (int64_t i = 0; i < rows_in; ++i) {
        const int64_t pi = first[0] + i * step[0];
        if (pi < 0 || pi >= rows_p) continue;
        for (int64_t j = 0; j < inner_in; ++j) {
          const int64_t pj = sp == 2 ? first[1] + j * step[1] : 0;
          if (pj < 0 || pj >= inner_p) continue;
          p.f[size_t((b * rows_p + pi) * inner_p + pj)] =
              xt.f[size_t((b * rows_in + i) * inner_in + j)];
        }
      }
    }
    env[stuffed] = std::move(p);
    conv_exec(env, accel, step_index);
    env.erase(stuffed);
    env.erase(wname);
  });
}

// A chain of Gemms (a multilayer perceptron: each layer's output, through a fused Relu, read
// only by the next Gemm's A) as one program: host::CompileMlp, whose hidden layers hand their
// bf16 outputs to the next layer in HBM without the host (the same bits as one job a layer:
// each hidden output is stored bf16, as its reader would round it). Layers: alpha 1, beta 1
// (a bias row or no C), A not transposed; all with a bias or none, every hidden layer with a
// Relu or none; the last layer's Relu, if any, stays a step of its own. Returns false (nothing
// planned) for fewer than two such layers.
// A dense layer's A that is a Flatten (axis 1) of an N × C × spatial value, on a machine with the
// vector unit (whole-network programs): the plan takes K in channels-last order, k' = s·C + c
// for ONNX's k = c·S + s (A's columns and B's rows permuted alike), so that A's row n is the
// channels-last rows n·S .. n·S + S − 1 of the value side by side (AccelJob::from_a_group).
// The sum runs over k' in increasing order (docs/numerics.md, "Dense layers after a Flatten").
struct ClFlatten {
  std::string src;  // the Flatten's input
  int64_t S = 1, C = 0;
};
std::optional<ClFlatten> FindClFlatten(const Ctx& c, const std::string& a) {
  if (!c.vector_unit) return std::nullopt;
  for (const Node& n : c.g.nodes) {
    if (n.outputs.empty() || n.outputs[0] != a) continue;
    if (n.op != "Flatten" || AttrInt(n, "axis", 1) != 1 || n.inputs.empty()) return std::nullopt;
    auto it = c.shapes.find(n.inputs[0]);
    if (it == c.shapes.end() || it->second.size() < 3) return std::nullopt;
    const Shape& x = it->second;
    int64_t S = 1;
    for (size_t i = 2; i < x.size(); ++i) S *= x[i];
    if (S <= 1) return std::nullopt;
    return ClFlatten{n.inputs[0], S, x[1]};
  }
  return std::nullopt;
}
// A (rows × C·S, ONNX's k order) or B (C·S × cols) bf16 with K permuted to channels last.
std::vector<uint16_t> PermuteK(const std::vector<uint16_t>& m, int64_t rows, int64_t cols,
                               const ClFlatten& f, bool k_is_cols) {
  std::vector<uint16_t> r(m.size());
  for (int64_t i = 0; i < rows; ++i) {
    for (int64_t j = 0; j < cols; ++j) {
      const int64_t k = k_is_cols ? j : i;  // ONNX's k = c·S + s
      const int64_t kp = (k % f.S) * f.C + k / f.S;
      const int64_t dst = k_is_cols ? i * cols + kp : kp * cols + j;
      r[size_t(dst)] = m[size_t(i * cols + j)];
    }
  }
  return r;
}

bool PlanMlpChain(Ctx& c, const Node& first, Plan::Impl& impl, Step& st, std::set<size_t>& done) {
  struct Layer {
    const Node* n;
    bool tb, bias;
    int64_t k, nn;
  };
  // `a`: the layer's A shape (a later layer's A is its predecessor's output, not planned yet).
  const auto layer = [&](const Node& n, const Shape& a) -> std::optional<Layer> {
    if (n.op != "Gemm" || n.outputs.size() != 1 || n.inputs.size() < 2) return std::nullopt;
    for (const auto& [name, a] : n.attrs) {
      if (name != "alpha" && name != "beta" && name != "transA" && name != "transB") {
        return std::nullopt;
      }
    }
    if (AttrFloat(n, "alpha", 1.0f) != 1.0f || AttrInt(n, "transA", 0) != 0) return std::nullopt;
    const bool tb = AttrInt(n, "transB", 0) != 0;
    if (!c.shapes.count(n.inputs[1])) return std::nullopt;
    const Shape b = c.shapes.at(n.inputs[1]);
    if (a.size() != 2 || b.size() != 2) return std::nullopt;
    const int64_t k = tb ? b[1] : b[0], nn = tb ? b[0] : b[1];
    if (a[1] != k) return std::nullopt;
    const bool bias = c.Has(n, 2) && AttrFloat(n, "beta", 1.0f) != 0.0f;
    if (bias) {
      if (AttrFloat(n, "beta", 1.0f) != 1.0f || !c.shapes.count(n.inputs[2])) return std::nullopt;
      const Shape cs = c.shapes.at(n.inputs[2]);
      if (Elements(cs) != nn || !(cs.size() == 1 || (cs.size() == 2 && cs[0] == 1))) {
        return std::nullopt;
      }
    }
    return Layer{&n, tb, bias, k, nn};
  };
  std::vector<Layer> layers;
  std::vector<bool> relus;
  std::vector<size_t> relu_nodes;
  if (!c.shapes.count(first.inputs.at(0))) return false;
  const auto l0 = layer(first, c.shapes.at(first.inputs[0]));
  if (!l0) return false;
  layers.push_back(*l0);
  while (true) {
    const Layer& cur = layers.back();
    const Epilogue ep = FuseRelu(c, cur.n->outputs[0], true);
    const Node* next = c.OnlyConsumer(ep.value);
    if (next == nullptr || next->inputs.empty() || next->inputs[0] != ep.value) break;
    const auto nl = layer(*next, Shape{c.shapes.at(first.inputs[0]).at(0), cur.nn});
    if (!nl || nl->bias != layers[0].bias) break;
    if (!relus.empty() && ep.relu != relus[0]) break;
    relus.push_back(ep.relu);
    if (ep.relu) relu_nodes.push_back(ep.fused.at(0));
    layers.push_back(*nl);
  }
  if (layers.size() < 2) return false;
  const bool relu = relus[0];
  const Shape a0 = c.shapes.at(first.inputs[0]);
  const int64_t M = a0[0];
  std::vector<int> sizes = {int(layers[0].k)};
  uint64_t macs = 0;
  for (const Layer& l : layers) {
    sizes.push_back(int(l.nn));
    macs += uint64_t(M * l.k * l.nn);
  }
  // Fold the later layers and the hidden Relus into this step.
  for (size_t i = 1; i < layers.size(); ++i) {
    if (relu) Fold(c, relu_nodes.at(i - 1), &st, &done);
    Fold(c, size_t(layers[i].n - c.g.nodes.data()), &st, &done);
  }
  const Layer& last = layers.back();
  const Epilogue ep = FuseRelu(c, last.n->outputs[0], false);
  st.accel = true;
  st.klass = "mlp";
  st.jobs = 1;
  st.macs = macs;
  st.detail = fmt::format("{} layers as one program", layers.size());
  st.out_shape = {M, last.nn};
  st.inputs = {first.inputs[0]};
  for (const Layer& l : layers) {
    for (size_t k = 1; k < l.n->inputs.size(); ++k) {
      if (!l.n->inputs[k].empty()) st.inputs.push_back(l.n->inputs[k]);
    }
  }
  st.outputs = {ep.value};
  c.shapes[ep.value] = st.out_shape;
  const num::Mode mode = c.mode;
  const std::string in = first.inputs[0], out_name = ep.value;
  const host::OutFormat out_fmt = ep.out;
  std::vector<std::array<std::string, 2>> params;  // W, bias per layer
  std::vector<bool> tbs;
  for (const Layer& l : layers) {
    params.push_back({l.n->inputs[1], l.bias ? l.n->inputs[2] : ""});
    tbs.push_back(l.tb);
  }
  const Shape out_shape = st.out_shape;
  const std::optional<ClFlatten> clf = FindClFlatten(c, in);
  if (clf) st.detail += ", K channels last (after a Flatten)";
  impl.execs.push_back([=](Env& env, const AccelFn& accel, int step) {
    AccelJob job;
    job.kind = AccelJob::Kind::kMlp;
    job.m = int(M);
    job.k = sizes.front();  // A's columns and the output's (a split by rows slices both)
    job.n = sizes.back();
    job.sizes = sizes;
    job.relu = relu;
    job.out = out_fmt;
    job.a = Matrix16(env.at(in), false, mode);
    for (size_t i = 0; i < params.size(); ++i) {
      job.layers_b.push_back(Matrix16(env.at(params[i][0]), tbs[i], mode));
      std::vector<uint32_t> bias;
      if (!params[i][1].empty()) {
        for (float v : env.at(params[i][1]).f) bias.push_back(F32Bits(v));
      }
      job.layers_bias.push_back(std::move(bias));
    }
    job.from_a = env.From(in, M, sizes.front(), host::OutFormat::kBf16);
    if (clf) {
      job.a = PermuteK(job.a, M, sizes.front(), *clf, true);
      job.layers_b[0] = PermuteK(job.layers_b[0], sizes[0], sizes[1], *clf, false);
      job.from_a = env.From(clf->src, M * clf->S, clf->C, host::OutFormat::kBf16);
      job.from_a_group = int(clf->S);
    }
    env.Prepare(&job);
    const std::vector<uint32_t> o = accel(job, step);
    Tensor y;
    y.shape = out_shape;
    y.f.resize(o.size());
    for (size_t i = 0; i < o.size(); ++i) y.f[i] = OutValue(o[i], out_fmt);
    env[out_name] = std::move(y);
    env.Produced(out_name, M, sizes.back(), out_fmt);
  });
  return true;
}

void PlanGemm(Ctx& c, const Node& n, Plan::Impl& impl, Step& st, std::set<size_t>& done) {
  CheckAttrs(n, {"alpha", "beta", "transA", "transB", "broadcast"});
  const Shape a = c.ShapeOf(n, 0), b = c.ShapeOf(n, 1);
  if (a.size() != 2 || b.size() != 2) {
    Fail(n, fmt::format("A {} and B {} must be 2-D", ShapeText(a), ShapeText(b)));
  }
  const bool ta = AttrInt(n, "transA", 0) != 0, tb = AttrInt(n, "transB", 0) != 0;
  const float alpha = AttrFloat(n, "alpha", 1.0f), beta = AttrFloat(n, "beta", 1.0f);
  const int64_t M = ta ? a[1] : a[0], K = ta ? a[0] : a[1];
  const int64_t Kb = tb ? b[1] : b[0], N = tb ? b[0] : b[1];
  if (K != Kb) {
    Fail(n, fmt::format("A {} and B {} do not multiply (transA {}, transB {})", ShapeText(a),
                        ShapeText(b), int(ta), int(tb)));
  }
  const bool has_c = c.Has(n, 2) && beta != 0.0f;
  Shape cs;
  if (has_c) {
    cs = c.ShapeOf(n, 2);
    const Shape bc = Broadcast(n, cs, {M, N});
    if (bc != Shape{M, N})
      Fail(n, fmt::format("C {} does not broadcast to ({}, {})", ShapeText(cs), M, N));
  }
  const bool host_scale = alpha != 1.0f;
  Epilogue ep = FuseRelu(c, n.outputs[0], !host_scale);
  if (host_scale) ep.out = host::OutFormat::kFp32;  // alpha applies to the fp32 sum
  for (size_t i : ep.fused) Fold(c, i, &st, &done);
  const bool bias_row =
      has_c && (cs.size() == 1 || (cs.size() == 2 && cs[0] == 1)) && Elements(cs) == N;
  const bool copy16 = !host_scale && ep.out == host::OutFormat::kFp32 && c.Bf16Reader(ep.value);
  std::vector<std::string> how;
  if (ta || tb) how.push_back("transposed by the host");
  if (host_scale)
    how.push_back(fmt::format("alpha {} and beta·C on the host", alpha));
  else if (has_c && beta != 1.0f)
    how.push_back(fmt::format("beta {}·C on the host", beta));
  st.detail = fmt::format("{}", fmt::join(how, ", "));
  st.accel = true;
  st.klass = "dense";
  st.jobs = 1;
  st.macs = uint64_t(M * K * N);
  st.out_shape = {M, N};
  st.inputs = {n.inputs[0], n.inputs[1]};
  if (has_c) st.inputs.push_back(n.inputs[2]);
  st.outputs = {ep.value};
  c.shapes[ep.value] = st.out_shape;
  const num::Mode mode = c.mode;
  const Tensor* bconst = c.Const(n, 1);
  std::vector<uint16_t> b16;
  if (bconst != nullptr) b16 = Matrix16(*bconst, tb, mode);
  const std::string an = n.inputs[0], bn = n.inputs[1], cn = has_c ? n.inputs[2] : "";
  const Shape out_shape = st.out_shape;
  // (Not with a transposed A: its K runs down the rows.)
  const std::optional<ClFlatten> clf = ta ? std::nullopt : FindClFlatten(c, an);
  if (clf)
    st.detail += fmt::format("{}K channels last (after a Flatten)", st.detail.empty() ? "" : ", ");
  impl.execs.push_back([=](Env& env, const AccelFn& accel, int step) {
    AccelJob job;
    job.kind = AccelJob::Kind::kGemm;
    job.m = int(M);
    job.k = int(K);
    job.n = int(N);
    job.a = Matrix16(env.at(an), ta, mode);
    job.b = bconst != nullptr ? b16 : Matrix16(env.at(bn), tb, mode);
    job.relu = ep.relu;
    job.out = ep.out;
    // beta·C, broadcast to M x N (fp32 products on the host when beta != 1).
    std::vector<float> cv;
    if (has_c) {
      const Tensor& ct = env.at(cn);
      const auto idx = BroadcastIndex(ct.shape, out_shape);
      cv.resize(idx.size());
      for (size_t i = 0; i < idx.size(); ++i) {
        const float v = ct.f[size_t(idx[i])];
        cv[i] = beta == 1.0f ? v : HostMul(beta, v);
      }
    }
    if (has_c && !host_scale) {
      if (bias_row) {
        for (int64_t j = 0; j < N; ++j) job.bias.push_back(F32Bits(cv[size_t(j)]));
      } else {
        for (float v : cv) job.c0.push_back(F32Bits(v));
      }
    }
    if (!ta) job.from_a = env.From(an, M, K, host::OutFormat::kBf16);
    if (clf) {
      job.a = PermuteK(job.a, M, K, *clf, true);
      job.b = PermuteK(job.b, K, N, *clf, false);
      job.from_a = env.From(clf->src, M * clf->S, clf->C, host::OutFormat::kBf16);
      job.from_a_group = int(clf->S);
    }
    job.also_bf16 = copy16 && job.c0.empty();
    env.Prepare(&job);
    const std::vector<uint32_t> out = accel(job, step);
    Tensor y;
    y.shape = out_shape;
    y.f.resize(out.size());
    for (size_t i = 0; i < out.size(); ++i) {
      float v = OutValue(out[i], ep.out);
      if (host_scale) {
        v = HostMul(alpha, v);
        if (has_c) v = HostAdd(v, cv[i]);
      }
      y.f[i] = v;
    }
    env[ep.value] = std::move(y);
    if (!host_scale) env.Produced(ep.value, M, N, ep.out, copy16 && job.c0.empty());
  });
}

void PlanMatMul(Ctx& c, const Node& n, Plan::Impl& impl, Step& st, std::set<size_t>& done) {
  CheckAttrs(n, {});
  Shape a = c.ShapeOf(n, 0), b = c.ShapeOf(n, 1);
  if (a.empty() || b.empty()) Fail(n, "scalar operands are not supported");
  const bool a1 = a.size() == 1, b1 = b.size() == 1;
  if (a1) a.insert(a.begin(), 1);
  if (b1) b.push_back(1);
  const int64_t M = a[a.size() - 2], K = a.back(), Kb = b[b.size() - 2], N = b.back();
  if (K != Kb) {
    Fail(n, fmt::format("A {} and B {} do not multiply", ShapeText(c.ShapeOf(n, 0)),
                        ShapeText(c.ShapeOf(n, 1))));
  }
  const Shape abatch(a.begin(), a.end() - 2), bbatch(b.begin(), b.end() - 2);
  const Shape batch = Broadcast(n, abatch, bbatch);
  Shape out = batch;
  if (!a1) out.push_back(M);
  if (!b1) out.push_back(N);
  const Epilogue ep = FuseRelu(c, n.outputs[0], true);
  for (size_t i : ep.fused) Fold(c, i, &st, &done);
  const int64_t nb = Elements(batch);
  // B shared by every batch (2-D or broadcast): one GEMM with the batches stacked as rows.
  const bool shared_b = Elements(bbatch) == 1;
  st.accel = true;
  st.klass = "matmul";
  st.jobs = shared_b ? 1 : int(nb);
  st.detail = shared_b ? (nb > 1 ? fmt::format("{} batches as rows of one GEMM", nb) : "")
                       : fmt::format("{} batched GEMMs", nb);
  st.macs = uint64_t(nb * M * K * N);
  st.out_shape = out;
  st.inputs = {n.inputs[0], n.inputs[1]};
  st.outputs = {ep.value};
  c.shapes[ep.value] = out;
  const num::Mode mode = c.mode;
  const std::string an = n.inputs[0], bn = n.inputs[1];
  impl.execs.push_back([=](Env& env, const AccelFn& accel, int step) {
    const Tensor& at = env.at(an);
    const Tensor& bt = env.at(bn);
    // Batch index -> offsets of A's and B's matrices (broadcast).
    Shape ab = abatch, bb = bbatch;
    const auto ai = BroadcastIndex(ab, batch), bi = BroadcastIndex(bb, batch);
    Tensor y;
    y.shape = out;
    y.f.resize(size_t(Elements(out)));
    auto run = [&](int64_t rows, const std::vector<int64_t>& a_mats, int64_t b_mat,
                   int64_t out_first) {
      AccelJob job;
      job.kind = AccelJob::Kind::kGemm;
      job.m = int(rows);
      job.k = int(K);
      job.n = int(N);
      job.relu = ep.relu;
      job.out = ep.out;
      job.a.reserve(size_t(rows * K));
      for (int64_t am : a_mats) {
        for (int64_t i = 0; i < M * K; ++i) {
          job.a.push_back(Bf16(at.f[size_t(am * M * K + i)], mode));
        }
      }
      job.b.resize(size_t(K * N));
      for (int64_t i = 0; i < K * N; ++i) {
        job.b[size_t(i)] = Bf16(bt.f[size_t(b_mat * K * N + i)], mode);
      }
      env.Prepare(&job);
      const auto o = accel(job, step);
      for (size_t i = 0; i < o.size(); ++i) y.f[size_t(out_first) + i] = OutValue(o[i], ep.out);
    };
    if (shared_b) {
      run(nb * M, ai, 0, 0);
    } else {
      for (int64_t i = 0; i < nb; ++i) run(M, {ai[size_t(i)]}, bi[size_t(i)], i * M * N);
    }
    env[ep.value] = std::move(y);
  });
}

// ---------------------------------------------------------------------------------------------
// Host steps

Exec Unary(const std::string& in, const std::string& out, std::function<float(float)> f) {
  return [=](Env& env, const AccelFn&, int) {
    const Tensor& x = env.at(in);
    Tensor y;
    y.shape = x.shape;
    y.f.resize(x.f.size());
    for (size_t i = 0; i < x.f.size(); ++i) y.f[i] = f(x.f[i]);
    env[out] = std::move(y);
  };
}

void PlanPool(Ctx& c, const Node& n, Plan::Impl& impl, Step& st) {
  const bool max = n.op == "MaxPool" || n.op == "GlobalMaxPool";
  const bool global = n.op.rfind("Global", 0) == 0;
  const Shape x = c.ShapeOf(n, 0);
  if (Outputs(n) > 1) Fail(n, "the Indices output is not supported");
  Window win;
  bool include_pad = false;
  if (global) {
    CheckAttrs(n, {});
    if (x.size() < 3) Fail(n, fmt::format("input {} has no spatial axes", ShapeText(x)));
    win.h = 1;
    win.w = Elements(Shape(x.begin() + 2, x.end()));
    win.kw = win.w;
    win.oh = win.ow = 1;
  } else {
    if (max) {
      CheckAttrs(n, {"auto_pad", "ceil_mode", "dilations", "kernel_shape", "pads", "storage_order",
                     "strides"});
      if (AttrInt(n, "storage_order", 0) != 0) Fail(n, "storage_order 1 is not supported");
    } else {
      CheckAttrs(n,
                 {"auto_pad", "ceil_mode", "count_include_pad", "kernel_shape", "pads", "strides"});
      include_pad = AttrInt(n, "count_include_pad", 0) != 0;
    }
    if (!n.attrs.count("kernel_shape")) Fail(n, "kernel_shape is missing");
    if (x.size() != 3 && x.size() != 4) {
      Fail(n, fmt::format("{}-D input {}: only 1-D and 2-D pooling is supported",
                          x.size() < 2 ? 0 : x.size() - 2, ShapeText(x)));
    }
    win = MakeWindow(n, x, AttrInts(n, "kernel_shape", {}), true);
  }
  Shape out = x;
  if (global) {
    for (size_t i = 2; i < out.size(); ++i) out[i] = 1;
  } else {
    out = SpatialShape(x, x[1], win);
  }
  st.out_shape = out;
  st.inputs = {n.inputs[0]};
  st.outputs = {n.outputs[0]};
  c.shapes[n.outputs[0]] = out;
  const std::string in = n.inputs[0], on = n.outputs[0];
  const int64_t planes = x[0] * x[1];
  if (c.vector_unit) {
    // On the vector unit (host::CompilePool): the NCHW input moved to NHWC and back.
    for (int64_t v : {x[0], x[1], win.h, win.w, win.kh, win.kw, win.sh, win.sw, win.dh, win.dw,
                      win.pt, win.pl, win.pb, win.pr, win.oh, win.ow}) {
      if (v > 65535) Fail(n, fmt::format("a dimension {} > 65535 on the vector unit", v));
    }
    host::PoolShape ps;
    ps.n = int(x[0]), ps.c = int(x[1]), ps.h = int(win.h), ps.w = int(win.w);
    ps.kh = int(win.kh), ps.kw = int(win.kw), ps.sh = int(win.sh), ps.sw = int(win.sw);
    ps.dh = int(win.dh), ps.dw = int(win.dw);
    ps.pt = int(win.pt), ps.pl = int(win.pl), ps.pb = int(win.pb), ps.pr = int(win.pr);
    ps.oh = int(win.oh), ps.ow = int(win.ow);
    ps.max = max;
    ps.count_include_pad = include_pad;
    st.accel = true;
    st.jobs = 1;
    st.klass = "pool";
    st.detail = "vector unit";
    const bool copy16 = c.Bf16Reader(n.outputs[0]);
    impl.execs.push_back([=](Env& env, const AccelFn& accel, int step) {
      const Tensor& xt = env.at(in);
      const int64_t C = ps.c, hw = int64_t(ps.h) * ps.w, ohw = int64_t(ps.oh) * ps.ow;
      AccelJob job;
      job.kind = AccelJob::Kind::kPool;
      job.pool = ps;
      job.m = int(ps.n * ohw);
      job.n = ps.c;
      job.va.resize(xt.f.size());
      ForChannelsLast(ps.n, C, hw,
                      [&](size_t nchw, size_t nhwc) { job.va[nhwc] = F32Bits(xt.f[nchw]); });
      job.from_a = env.From(in, ps.n * hw, C, host::OutFormat::kFp32);
      if (job.from_a < 0) job.a_pieces = env.Pieces(in, ps.n * hw, C, host::OutFormat::kFp32);
      if (!job.a_pieces.empty()) job.a_cat = in;
      job.also_bf16 = copy16;
      env.Prepare(&job);
      const std::vector<uint32_t> r = accel(job, step);
      Tensor y;
      y.shape = out;
      y.f.resize(size_t(planes * ohw));
      ForChannelsLast(ps.n, C, ohw,
                      [&](size_t nchw, size_t nhwc) { y.f[nchw] = F32FromBits(r.at(nhwc)); });
      env[on] = std::move(y);
      env.Produced(on, ps.n * ohw, C, host::OutFormat::kFp32, copy16);
    });
    return;
  }
  impl.execs.push_back([=](Env& env, const AccelFn&, int) {
    const Tensor& xt = env.at(in);
    Tensor y;
    y.shape = out;
    y.f.resize(size_t(planes * win.oh * win.ow));
    std::vector<int64_t> idx;
    for (int64_t p = 0; p < planes; ++p) {
      const float* base = xt.f.data() + p * win.h * win.w;
      for (int64_t oh = 0; oh < win.oh; ++oh) {
        for (int64_t ow = 0; ow < win.ow; ++ow) {
          idx.clear();
          int64_t padded = 0;  // window positions inside the padded input
          for (int64_t i = 0; i < win.kh; ++i) {
            const int64_t h = oh * win.sh - win.pt + i * win.dh;
            for (int64_t j = 0; j < win.kw; ++j) {
              const int64_t w = ow * win.sw - win.pl + j * win.dw;
              if (h >= -win.pt && h < win.h + win.pb && w >= -win.pl && w < win.w + win.pr) {
                ++padded;
              }
              if (h >= 0 && h < win.h && w >= 0 && w < win.w) idx.push_back(h * win.w + w);
            }
          }
          float v;
          if (idx.empty()) {
            v = max ? -INFINITY : 0.0f;
          } else if (max) {
            v = MaxOf(base, idx.data(), int(idx.size()));
          } else {
            const float s = SumOf(base, idx.data(), int(idx.size()));
            v = HostDiv(s, float(include_pad ? padded : int64_t(idx.size())));
          }
          y.f[size_t((p * win.oh + oh) * win.ow + ow)] = v;
        }
      }
    }
    env[on] = std::move(y);
  });
}

void PlanSoftmax(Ctx& c, const Node& n, Plan::Impl& impl, Step& st) {
  CheckAttrs(n, {"axis"});
  const Shape x = c.ShapeOf(n, 0);
  if (x.empty()) Fail(n, "a scalar input is not supported");
  const bool coerce = c.g.opset < 13;  // before opset 13: softmax of the input flattened to 2-D
  const int64_t axis = NormAxis(n, AttrInt(n, "axis", coerce ? 1 : -1), x.size(), false);
  int64_t outer = 1, len = 1, inner = 1;
  for (size_t i = 0; i < x.size(); ++i) {
    if (int64_t(i) < axis) {
      outer *= x[i];
    } else if (coerce || int64_t(i) == axis) {
      len *= x[i];
    } else {
      inner *= x[i];
    }
  }
  st.out_shape = x;
  st.inputs = {n.inputs[0]};
  st.outputs = {n.outputs[0]};
  c.shapes[n.outputs[0]] = x;
  const std::string in = n.inputs[0], on = n.outputs[0];
  const bool log = n.op == "LogSoftmax";
  // On the vector unit (host::CompileSoftmax, the contract's vector softmax) when its vector
  // memory holds a slice: the slices moved to the lanes (row i: element i of every slice).
  if (c.vmem_depth >= host::SoftmaxRows(int(std::min<int64_t>(len, 1 << 20))) && len <= 65535 &&
      outer * inner <= (int64_t(1) << 30)) {
    st.accel = true;
    st.jobs = 1;
    st.klass = "vector";
    st.detail = fmt::format("vector unit: {} slices of {}", outer * inner, len);
    impl.execs.push_back([=](Env& env, const AccelFn& accel, int step) {
      const Tensor& xt = env.at(in);
      const int64_t slices = outer * inner;
      AccelJob job;
      job.kind = AccelJob::Kind::kSoftmax;
      job.log = log;
      job.m = int(len);
      job.n = int(slices);
      job.va.resize(xt.f.size());
      for (int64_t o = 0; o < outer; ++o) {
        for (int64_t i = 0; i < len; ++i) {
          for (int64_t k = 0; k < inner; ++k) {
            job.va[size_t(i * slices + o * inner + k)] =
                F32Bits(xt.f[size_t((o * len + i) * inner + k)]);
          }
        }
      }
      env.Prepare(&job);
      const std::vector<uint32_t> r = accel(job, step);
      Tensor y;
      y.shape = x;
      y.f.resize(xt.f.size());
      for (int64_t o = 0; o < outer; ++o) {
        for (int64_t i = 0; i < len; ++i) {
          for (int64_t k = 0; k < inner; ++k) {
            y.f[size_t((o * len + i) * inner + k)] =
                F32FromBits(r.at(size_t(i * slices + o * inner + k)));
          }
        }
      }
      env[on] = std::move(y);
    });
    return;
  }
  impl.execs.push_back([=](Env& env, const AccelFn&, int) {
    const Tensor& xt = env.at(in);
    Tensor y;
    y.shape = x;
    y.f.resize(xt.f.size());
    for (int64_t o = 0; o < outer; ++o) {
      for (int64_t i = 0; i < inner; ++i) {
        const size_t first = size_t(o * len * inner + i);
        (log ? LogSoftmaxSlice : SoftmaxSlice)(xt.f.data() + first, y.f.data() + first, len, inner);
      }
    }
    env[on] = std::move(y);
  });
}

// A data move: the output is the input's elements in the order `perm` gives (empty: unchanged).
Exec Move(const std::string& in, const std::string& out, const Shape& shape,
          std::vector<int64_t> perm) {
  return [=](Env& env, const AccelFn&, int) {
    const Tensor& x = env.at(in);
    Tensor y;
    y.shape = shape;
    if (perm.empty()) {
      y.f = x.f;
    } else {
      y.f.resize(x.f.size());
      for (size_t i = 0; i < perm.size(); ++i) y.f[i] = x.f[size_t(perm[i])];
    }
    env[out] = std::move(y);
  };
}

// The vector unit's operators (docs/vpu.md; docs/onnx.md, "Vector operators"): each a chain of
// the contract's vector operations (isa::ApplyVectorOp) applied elementwise, on the accelerator
// (an AccelJob of kind kVector) when the plan is for a machine with the vector unit, else on the
// host with the same operations, so the bits are the same either way.
bool IsVectorOp(const std::string& op) {
  static const std::set<std::string> kOps = {
      "Sigmoid",   "Tanh", "Exp", "Sqrt", "Log", "Erf",  "Reciprocal", "Neg", "Clip",
      "LeakyRelu", "Mul",  "Sub", "Div",  "Pow", "Gelu", "Max",        "Min"};
  return kOps.count(op) != 0;
}

// A constant input that is one float (a scalar for a stage), or nullopt.
std::optional<float> ScalarConst(const Ctx& c, const Node& n, size_t input) {
  const Tensor* t = c.Const(n, input);
  if (t == nullptr || t->is_int || t->f.size() != 1) return std::nullopt;
  return t->f[0];
}

// The stage that applies node `r` to the running value `v` (of shape `shape`) when r is an
// elementwise vector operator that can join the step computing v: a unary one (Sigmoid, Tanh,
// Exp, Sqrt, Log, Erf, Reciprocal, Neg, Relu, LeakyRelu), or Add, Sub, Mul, Div, Max, Min of v
// (the first operand for Sub and Div) and a constant scalar or a tensor of v's shape or
// broadcast to it that the step already reads, a graph input or a constant (so it exists when
// the step runs); *b is then that tensor's name. nullopt otherwise.
std::optional<host::VectorStage> FusedStage(const Ctx& c, const Node& r, const std::string& v,
                                            const Shape& shape,
                                            const std::vector<std::string>& step_inputs,
                                            std::string* b) {
  using host::VectorB;
  using isa::VectorOp;
  if (r.outputs.size() != 1 || r.inputs.empty() || r.inputs[0].empty()) return std::nullopt;
  static const std::map<std::string, VectorOp> kUnary = {
      {"Sigmoid", VectorOp::kSigmoid},  {"Tanh", VectorOp::kTanh}, {"Exp", VectorOp::kExp},
      {"Sqrt", VectorOp::kSqrt},        {"Log", VectorOp::kLog},   {"Erf", VectorOp::kErf},
      {"Reciprocal", VectorOp::kRecip}, {"Relu", VectorOp::kRelu}};
  if (auto it = kUnary.find(r.op); it != kUnary.end()) {
    if (!r.attrs.empty() || r.inputs.size() != 1) return std::nullopt;
    return host::VectorStage{it->second};
  }
  if (r.op == "Neg" && r.attrs.empty() && r.inputs.size() == 1) {
    return host::VectorStage{VectorOp::kMul, VectorB::kScalar, F32Bits(-1.0f)};
  }
  if (r.op == "LeakyRelu" && r.inputs.size() == 1) {
    for (const auto& [k, a] : r.attrs) {
      if (k != "alpha") return std::nullopt;
    }
    return host::VectorStage{VectorOp::kLeakyRelu, VectorB::kScalar,
                             F32Bits(AttrFloat(r, "alpha", 0.01f))};
  }
  static const std::map<std::string, VectorOp> kBinary = {
      {"Add", VectorOp::kAdd}, {"Sub", VectorOp::kSub}, {"Mul", VectorOp::kMul},
      {"Div", VectorOp::kDiv}, {"Max", VectorOp::kMax}, {"Min", VectorOp::kMin}};
  const auto it = kBinary.find(r.op);
  if (it == kBinary.end() || !r.attrs.empty() || r.inputs.size() != 2) return std::nullopt;
  const bool commutes = r.op != "Sub" && r.op != "Div";  // bitwise, in the contract
  size_t other;
  if (r.inputs[0] == v && r.inputs[1] != v) {
    other = 1;
  } else if (r.inputs[1] == v && r.inputs[0] != v && commutes) {
    other = 0;
  } else {
    return std::nullopt;
  }
  // Only an operand that exists when the step runs (and so has a shape now).
  const std::string& t = r.inputs[other];
  const bool ready =
      std::find(step_inputs.begin(), step_inputs.end(), t) != step_inputs.end() ||
      c.Const(r, other) != nullptr ||
      std::any_of(c.g.inputs.begin(), c.g.inputs.end(), [&](const auto& i) { return i.name == t; });
  if (!ready) return std::nullopt;
  const Shape os = c.ShapeOf(r, other);
  if (Elements(os) != 1 && Broadcast(r, shape, os) != shape) return std::nullopt;
  if (const std::optional<float> k = ScalarConst(c, r, other)) {
    return host::VectorStage{it->second, VectorB::kScalar, F32Bits(*k)};
  }
  *b = t;
  return host::VectorStage{it->second, VectorB::kTensor};
}

void PlanVector(Ctx& c, const Node& n, Plan::Impl& impl, Step& st, std::set<size_t>& done) {
  using host::VectorB;
  using host::VectorStage;
  using isa::VectorOp;
  const std::string& op = n.op;
  if (Outputs(n) != 1) Fail(n, fmt::format("{} outputs; one is supported", Outputs(n)));
  // The work in parts, each one job: stages on the running value with at most one second operand
  // (a constant scalar in the stages, a one-element tensor read when the step runs, or a tensor
  // broadcast to the output).
  struct Part {
    std::vector<VectorStage> stages;
    std::string b;       // a tensor operand (kTensor), or empty
    std::string scalar;  // a one-element tensor whose value is stage `scalar_stage`'s scalar
    size_t scalar_stage = 0;
    bool row = false;  // b holds one value per channel: a row for every row (VectorB::kRow)
  };
  std::vector<Part> parts(1);
  Shape shape = c.ShapeOf(n, 0);
  bool swapped = false;  // A is input 1 (Add, Mul)
  const auto scalar = [](VectorOp o, float v) {
    return VectorStage{o, VectorB::kScalar, F32Bits(v)};
  };
  if (op == "Sigmoid" || op == "Tanh" || op == "Exp" || op == "Sqrt" || op == "Reciprocal" ||
      op == "Log" || op == "Erf") {
    CheckAttrs(n, {});
    const VectorOp o = op == "Sigmoid" ? VectorOp::kSigmoid
                       : op == "Tanh"  ? VectorOp::kTanh
                       : op == "Exp"   ? VectorOp::kExp
                       : op == "Sqrt"  ? VectorOp::kSqrt
                       : op == "Log"   ? VectorOp::kLog
                       : op == "Erf"   ? VectorOp::kErf
                                       : VectorOp::kRecip;
    parts[0].stages.push_back({o});
  } else if (op == "Neg") {
    CheckAttrs(n, {});
    parts[0].stages.push_back(scalar(VectorOp::kMul, -1.0f));  // exact: x·(−1) + (−0)
  } else if (op == "Pow") {
    // A constant exponent of 1, 2, 3 or -1: x, x·x (correctly rounded, as pow), (x·x)·x, recip.
    CheckAttrs(n, {});
    if (n.inputs.size() != 2) Fail(n, fmt::format("{} inputs; two are supported", n.inputs.size()));
    const std::optional<float> e = ScalarConst(c, n, 1);
    if (!e || (*e != 1.0f && *e != 2.0f && *e != 3.0f && *e != -1.0f)) {
      Fail(n, "the exponent must be a constant 1, 2, 3 or -1");
    }
    auto& stages = parts[0].stages;
    if (*e == 1.0f) stages.push_back({VectorOp::kCopy});
    if (*e == -1.0f) stages.push_back({VectorOp::kRecip});
    for (int k = 1; k < int(*e); ++k) stages.push_back({VectorOp::kMul, VectorB::kTensor});
    if (*e > 1.0f) parts[0].b = n.inputs[0];
  } else if (op == "Gelu") {
    // Opset 20: "none" is PyTorch's export before it, 0.5·x·(1 + erf(x / sqrt(2))) in that order;
    // "tanh" 0.5·x·(1 + tanh(sqrt(2/pi)·(x + 0.044715·x³))), with x³ = (x·x)·x. B is x.
    CheckAttrs(n, {"approximate"});
    const std::string approx = AttrString(n, "approximate", "none");
    auto& stages = parts[0].stages;
    const VectorStage by_x{VectorOp::kMul, VectorB::kTensor};
    if (approx == "none") {
      stages = {scalar(VectorOp::kDiv, 1.41421356f), {VectorOp::kErf}};
    } else if (approx == "tanh") {
      stages = {by_x,
                by_x,
                scalar(VectorOp::kMul, 0.044715f),
                {VectorOp::kAdd, VectorB::kTensor},
                scalar(VectorOp::kMul, 0.797884561f),
                {VectorOp::kTanh}};
    } else {
      Fail(n, fmt::format("approximate '{}'; 'none' and 'tanh' are supported", approx));
    }
    stages.push_back(scalar(VectorOp::kAdd, 1.0f));
    stages.push_back(by_x);
    stages.push_back(scalar(VectorOp::kMul, 0.5f));
    parts[0].b = n.inputs[0];
  } else if (op == "Relu") {  // (a machine with the vector unit only)
    CheckAttrs(n, {});
    parts[0].stages.push_back({VectorOp::kRelu});
  } else if (op == "LeakyRelu") {
    CheckAttrs(n, {"alpha"});
    parts[0].stages.push_back(scalar(VectorOp::kLeakyRelu, AttrFloat(n, "alpha", 0.01f)));
  } else if (op == "Clip") {
    // Opset 11 on: min and max are optional inputs (one-element tensors); before: attributes.
    // max(x, min) then min(·, max), a part each.
    CheckAttrs(n, {"min", "max"});
    parts.clear();
    for (size_t i = 1; i <= 2; ++i) {
      const char* name = i == 1 ? "min" : "max";
      const VectorOp o = i == 1 ? VectorOp::kMax : VectorOp::kMin;
      Part p;
      if (n.attrs.count(name)) {
        p.stages.push_back(scalar(o, AttrFloat(n, name, 0.0f)));
      } else if (c.Has(n, i)) {
        if (Elements(c.ShapeOf(n, i)) != 1) {
          Fail(n, fmt::format("{} has shape {}; a scalar is required", name,
                              ShapeText(c.ShapeOf(n, i))));
        }
        if (const std::optional<float> v = ScalarConst(c, n, i)) {
          p.stages.push_back(scalar(o, *v));
        } else {
          p.stages.push_back({o, VectorB::kScalar});
          p.scalar = n.inputs[i];
        }
      } else {
        continue;
      }
      if (!parts.empty() && p.scalar.empty() && parts.back().scalar.empty()) {
        parts.back().stages.push_back(p.stages[0]);  // both constant: one job
      } else {
        parts.push_back(std::move(p));
      }
    }
    if (parts.empty()) parts.push_back({{{VectorOp::kCopy}}, "", "", 0});
  } else {  // Add, Mul, Sub, Div (two operands), Max, Min (one or more), broadcast
    if (op == "Add") {
      CheckAttrs(n, {"broadcast", "axis"});
      if (n.attrs.count("axis")) Fail(n, "the legacy 'axis' broadcast is not supported");
    } else {
      CheckAttrs(n, {});
    }
    const bool variadic = op == "Max" || op == "Min";
    if (variadic ? n.inputs.empty() : n.inputs.size() != 2) {
      Fail(n, fmt::format("{} inputs; {} supported", n.inputs.size(),
                          variadic ? "one or more are" : "two are"));
    }
    const VectorOp o = op == "Add"   ? VectorOp::kAdd
                       : op == "Mul" ? VectorOp::kMul
                       : op == "Sub" ? VectorOp::kSub
                       : op == "Div" ? VectorOp::kDiv
                       : op == "Max" ? VectorOp::kMax
                                     : VectorOp::kMin;
    for (size_t i = 1; i < n.inputs.size(); ++i) shape = Broadcast(n, shape, c.ShapeOf(n, i));
    // Add and Mul (bitwise commutative: fma(a, 1, b) and fma(a, b, -0)) take the broadcast
    // operand as B, so that A is the full value (a squeeze-and-excite's scale · x).
    swapped = (op == "Add" || op == "Mul") && n.inputs.size() == 2 && c.ShapeOf(n, 0) != shape &&
              c.ShapeOf(n, 1) == shape;
    parts.clear();
    for (size_t i = 1; i < n.inputs.size(); ++i) {
      Part p;
      const size_t bi = swapped ? 0 : i;
      const std::optional<float> v = ScalarConst(c, n, bi);
      if (v && i + 1 == n.inputs.size() && c.ShapeOf(n, swapped ? 1 : 0) == shape) {
        p.stages.push_back(scalar(o, *v));
      } else {
        p.stages.push_back({o, VectorB::kTensor});
        p.b = n.inputs[bi];
      }
      parts.push_back(std::move(p));
    }
    if (parts.empty()) parts.push_back({{{VectorOp::kCopy}}, "", "", 0});
  }
  const std::string in = n.inputs[swapped ? 1 : 0];
  st.inputs.clear();
  if (swapped) st.inputs = {n.inputs[1], n.inputs[0]};
  for (const auto& i : n.inputs) {
    if (!i.empty() && !swapped) st.inputs.push_back(i);
  }
  // Elementwise readers join the step while each is the only reader of the value before it (a
  // residual add and its relu; GELU's x / sqrt(2), Erf, + 1, * x, * 0.5): their stages run on the
  // running value in the same jobs, in the graph's order, so the bits are those of one step each.
  std::string out = n.outputs[0];
  if (c.vector_unit) {
    while (const Node* r = c.OnlyConsumer(out)) {
      std::string b;
      const std::optional<VectorStage> s = FusedStage(c, *r, out, shape, st.inputs, &b);
      if (!s) break;
      if (!b.empty()) {
        if (!parts.back().b.empty()) parts.push_back(Part{});
        parts.back().b = b;
        if (std::find(st.inputs.begin(), st.inputs.end(), b) == st.inputs.end()) {
          st.inputs.push_back(b);
        }
      }
      parts.back().stages.push_back(*s);
      out = r->outputs[0];
      Fold(c, size_t(r - c.g.nodes.data()), &st, &done);
    }
  }
  st.outputs = {out};
  st.out_shape = shape;
  c.shapes[out] = shape;
  st.klass = "vector";
  std::string names;
  for (const Part& p : parts) {
    for (const auto& s : p.stages) {
      names += fmt::format("{}{}", names.empty() ? "" : ", ", isa::kVectorOps[size_t(s.op)].name);
    }
  }
  st.accel = c.vector_unit;
  st.jobs = c.vector_unit ? int(parts.size()) : 0;
  st.detail = fmt::format("{} ({})", c.vector_unit ? "vector unit" : "host, no vector unit", names);
  // An M × N view: channels last (N = C, M = N·H·W) for 3-D and higher shapes, as the
  // convolutions and pools store their outputs (so a whole-network program reads them as they
  // are); else N the innermost dimension.
  const bool cl = shape.size() >= 3;
  const int64_t cols = cl ? shape[1] : shape.empty() ? 1 : std::max<int64_t>(shape.back(), 1);
  const int64_t rows = cols == 0 ? 0 : Elements(shape) / cols;
  const int64_t inner =
      cl && shape[0] * shape[1] != 0 ? Elements(shape) / (shape[0] * shape[1]) : 1;
  const num::Mode mode = c.mode;
  const bool on_chip = c.vector_unit;
  const bool copy16 = on_chip && c.Bf16Reader(out);
  // A B of one value per channel for every image (shape (1, C, 1, 1), e.g. a squeeze-and-excite
  // scale) is, channels last, the same row for every row: a 1 x C operand (VectorB::kRow), which
  // a whole-network program reads where its producer stored it.
  for (Part& p : parts) {
    if (!on_chip || !cl || p.b.empty()) continue;
    Shape bs = c.shapes.at(p.b);
    if (bs.size() > shape.size()) continue;
    bs.insert(bs.begin(), shape.size() - bs.size(), 1);
    bool row = bs[1] == shape[1];
    for (size_t a = 0; a < bs.size(); ++a) row = row && (a == 1 || bs[a] == 1);
    if (!row) continue;
    p.row = true;
    for (auto& st : p.stages) {
      if (st.b == VectorB::kTensor) st.b = VectorB::kRow;
    }
  }
  impl.execs.push_back([=](Env& env, const AccelFn& accel, int step) {
    const auto bits = [&](const std::string& name) {
      const Tensor& t = env.at(name);
      const auto idx = BroadcastIndex(t.shape, shape);
      std::vector<uint32_t> v(idx.size());
      for (size_t i = 0; i < idx.size(); ++i) v[i] = F32Bits(t.f[size_t(idx[i])]);
      return v;
    };
    // NCHW <-> channels last (the identity for 2-D and smaller shapes).
    const auto relayout = [&](std::vector<uint32_t> v, bool to_channels_last) {
      if (!cl || inner == 1 || v.empty()) return v;
      std::vector<uint32_t> o(v.size());
      ForChannelsLast(shape[0], cols, inner, [&](size_t nchw, size_t nhwc) {
        if (to_channels_last) {
          o[nhwc] = v[nchw];
        } else {
          o[nchw] = v[nhwc];
        }
      });
      return o;
    };
    const auto to_cl = [&](std::vector<uint32_t> v) { return relayout(std::move(v), true); };
    const auto from_cl = [&](std::vector<uint32_t> v) { return relayout(std::move(v), false); };
    std::vector<uint32_t> r = bits(in);
    if (on_chip) r = to_cl(std::move(r));
    bool first = true;
    for (size_t pi = 0; pi < parts.size(); ++pi) {
      Part p = parts[pi];
      if (!p.scalar.empty()) p.stages[p.scalar_stage].scalar = F32Bits(env.at(p.scalar).f.at(0));
      std::vector<uint32_t> vb;
      if (!p.b.empty()) vb = bits(p.b);
      if (on_chip) {
        AccelJob job;
        job.kind = AccelJob::Kind::kVector;
        job.m = int(rows);
        job.n = int(cols);
        job.stages = p.stages;
        job.va = std::move(r);
        job.vb = to_cl(std::move(vb));
        if (p.row) job.vb.resize(size_t(cols));  // the first row: every row's
        job.from_a = first ? env.From(in, rows, cols, host::OutFormat::kFp32) : env.jobs - 1;
        if (!p.b.empty()) {
          job.from_b = env.From(p.b, p.row ? 1 : rows, cols, host::OutFormat::kFp32);
        }
        job.also_bf16 = copy16 && pi + 1 == parts.size();
        env.Prepare(&job);
        r = accel(job, step);
        first = false;
      } else {
        for (const VectorStage& s : p.stages) {
          for (size_t i = 0; i < r.size(); ++i) {
            const uint32_t bv = s.b == VectorB::kScalar ? s.scalar
                                : s.b == VectorB::kNone ? 0u
                                                        : vb[i];
            r[i] = isa::ApplyVectorOp(s.op, r[i], bv, 0, mode);
          }
        }
      }
    }
    if (on_chip) r = from_cl(std::move(r));
    Tensor y;
    y.shape = shape;
    y.f.resize(r.size());
    for (size_t i = 0; i < r.size(); ++i) y.f[i] = F32FromBits(r[i]);
    env[out] = std::move(y);
    if (on_chip) env.Produced(out, rows, cols, host::OutFormat::kFp32, copy16);
  });
}

// Data moves with several inputs or outputs or computed indices (docs/onnx.md): Concat, Split,
// Slice, Squeeze, Unsqueeze, Pad. Each output element is an input element (or Pad's value), so
// no bit changes; their index arguments must be constants when the plan is built.
bool IsDataMove(const std::string& op) {
  return op == "Concat" || op == "Split" || op == "Slice" || op == "Squeeze" || op == "Unsqueeze" ||
         op == "Pad" || op == "Resize" || op == "Gather";
}

// A constant int64 input's values (Error naming it when it is not one).
std::vector<int64_t> ConstInts(const Ctx& c, const Node& n, size_t input, const char* what) {
  const Tensor* t = c.Const(n, input);
  if (t == nullptr || !t->is_int) {
    Fail(n, fmt::format("{} must be a constant int64 tensor", what));
  }
  return t->i;
}

// Row-major strides of a shape.
std::vector<int64_t> Strides(const Shape& s) {
  std::vector<int64_t> st(s.size(), 1);
  for (size_t i = s.size(); i-- > 1;) st[i - 1] = st[i] * s[i];
  return st;
}

// For every element of `out` (row-major), the input element `map(axis, o)` gives per axis
// (-1 anywhere: the element is the fill value).
std::vector<int64_t> GatherIndex(const Shape& in, const Shape& out,
                                 const std::function<int64_t(size_t, int64_t)>& map) {
  const auto st = Strides(in);
  std::vector<int64_t> src(size_t(Elements(out)));
  std::vector<int64_t> cnt(out.size(), 0);
  for (size_t f = 0; f < src.size(); ++f) {
    int64_t o = 0;
    for (size_t a = 0; a < out.size() && o >= 0; ++a) {
      const int64_t i = map(a, cnt[a]);
      o = i < 0 ? -1 : o + i * st[a];
    }
    src[f] = o;
    for (size_t a = out.size(); a-- > 0;) {
      if (++cnt[a] < out[a]) break;
      cnt[a] = 0;
    }
  }
  return src;
}

void PlanMove(Ctx& c, const Node& n, Plan::Impl& impl, Step& st) {
  const std::string& op = n.op;
  for (const auto& i : n.inputs) {
    if (!i.empty() && !c.constants.count(i)) st.inputs.push_back(i);
  }
  if (st.inputs.empty() && c.Has(n, 0)) st.inputs.push_back(n.inputs[0]);
  st.detail = "data move";
  const Shape x = c.ShapeOf(n, 0);
  if (op == "Concat") {
    CheckAttrs(n, {"axis"});
    if (!n.attrs.count("axis")) Fail(n, "axis is missing");
    if (Outputs(n) != 1) Fail(n, fmt::format("{} outputs; one is supported", Outputs(n)));
    const int64_t axis = NormAxis(n, AttrInt(n, "axis", 0), x.size());
    Shape out = x;
    out[size_t(axis)] = 0;
    std::vector<std::string> ins;
    std::vector<int64_t> sizes;
    for (size_t k = 0; k < n.inputs.size(); ++k) {
      if (n.inputs[k].empty()) continue;
      const Shape s = c.ShapeOf(n, k);
      bool same = s.size() == x.size();
      for (size_t a = 0; same && a < s.size(); ++a) same = int64_t(a) == axis || s[a] == x[a];
      if (!same) {
        Fail(n, fmt::format("input {} {} does not match {} outside axis {}", k, ShapeText(s),
                            ShapeText(x), axis));
      }
      ins.push_back(n.inputs[k]);
      sizes.push_back(s[size_t(axis)]);
      out[size_t(axis)] += s[size_t(axis)];
    }
    int64_t outer = 1, inner = 1;
    for (size_t a = 0; a < x.size(); ++a) {
      if (int64_t(a) < axis) outer *= x[a];
      if (int64_t(a) > axis) inner *= x[a];
    }
    const std::string on = n.outputs[0];
    st.outputs = {on};
    st.out_shape = out;
    c.shapes[on] = out;
    impl.execs.push_back([=](Env& env, const AccelFn&, int) {
      Tensor y;
      y.shape = out;
      y.f.reserve(size_t(Elements(out)));
      for (int64_t o = 0; o < outer; ++o) {
        for (size_t k = 0; k < ins.size(); ++k) {
          const auto& f = env.at(ins[k]).f;
          const int64_t block = sizes[k] * inner;
          y.f.insert(y.f.end(), f.begin() + o * block, f.begin() + (o + 1) * block);
        }
      }
      env[on] = std::move(y);
      // Along the channels, channels last: each input's columns side by side (a whole-network
      // program stores its producers' outputs there: AccelJob::a_pieces).
      if (axis == 1 && out.size() >= 2) {
        Env::Cat cat;
        cat.rows = outer * inner, cat.cols = out[1];
        for (size_t k = 0; k < ins.size(); ++k) cat.parts.push_back({ins[k], sizes[k]});
        env.cats[on] = cat;
      }
    });
    return;
  }
  if (op == "Split") {
    CheckAttrs(n, {"axis", "split", "num_outputs"});
    const int64_t axis = NormAxis(n, AttrInt(n, "axis", 0), x.size());
    const int64_t dim = x[size_t(axis)];
    const auto outs = int64_t(n.outputs.size());
    std::vector<int64_t> split;
    if (c.Has(n, 1)) {
      split = ConstInts(c, n, 1, "split");
    } else if (n.attrs.count("split")) {
      split = AttrInts(n, "split", {});
    } else {
      const int64_t parts = AttrInt(n, "num_outputs", outs);
      const int64_t each = n.attrs.count("num_outputs") ? (dim + parts - 1) / parts : dim / parts;
      if (!n.attrs.count("num_outputs") && dim % parts != 0) {
        Fail(n, fmt::format("axis {} of {} does not split into {} equal parts", axis, ShapeText(x),
                            parts));
      }
      for (int64_t i = 0, left = dim; i < parts; ++i, left -= each) {
        split.push_back(std::min(each, left));
      }
    }
    int64_t total = 0;
    for (int64_t v : split) {
      if (v < 1) Fail(n, fmt::format("split {}: empty parts are not supported", IntsText(split)));
      total += v;
    }
    if (int64_t(split.size()) != outs || total != dim) {
      Fail(n, fmt::format("split {} does not cut axis {} ({}) into {} outputs", IntsText(split),
                          axis, dim, outs));
    }
    int64_t outer = 1, inner = 1;
    for (size_t a = 0; a < x.size(); ++a) {
      if (int64_t(a) < axis) outer *= x[a];
      if (int64_t(a) > axis) inner *= x[a];
    }
    std::vector<Shape> shapes;
    for (int64_t k = 0; k < outs; ++k) {
      Shape s = x;
      s[size_t(axis)] = split[size_t(k)];
      shapes.push_back(s);
      c.shapes[n.outputs[size_t(k)]] = s;
    }
    st.outputs = n.outputs;
    st.out_shape = shapes[0];
    const std::vector<std::string> names = n.outputs;
    const std::string in = n.inputs[0];
    impl.execs.push_back([=](Env& env, const AccelFn&, int) {
      const auto& f = env.at(in).f;
      int64_t first = 0;
      for (size_t k = 0; k < names.size(); ++k) {
        Tensor y;
        y.shape = shapes[k];
        y.f.reserve(size_t(Elements(shapes[k])));
        for (int64_t o = 0; o < outer; ++o) {
          const auto at = f.begin() + (o * dim + first) * inner;
          y.f.insert(y.f.end(), at, at + split[k] * inner);
        }
        first += split[k];
        env[names[k]] = std::move(y);
      }
    });
    return;
  }
  if (Outputs(n) != 1) Fail(n, fmt::format("{} outputs; one is supported", Outputs(n)));
  const std::string on = n.outputs[0], in = n.inputs[0];
  Shape out;
  std::vector<int64_t> src;  // empty: the same elements in the same order
  std::string value_name;    // Pad: a run-time constant_value
  float value = 0.0f;
  const bool new_axes = c.g.opset >= 13;
  if (op == "Squeeze" || op == "Unsqueeze") {
    CheckAttrs(n, {"axes"});
    const bool given = new_axes ? c.Has(n, 1) : n.attrs.count("axes") != 0;
    std::vector<int64_t> axes;
    if (given) axes = new_axes ? ConstInts(c, n, 1, "axes") : AttrInts(n, "axes", {});
    if (op == "Unsqueeze") {
      if (!given) Fail(n, "axes are missing");
      const size_t rank = x.size() + axes.size();
      std::vector<bool> added(rank, false);
      for (int64_t a : axes) {
        const int64_t na = NormAxis(n, a, rank);
        if (added[size_t(na)]) Fail(n, fmt::format("axes {} repeat an axis", IntsText(axes)));
        added[size_t(na)] = true;
      }
      for (size_t a = 0, k = 0; a < rank; ++a) out.push_back(added[a] ? 1 : x[k++]);
    } else {
      std::vector<bool> drop(x.size(), !given);
      if (!given) {
        for (size_t a = 0; a < x.size(); ++a) drop[a] = x[a] == 1;
      }
      for (int64_t a : axes) {
        const int64_t na = NormAxis(n, a, x.size());
        if (x[size_t(na)] != 1) {
          Fail(n, fmt::format("axis {} of {} is not 1", a, ShapeText(x)));
        }
        drop[size_t(na)] = true;
      }
      for (size_t a = 0; a < x.size(); ++a) {
        if (!drop[a]) out.push_back(x[a]);
      }
    }
  } else if (op == "Slice") {
    CheckAttrs(n, {"starts", "ends", "axes"});
    std::vector<int64_t> starts, ends, axes, steps;
    if (c.g.opset >= 10) {
      starts = ConstInts(c, n, 1, "starts");
      ends = ConstInts(c, n, 2, "ends");
      if (c.Has(n, 3)) axes = ConstInts(c, n, 3, "axes");
      if (c.Has(n, 4)) steps = ConstInts(c, n, 4, "steps");
    } else {
      starts = AttrInts(n, "starts", {});
      ends = AttrInts(n, "ends", {});
      axes = AttrInts(n, "axes", {});
    }
    if (axes.empty()) {
      for (size_t a = 0; a < starts.size(); ++a) axes.push_back(int64_t(a));
    }
    if (steps.empty()) steps.assign(starts.size(), 1);
    if (ends.size() != starts.size() || axes.size() != starts.size() ||
        steps.size() != starts.size()) {
      Fail(n, "starts, ends, axes and steps differ in length");
    }
    std::vector<int64_t> first(x.size(), 0), step(x.size(), 1);
    out = x;
    std::vector<bool> seen(x.size(), false);
    for (size_t k = 0; k < starts.size(); ++k) {
      const auto a = size_t(NormAxis(n, axes[k], x.size()));
      if (seen[a]) Fail(n, fmt::format("axes {} repeat an axis", IntsText(axes)));
      seen[a] = true;
      const int64_t d = x[a], sp = steps[k];
      if (sp == 0) Fail(n, "a step of 0");
      const auto clampi = [](int64_t v, int64_t lo, int64_t hi) { return std::clamp(v, lo, hi); };
      int64_t b = starts[k] < 0 ? starts[k] + d : starts[k];
      int64_t e = ends[k] < 0 ? ends[k] + d : ends[k];
      if (sp > 0) {
        b = clampi(b, 0, d), e = clampi(e, 0, d);
        out[a] = e > b ? (e - b + sp - 1) / sp : 0;
      } else {
        b = clampi(b, 0, d - 1), e = clampi(e, -1, d - 1);
        out[a] = b > e ? (b - e - sp - 1) / -sp : 0;
      }
      first[a] = b, step[a] = sp;
    }
    if (Elements(out) == 0) Fail(n, fmt::format("the slice of {} is empty", ShapeText(x)));
    src = GatherIndex(x, out, [=](size_t a, int64_t o) { return first[a] + o * step[a]; });
  } else if (op == "Gather") {
    // Gather with indices known when the plan is built (an embedding lookup by constant or
    // bound int64 indices): out = x's shape with axis replaced by the indices' shape.
    CheckAttrs(n, {"axis"});
    const Tensor* ix = c.Const(n, 1);
    if (ix == nullptr || !ix->is_int) Fail(n, "the indices must be constant integers");
    const int64_t axis = NormAxis(n, AttrInt(n, "axis", 0), x.size());
    const int64_t dim = x[size_t(axis)];
    int64_t outer = 1, inner = 1;
    for (size_t a = 0; a < x.size(); ++a) {
      if (int64_t(a) < axis) outer *= x[a];
      if (int64_t(a) > axis) inner *= x[a];
    }
    out.assign(x.begin(), x.begin() + axis);
    out.insert(out.end(), ix->shape.begin(), ix->shape.end());
    out.insert(out.end(), x.begin() + axis + 1, x.end());
    for (int64_t o = 0; o < outer; ++o) {
      for (int64_t j : ix->i) {
        if (j < -dim || j >= dim) {
          Fail(n, fmt::format("index {} is out of range for axis {} of {}", j, axis, dim));
        }
        for (int64_t k = 0; k < inner; ++k)
          src.push_back((o * dim + (j < 0 ? j + dim : j)) * inner + k);
      }
    }
    if (src.empty()) Fail(n, "the result is empty");
  } else if (op == "Resize") {
    // Nearest-neighbour resizing: each output element is the input element its coordinate maps
    // to (ONNX's coordinate_transformation_mode and nearest_mode, in binary64).
    CheckAttrs(n, {"coordinate_transformation_mode", "cubic_coeff_a", "exclude_outside",
                   "extrapolation_value", "mode", "nearest_mode", "antialias",
                   "keep_aspect_ratio_policy"});
    const std::string mode = AttrString(n, "mode", "nearest");
    if (mode != "nearest") Fail(n, fmt::format("mode '{}' is not supported", mode));
    const std::string ct = AttrString(n, "coordinate_transformation_mode", "half_pixel");
    const std::string nm = AttrString(n, "nearest_mode", "round_prefer_floor");
    if (ct != "half_pixel" && ct != "pytorch_half_pixel" && ct != "align_corners" &&
        ct != "asymmetric" && ct != "tf_half_pixel_for_nn") {
      Fail(n, fmt::format("coordinate_transformation_mode '{}' is not supported", ct));
    }
    if (nm != "round_prefer_floor" && nm != "round_prefer_ceil" && nm != "floor" && nm != "ceil") {
      Fail(n, fmt::format("nearest_mode '{}' is not supported", nm));
    }
    if (AttrInt(n, "antialias", 0) != 0) Fail(n, "antialias is not supported");
    // scales (input 2, float) or sizes (input 3, int64), constants.
    std::vector<double> scale(x.size(), 1.0);
    const Tensor* sc = c.Const(n, c.g.opset >= 11 ? 2 : 1);
    const Tensor* sz = c.g.opset >= 11 ? c.Const(n, 3) : nullptr;
    const bool has_sc = sc != nullptr && sc->Size() > 0, has_sz = sz != nullptr && sz->Size() > 0;
    if (has_sc == has_sz) Fail(n, "give constant scales or sizes (one of them)");
    out = x;
    if (has_sz) {
      if (!sz->is_int || sz->i.size() != x.size()) {
        Fail(n, fmt::format("sizes must be {} int64 values", x.size()));
      }
      for (size_t a = 0; a < x.size(); ++a) {
        out[a] = sz->i[a];
        scale[a] = double(out[a]) / double(x[a]);
      }
    } else {
      if (sc->is_int || sc->f.size() != x.size()) {
        Fail(n, fmt::format("scales must be {} float values", x.size()));
      }
      for (size_t a = 0; a < x.size(); ++a) {
        scale[a] = sc->f[a];
        out[a] = int64_t(std::floor(double(x[a]) * scale[a]));
      }
    }
    for (size_t a = 0; a < x.size(); ++a) {
      if (out[a] < 1 || scale[a] <= 0) {
        Fail(n, fmt::format("the output shape {} is empty", ShapeText(out)));
      }
    }
    src = GatherIndex(x, out, [=](size_t a, int64_t o) -> int64_t {
      const double in = double(x[a]), len = double(out[a]), s = scale[a];
      double v;
      if (ct == "half_pixel") {
        v = (double(o) + 0.5) / s - 0.5;
      } else if (ct == "pytorch_half_pixel") {
        v = len > 1 ? (double(o) + 0.5) / s - 0.5 : 0.0;
      } else if (ct == "align_corners") {
        v = len > 1 ? double(o) * (in - 1) / (len - 1) : 0.0;
      } else if (ct == "asymmetric") {
        v = double(o) / s;
      } else {  // tf_half_pixel_for_nn
        v = (double(o) + 0.5) / s;
      }
      double r;
      const bool half = v - std::floor(v) == 0.5;
      if (nm == "floor") {
        r = std::floor(v);
      } else if (nm == "ceil") {
        r = std::ceil(v);
      } else if (half) {
        r = nm == "round_prefer_floor" ? std::floor(v) : std::ceil(v);
      } else {
        r = std::round(v);
      }
      return std::clamp<int64_t>(int64_t(r), 0, x[a] - 1);
    });
  } else {  // Pad
    CheckAttrs(n, {"mode", "pads", "value"});
    const std::string mode = AttrString(n, "mode", "constant");
    if (mode != "constant" && mode != "reflect" && mode != "edge") {
      Fail(n, fmt::format("mode '{}' is not supported", mode));
    }
    std::vector<int64_t> pads;
    if (c.g.opset >= 11) {
      pads = ConstInts(c, n, 1, "pads");
      if (c.Has(n, 2)) {
        if (const Tensor* v = c.Const(n, 2)) {
          if (v->f.size() != 1) Fail(n, "constant_value must be one element");
          value = v->f[0];
        } else {
          value_name = n.inputs[2];
        }
      }
    } else {
      pads = AttrInts(n, "pads", {});
      value = AttrFloat(n, "value", 0.0f);
    }
    std::vector<int64_t> axes;
    if (c.Has(n, 3)) {
      axes = ConstInts(c, n, 3, "axes");
    } else {
      for (size_t a = 0; a < x.size(); ++a) axes.push_back(int64_t(a));
    }
    if (pads.size() != 2 * axes.size()) {
      Fail(n, fmt::format("pads {} do not match {} axes", IntsText(pads), axes.size()));
    }
    std::vector<int64_t> pb(x.size(), 0);
    out = x;
    for (size_t k = 0; k < axes.size(); ++k) {
      const auto a = size_t(NormAxis(n, axes[k], x.size()));
      pb[a] = pads[k];
      out[a] = x[a] + pads[k] + pads[k + axes.size()];
      if (out[a] < 1) Fail(n, fmt::format("pads {} leave axis {} empty", IntsText(pads), a));
      if (mode != "constant" && (pads[k] > 0 || pads[k + axes.size()] > 0) &&
          x[a] < (mode == "reflect" ? 2 : 1)) {
        Fail(n, fmt::format("{} padding of axis {} of size {}", mode, a, x[a]));
      }
      if (mode == "reflect" && std::max(pads[k], pads[k + axes.size()]) > x[a] - 1) {
        Fail(n, fmt::format("reflect pads {} exceed axis {} of size {}", IntsText(pads), a, x[a]));
      }
    }
    src = GatherIndex(x, out, [=](size_t a, int64_t o) -> int64_t {
      const int64_t i = o - pb[a], d = x[a];
      if (i >= 0 && i < d) return i;
      if (mode == "edge") return std::clamp<int64_t>(i, 0, d - 1);
      if (mode == "reflect") return i < 0 ? -i : 2 * (d - 1) - i;
      return -1;
    });
  }
  st.outputs = {on};
  st.out_shape = out;
  c.shapes[on] = out;
  impl.execs.push_back([=](Env& env, const AccelFn&, int) {
    const Tensor& t = env.at(in);
    Tensor y;
    y.shape = out;
    if (src.empty()) {
      y.f = t.f;
    } else {
      const float fill = value_name.empty() ? value : env.at(value_name).f.at(0);
      y.f.resize(src.size());
      for (size_t i = 0; i < src.size(); ++i) y.f[i] = src[i] < 0 ? fill : t.f[size_t(src[i])];
    }
    env[on] = std::move(y);
  });
}

// Shape computations folded when the plan is built (docs/onnx.md): Shape of a value whose shape
// is known, and Gather, Cast, the data moves and integer Add, Sub, Mul, Div whose inputs are all
// constants (PyTorch's `x.view(x.size(0), -1)` exports Shape, Gather, Unsqueeze, Concat and a
// Reshape reading the result). Their outputs become constants. Returns false for a node that is
// not such a computation.
bool FoldConstant(Ctx& c, const Node& n, Plan::Impl& impl) {
  const std::string& op = n.op;
  const auto is_const = [&](size_t k) { return !c.Has(n, k) || c.constants.count(n.inputs[k]); };
  bool all_const = true;
  for (size_t k = 0; k < n.inputs.size(); ++k) all_const = all_const && is_const(k);
  const auto put = [&](const std::string& name, Tensor t) {
    c.shapes[name] = t.shape;
    c.constants[name] = t;
    impl.constants[name] = std::move(t);
  };
  const auto ints = [](Shape shape, std::vector<int64_t> v) {
    Tensor t;
    t.shape = std::move(shape);
    t.is_int = true;
    t.i = std::move(v);
    return t;
  };
  if (op == "Shape") {
    CheckAttrs(n, {"start", "end"});
    const Shape x = c.ShapeOf(n, 0);
    for (int64_t d : x) {
      if (d < 0) Fail(n, fmt::format("the shape {} is not known", ShapeText(x)));
    }
    const auto r = int64_t(x.size());
    const auto clampi = [&](int64_t v) { return std::clamp<int64_t>(v < 0 ? v + r : v, 0, r); };
    const int64_t b = clampi(AttrInt(n, "start", 0)), e = clampi(AttrInt(n, "end", r));
    const std::vector<int64_t> dims(x.begin() + b, x.begin() + std::max(b, e));
    put(n.outputs.at(0), ints({int64_t(dims.size())}, dims));
    return true;
  }
  if (op == "Cast" && !all_const) {
    Fail(n, "is supported on constants only (folded when the plan is built)");
  }
  if (op == "Gather" && !all_const) {
    if (!is_const(1)) Fail(n, "the indices must be known when the plan is built");
    return false;  // a data move (PlanMove): the values gathered at run time
  }
  if (op == "Cast") {
    CheckAttrs(n, {"to", "saturate"});
    Tensor t = c.constants.at(n.inputs.at(0));
    const int64_t to = AttrInt(n, "to", 0);
    if (to == 7 && !t.is_int) {  // INT64: toward zero
      for (float f : t.f) t.i.push_back(int64_t(f));
      t.f.clear();
      t.is_int = true;
    } else if (to == 1 && t.is_int) {  // FLOAT
      t = AsFloat(t);
    } else if (to != 7 && to != 1) {
      Fail(n, fmt::format("a cast to element type {} is not supported", to));
    }
    put(n.outputs.at(0), std::move(t));
    return true;
  }
  if (op == "Gather") {
    CheckAttrs(n, {"axis"});
    const Tensor& d = c.constants.at(n.inputs.at(0));
    const Tensor& ix = c.constants.at(n.inputs.at(1));
    if (!ix.is_int) Fail(n, "indices must be integers");
    const int64_t axis = NormAxis(n, AttrInt(n, "axis", 0), d.shape.size());
    const int64_t dim = d.shape[size_t(axis)];
    int64_t outer = 1, inner = 1;
    for (size_t a = 0; a < d.shape.size(); ++a) {
      if (int64_t(a) < axis) outer *= d.shape[a];
      if (int64_t(a) > axis) inner *= d.shape[a];
    }
    Tensor t;
    t.is_int = d.is_int;
    t.shape.assign(d.shape.begin(), d.shape.begin() + axis);
    t.shape.insert(t.shape.end(), ix.shape.begin(), ix.shape.end());
    t.shape.insert(t.shape.end(), d.shape.begin() + axis + 1, d.shape.end());
    for (int64_t o = 0; o < outer; ++o) {
      for (int64_t j : ix.i) {
        if (j < -dim || j >= dim) {
          Fail(n, fmt::format("index {} is out of range for axis {} of {}", j, axis, dim));
        }
        const int64_t at = (o * dim + (j < 0 ? j + dim : j)) * inner;
        for (int64_t k = 0; k < inner; ++k) {
          if (d.is_int) {
            t.i.push_back(d.i[size_t(at + k)]);
          } else {
            t.f.push_back(d.f[size_t(at + k)]);
          }
        }
      }
    }
    put(n.outputs.at(0), std::move(t));
    return true;
  }
  if (!all_const || n.inputs.empty()) return false;
  if (op == "Add" || op == "Sub" || op == "Mul" || op == "Div") {
    if (n.inputs.size() != 2) return false;
    const Tensor& a = c.constants.at(n.inputs[0]);
    const Tensor& b = c.constants.at(n.inputs[1]);
    if (!a.is_int || !b.is_int) return false;  // float arithmetic runs as planned
    const Shape shape = Broadcast(n, a.shape, b.shape);
    const auto ia = BroadcastIndex(a.shape, shape), ib = BroadcastIndex(b.shape, shape);
    std::vector<int64_t> v;
    for (size_t k = 0; k < ia.size(); ++k) {
      const int64_t x = a.i[size_t(ia[k])], y = b.i[size_t(ib[k])];
      if (op == "Div" && y == 0) Fail(n, "an integer division by zero");
      v.push_back(op == "Add" ? x + y : op == "Sub" ? x - y : op == "Mul" ? x * y : x / y);
    }
    put(n.outputs.at(0), ints(shape, std::move(v)));
    return true;
  }
  if (!IsDataMove(op)) return false;
  // A data move of constants: planned and run now, on float32 values (integers exactly, up to
  // 2^24; the result is integer again).
  Env env;
  bool is_int = false;
  for (size_t k = 0; k < n.inputs.size(); ++k) {
    if (!c.Has(n, k)) continue;
    Tensor t = c.constants.at(n.inputs[k]);
    const bool index_arg = k >= 1 && op != "Concat";  // starts, ends, axes, split, pads
    if (t.is_int && !index_arg) {
      for (int64_t v : t.i) {
        if (v < -(int64_t(1) << 24) || v > (int64_t(1) << 24)) {
          Fail(n, fmt::format("the constant '{}' holds {}, beyond what folding keeps exact",
                              n.inputs[k], v));
        }
      }
      is_int = true;
      t = AsFloat(t);
    }
    env[n.inputs[k]] = std::move(t);
  }
  Plan::Impl tmp;
  Step st;
  PlanMove(c, n, tmp, st);
  tmp.execs.at(0)(env, AccelFn{}, 0);
  for (const auto& o : n.outputs) {
    Tensor t = env.at(o);
    if (is_int) {
      for (float f : t.f) t.i.push_back(int64_t(f));
      t.f.clear();
      t.is_int = true;
    }
    put(o, std::move(t));
  }
  return true;
}

// A BatchNormalization that is not folded into a convolution, on the vector unit (where its
// vector memory holds 5 rows): per channel c, a = fp32(s) and b = fp32(beta - mean·s) from the
// binary64 s = gamma / sqrt(var + eps), and y = fma32(x, a, b) (docs/numerics.md): a 1x1
// depthwise job on fp32 operands (host::CompileDepthwise), the input moved to NHWC by the host;
// a Relu that is its only reader is the store path's.
bool PlanVectorBatchNorm(Ctx& c, const Node& n, Plan::Impl& impl, Step& st,
                         std::set<size_t>& done) {
  if (!c.vector_unit || c.vmem_depth < 5 || Outputs(n) != 1 || n.inputs.size() != 5) return false;
  CheckAttrs(n, {"epsilon", "momentum", "training_mode", "spatial", "is_test"});
  if (AttrInt(n, "training_mode", 0) != 0) Fail(n, "training_mode = 1 is not supported");
  if (AttrInt(n, "spatial", 1) != 1) Fail(n, "spatial = 0 is not supported");
  const Shape x = c.ShapeOf(n, 0);
  if (x.size() < 2) Fail(n, fmt::format("input {} has no channel axis", ShapeText(x)));
  const int64_t N = x[0], C = x[1], hw = Elements(x) / std::max<int64_t>(1, N * C);
  if (N > 65535 || C > (int64_t(1) << 24) || hw > (int64_t(1) << 30)) return false;
  std::vector<std::string> pn;
  for (size_t i = 1; i <= 4; ++i) {
    if (Elements(c.ShapeOf(n, i)) != C) {
      Fail(n, fmt::format("parameter {} is not ({},)", ShapeText(c.ShapeOf(n, i)), C));
    }
    pn.push_back(n.inputs[i]);
  }
  const float eps = AttrFloat(n, "epsilon", 1e-5f);
  const Epilogue ep = FuseRelu(c, n.outputs[0], true);
  for (size_t i : ep.fused) Fold(c, i, &st, &done);
  st.accel = true;
  st.jobs = 1;
  st.klass = "vector";
  st.detail = "vector unit: y = fma32(x, a, b) per channel";
  st.inputs = {n.inputs[0]};
  st.inputs.insert(st.inputs.end(), pn.begin(), pn.end());
  st.outputs = {ep.value};
  st.out_shape = x;
  c.shapes[ep.value] = x;
  const std::string in = n.inputs[0], out = ep.value;
  const bool relu = ep.relu;
  const bool copy16 = c.Bf16Reader(out);
  impl.execs.push_back([=](Env& env, const AccelFn& accel, int step) {
    const Tensor& xt = env.at(in);
    const auto& gamma = env.at(pn[0]).f;
    const auto& beta = env.at(pn[1]).f;
    const auto& mean = env.at(pn[2]).f;
    const auto& var = env.at(pn[3]).f;
    AccelJob job;
    job.kind = AccelJob::Kind::kDepthwise;
    job.fp32 = true;
    host::PoolShape& ps = job.pool;
    ps.n = int(N), ps.c = int(C), ps.h = 1, ps.w = int(hw), ps.oh = 1, ps.ow = int(hw);
    job.m = int(N * hw);
    job.k = 1;
    job.n = int(C);
    job.relu = relu;
    job.out = host::OutFormat::kFp32;
    for (int64_t ch = 0; ch < C; ++ch) {
      const double s = BnScale(gamma[size_t(ch)], var[size_t(ch)], eps);
      job.vb.push_back(F32Bits(float(s)));
      job.bias.push_back(F32Bits(BnApply(0.0f, mean[size_t(ch)], beta[size_t(ch)], s)));
    }
    job.va.resize(xt.f.size());
    ForChannelsLast(N, C, hw,
                    [&](size_t nchw, size_t nhwc) { job.va[nhwc] = F32Bits(xt.f[nchw]); });
    job.from_a = env.From(in, N * hw, C, host::OutFormat::kFp32);
    job.also_bf16 = copy16;
    env.Prepare(&job);
    const std::vector<uint32_t> r = accel(job, step);
    Tensor y;
    y.shape = xt.shape;
    y.f.resize(xt.f.size());
    ForChannelsLast(N, C, hw,
                    [&](size_t nchw, size_t nhwc) { y.f[nchw] = F32FromBits(r.at(nhwc)); });
    env[out] = std::move(y);
    env.Produced(out, N * hw, C, host::OutFormat::kFp32, copy16);
  });
  return true;
}

void PlanHost(Ctx& c, const Node& n, Plan::Impl& impl, Step& st) {
  const std::string& op = n.op;
  if (op == "BatchNormalization" && (Outputs(n) != 1 || AttrInt(n, "training_mode", 0))) {
    Fail(n, "training_mode (running statistics as outputs) is not supported");
  }
  if (Outputs(n) != 1 && op != "Dropout") {
    Fail(n, fmt::format("{} outputs; one is supported", Outputs(n)));
  }
  const std::string out = n.outputs.empty() ? "" : n.outputs[0];
  st.outputs = {out};
  for (const auto& i : n.inputs) {
    if (!i.empty()) st.inputs.push_back(i);
  }
  Shape shape;
  Exec ex;
  if (op == "Relu") {
    CheckAttrs(n, {});
    shape = c.ShapeOf(n, 0);
    ex = Unary(n.inputs[0], out, HostRelu);
  } else if (op == "Identity" || op == "Dropout") {
    CheckAttrs(n, {"ratio", "seed", "is_test"});
    if (op == "Dropout") {
      if (n.outputs.size() > 1 && !n.outputs[1].empty()) {
        Fail(n, "the mask output is not supported (inference only)");
      }
      if (c.Has(n, 2)) {
        const auto it = c.constants.find(n.inputs[2]);
        const bool off = it != c.constants.end() &&
                         ((it->second.is_int && it->second.i.size() == 1 && it->second.i[0] == 0) ||
                          (!it->second.is_int && it->second.f.size() == 1 && it->second.f[0] == 0));
        if (!off) Fail(n, "training_mode must be a constant false (inference only)");
      }
    }
    shape = c.ShapeOf(n, 0);
    ex = Move(n.inputs[0], out, shape, {});
  } else if (op == "Add") {
    CheckAttrs(n, {"broadcast", "axis"});
    if (n.attrs.count("axis")) Fail(n, "the legacy 'axis' broadcast is not supported");
    const Shape a = c.ShapeOf(n, 0), b = c.ShapeOf(n, 1);
    shape = Broadcast(n, a, b);
    const std::string an = n.inputs[0], bn = n.inputs[1];
    ex = [=](Env& env, const AccelFn&, int) {
      const Tensor& x = env.at(an);
      const Tensor& z = env.at(bn);
      const auto ia = BroadcastIndex(x.shape, shape), ib = BroadcastIndex(z.shape, shape);
      Tensor y;
      y.shape = shape;
      y.f.resize(ia.size());
      for (size_t i = 0; i < ia.size(); ++i) {
        y.f[i] = HostAdd(x.f[size_t(ia[i])], z.f[size_t(ib[i])]);
      }
      env[out] = std::move(y);
    };
  } else if (op == "BatchNormalization") {
    CheckAttrs(n, {"epsilon", "momentum", "training_mode", "spatial", "is_test"});
    if (AttrInt(n, "training_mode", 0) != 0) Fail(n, "training_mode = 1 is not supported");
    if (AttrInt(n, "spatial", 1) != 1) Fail(n, "spatial = 0 is not supported");
    shape = c.ShapeOf(n, 0);
    if (shape.size() < 2) Fail(n, fmt::format("input {} has no channel axis", ShapeText(shape)));
    std::vector<std::string> pn;
    for (size_t i = 1; i <= 4; ++i) {
      const Shape ps = c.ShapeOf(n, i);
      if (Elements(ps) != shape[1]) {
        Fail(n, fmt::format("parameter {} is not ({},)", ShapeText(ps), shape[1]));
      }
      pn.push_back(n.inputs[i]);
    }
    const float eps = AttrFloat(n, "epsilon", 1e-5f);
    const int64_t ch = shape[1], inner = Elements(shape) / (shape[0] * ch);
    const std::string in = n.inputs[0];
    ex = [=](Env& env, const AccelFn&, int) {
      const Tensor& x = env.at(in);
      const auto& gamma = env.at(pn[0]).f;
      const auto& beta = env.at(pn[1]).f;
      const auto& mean = env.at(pn[2]).f;
      const auto& var = env.at(pn[3]).f;
      Tensor y;
      y.shape = shape;
      y.f.resize(x.f.size());
      for (size_t i = 0; i < x.f.size(); ++i) {
        const size_t ci = size_t(int64_t(i) / inner % ch);
        y.f[i] = BnApply(x.f[i], mean[ci], beta[ci], BnScale(gamma[ci], var[ci], eps));
      }
      env[out] = std::move(y);
    };
    st.detail = "not after a convolution: on the host";
  } else if (op == "Flatten") {
    CheckAttrs(n, {"axis"});
    const Shape x = c.ShapeOf(n, 0);
    const int64_t axis = NormAxis(n, AttrInt(n, "axis", 1), x.size(), true);
    int64_t outer = 1;
    for (int64_t i = 0; i < axis; ++i) outer *= x[size_t(i)];
    shape = {outer, Elements(x) / std::max<int64_t>(outer, 1)};
    if (outer == 0) shape = {0, 0};
    ex = Move(n.inputs[0], out, shape, {});
  } else if (op == "Reshape") {
    CheckAttrs(n, {"allowzero"});
    const Shape x = c.ShapeOf(n, 0);
    const auto it = c.Has(n, 1) ? c.constants.find(n.inputs[1]) : c.constants.end();
    if (it == c.constants.end() || !it->second.is_int) {
      Fail(n, "the target shape must be a constant int64 tensor");
    }
    const bool allowzero = AttrInt(n, "allowzero", 0) != 0;
    shape = it->second.i;
    int64_t known = 1, minus = -1;
    for (size_t i = 0; i < shape.size(); ++i) {
      if (shape[i] == 0 && !allowzero) {
        if (i >= x.size()) Fail(n, fmt::format("shape {} copies a missing axis", IntsText(shape)));
        shape[i] = x[i];
      }
      if (shape[i] == -1) {
        if (minus >= 0) Fail(n, "more than one -1 in the target shape");
        minus = int64_t(i);
      } else if (shape[i] < 0) {
        Fail(n, fmt::format("bad target shape {}", IntsText(it->second.i)));
      } else {
        known *= shape[i];
      }
    }
    if (minus >= 0) {
      if (known == 0 || Elements(x) % known != 0) {
        Fail(n, fmt::format("cannot reshape {} to {}", ShapeText(x), IntsText(it->second.i)));
      }
      shape[size_t(minus)] = Elements(x) / known;
    }
    if (Elements(shape) != Elements(x)) {
      Fail(n, fmt::format("cannot reshape {} ({} elements) to {}", ShapeText(x), Elements(x),
                          ShapeText(shape)));
    }
    ex = Move(n.inputs[0], out, shape, {});
  } else if (op == "Transpose") {
    CheckAttrs(n, {"perm"});
    const Shape x = c.ShapeOf(n, 0);
    std::vector<int64_t> perm(x.size());
    for (size_t i = 0; i < x.size(); ++i) perm[i] = int64_t(x.size() - 1 - i);
    perm = AttrInts(n, "perm", perm);
    std::vector<int64_t> sorted = perm;
    std::sort(sorted.begin(), sorted.end());
    for (size_t i = 0; i < sorted.size(); ++i) {
      if (sorted.size() != x.size() || sorted[i] != int64_t(i)) {
        Fail(n, fmt::format("perm {} is not a permutation of {} axes", IntsText(perm), x.size()));
      }
    }
    shape.resize(x.size());
    for (size_t i = 0; i < x.size(); ++i) shape[i] = x[size_t(perm[i])];
    // Output element -> input element.
    std::vector<int64_t> in_stride(x.size(), 1);
    for (size_t i = x.size(); i-- > 1;) in_stride[i - 1] = in_stride[i] * x[i];
    std::vector<int64_t> src(size_t(Elements(x)));
    std::vector<int64_t> cnt(x.size(), 0);
    for (size_t f = 0; f < src.size(); ++f) {
      int64_t o = 0;
      for (size_t i = 0; i < x.size(); ++i) o += cnt[i] * in_stride[size_t(perm[i])];
      src[f] = o;
      for (size_t i = x.size(); i-- > 0;) {
        if (++cnt[i] < shape[i]) break;
        cnt[i] = 0;
      }
    }
    ex = Move(n.inputs[0], out, shape, src);
  } else {
    Fail(n, "operator not supported");
  }
  st.out_shape = shape;
  c.shapes[out] = shape;
  impl.execs.push_back(std::move(ex));
}

Tensor ConstantValue(const Node& n) {
  CheckAttrs(n, {"value", "value_float", "value_floats", "value_int", "value_ints"});
  if (n.attrs.size() != 1) Fail(n, "needs exactly one value attribute");
  const auto& [name, a] = *n.attrs.begin();
  Tensor t;
  if (name == "value") {
    if (a.kind != Attr::Kind::kTensor) Fail(n, "'value' is not a tensor");
    t = a.t;
  } else if (name == "value_float") {
    t.f = {a.f};
  } else if (name == "value_floats") {
    t.f = a.floats;
    t.shape = {int64_t(a.floats.size())};
  } else if (name == "value_int") {
    t.is_int = true;
    t.i = {a.i};
  } else {
    t.is_int = true;
    t.i = a.ints;
    t.shape = {int64_t(a.ints.size())};
  }
  return t;
}

const std::set<std::string>& KnownOps() {
  static const std::set<std::string> ops = {"Conv",
                                            "ConvTranspose",
                                            "Gemm",
                                            "MatMul",
                                            "Relu",
                                            "Add",
                                            "MaxPool",
                                            "AveragePool",
                                            "GlobalAveragePool",
                                            "GlobalMaxPool",
                                            "Softmax",
                                            "LogSoftmax",
                                            "Flatten",
                                            "Reshape",
                                            "Transpose",
                                            "Identity",
                                            "Dropout",
                                            "Constant",
                                            "Concat",
                                            "Split",
                                            "Slice",
                                            "Squeeze",
                                            "Unsqueeze",
                                            "Pad",
                                            "Resize",
                                            "Shape",
                                            "Gather",
                                            "Cast",
                                            "BatchNormalization",
                                            "Sigmoid",
                                            "Tanh",
                                            "Exp",
                                            "Sqrt",
                                            "Reciprocal",
                                            "Log",
                                            "Erf",
                                            "Div",
                                            "Pow",
                                            "Gelu",
                                            "Neg",
                                            "Clip",
                                            "LeakyRelu",
                                            "Mul",
                                            "Sub",
                                            "Max",
                                            "Min"};
  return ops;
}

}  // namespace

Plan::Plan(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Plan::Plan(Plan&&) noexcept = default;
Plan& Plan::operator=(Plan&&) noexcept = default;
Plan::~Plan() = default;
const std::vector<Step>& Plan::steps() const {
  return impl_->steps;
}
const std::vector<ValueInfo>& Plan::inputs() const {
  return impl_->inputs;
}
const std::vector<ValueInfo>& Plan::outputs() const {
  return impl_->outputs;
}
uint64_t Plan::Macs() const {
  return impl_->macs;
}
const std::vector<std::string>& Plan::warnings() const {
  return impl_->warnings;
}

void BindIntInputs(Graph& g, std::map<std::string, Tensor>& inputs) {
  for (auto it = g.inputs.begin(); it != g.inputs.end();) {
    auto in = inputs.find(it->name);
    const bool int_type = it->dtype == "int64" || it->dtype == "int32";
    if (in != inputs.end() && in->second.is_int != int_type) {
      throw Error(fmt::format("input '{}': {}; the model declares {}", it->name,
                              in->second.is_int ? "integers" : "floating-point values", it->dtype));
    }
    // A float input read only as a Resize's roi or scales (index arguments) is bound too.
    bool resize_arg = in != inputs.end() && !int_type;
    for (const auto& n : g.nodes) {
      for (size_t k = 0; resize_arg && k < n.inputs.size(); ++k) {
        if (n.inputs[k] == it->name && !(n.op == "Resize" && (k == 1 || k == 2))) {
          resize_arg = false;
        }
      }
    }
    if (in != inputs.end() && (int_type || resize_arg)) {
      g.constants[it->name] = std::move(in->second);
      inputs.erase(in);
      it = g.inputs.erase(it);
    } else {
      ++it;
    }
  }
}

namespace {
// Every name in `given` is one of the graph's inputs.
template <typename T>
void CheckInputNames(const Graph& g, const std::map<std::string, T>& given) {
  for (const auto& [name, value] : given) {
    bool found = false;
    for (const auto& v : g.inputs) found = found || v.name == name;
    if (!found) {
      std::string names;
      for (const auto& v : g.inputs) names += (names.empty() ? "" : ", ") + v.name;
      throw Error(fmt::format("the model has no input '{}' (its inputs: {})", name, names));
    }
  }
}
}  // namespace

Plan PlanForInputs(Graph* g, std::map<std::string, Tensor>* inputs, num::Mode mode,
                   bool vector_unit, int vmem_depth) {
  CheckInputNames(*g, *inputs);
  BindIntInputs(*g, *inputs);
  std::map<std::string, Shape> shapes;
  for (const auto& [k, v] : *inputs) shapes[k] = v.shape;
  for (const auto& v : g->inputs) {
    if (!inputs->count(v.name)) {
      throw Error(fmt::format("input '{}' {}is missing", v.name,
                              v.known_rank ? ShapeText(v.shape) + " " : ""));
    }
  }
  return Plan::Build(*g, shapes, mode, vector_unit, vmem_depth);
}

Plan Plan::Build(const Graph& g, const std::map<std::string, Shape>& input_shapes, num::Mode mode,
                 bool vector_unit, int vmem_depth) {
  auto impl = std::make_unique<Impl>();
  Ctx c{g, mode, vector_unit, {}, g.constants, {}, {}, vector_unit ? vmem_depth : 0};
  for (const auto& [name, t] : g.constants) c.shapes[name] = t.shape;
  // Inputs: the given shapes, checked against the declared ones.
  for (const auto& vi : g.inputs) {
    if (vi.dtype == "float64") {
      // PyTorch exports a float64 model as it is: computed in float32 (the machine's numbers),
      // as its float64 initializers are read.
      impl->warnings.push_back(
          fmt::format("graph input '{}' is float64: the graph is computed in float32", vi.name));
    } else if (vi.dtype != "float32") {
      throw Error(fmt::format(
          "graph input '{}' has element type {}; only float32 (and float64, computed as "
          "float32) is supported",
          vi.name, vi.dtype));
    }
    ValueInfo v = vi;
    auto it = input_shapes.find(vi.name);
    if (it != input_shapes.end()) {
      const Shape& s = it->second;
      bool ok = !vi.known_rank || s.size() == vi.shape.size();
      for (size_t i = 0; ok && vi.known_rank && i < s.size(); ++i) {
        ok = vi.shape[i] < 0 || vi.shape[i] == s[i];
      }
      if (!ok) {
        throw Error(fmt::format("input '{}': shape {}, but the model declares {}", vi.name,
                                ShapeText(s), ShapeText(vi.shape)));
      }
      v.shape = s;
      v.known_rank = true;
    } else {
      const bool known = vi.known_rank && std::all_of(vi.shape.begin(), vi.shape.end(),
                                                      [](int64_t d) { return d >= 0; });
      if (!known) {
        throw Error(fmt::format("input '{}': the model does not fix its shape {}; give the input",
                                vi.name, vi.known_rank ? ShapeText(vi.shape) : "(unknown)"));
      }
    }
    for (int64_t d : v.shape) {
      if (d < 1)
        throw Error(fmt::format("input '{}': shape {} is empty", v.name, ShapeText(v.shape)));
    }
    c.shapes[v.name] = v.shape;
    impl->inputs.push_back(v);
  }
  CheckInputNames(g, input_shapes);
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    for (const auto& in : g.nodes[i].inputs) {
      if (!in.empty()) c.consumers[in].push_back(i);
    }
  }
  for (const auto& o : g.outputs) c.graph_outputs.insert(o.name);

  // Every operator is known before anything is planned (the first unknown one is the error).
  for (const auto& n : g.nodes) {
    if (!n.domain.empty() && n.domain != "ai.onnx") {
      Fail(n, fmt::format("operator domain '{}' is not supported", n.domain));
    }
    if (!KnownOps().count(n.op)) Fail(n, "operator not supported");
  }

  std::set<size_t> done;  // nodes folded into an earlier step
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    if (done.count(i)) continue;
    const Node& n = g.nodes[i];
    if (n.op == "Constant") {
      if (n.outputs.size() != 1) Fail(n, "needs one output");
      Tensor t = ConstantValue(n);
      c.shapes[n.outputs[0]] = t.shape;
      c.constants[n.outputs[0]] = t;
      impl->constants[n.outputs[0]] = std::move(t);
      continue;
    }
    if (FoldConstant(c, n, *impl)) continue;
    // An Identity of a constant is that constant (exporters alias shared parameters this way).
    if (n.op == "Identity" && n.inputs.size() == 1 && n.outputs.size() == 1 &&
        c.constants.count(n.inputs[0])) {
      CheckAttrs(n, {});
      const Tensor t = c.constants.at(n.inputs[0]);
      c.shapes[n.outputs[0]] = t.shape;
      c.constants[n.outputs[0]] = t;
      impl->constants[n.outputs[0]] = t;
      continue;
    }
    for (size_t k = 0; k < n.inputs.size(); ++k) {
      const std::string& in = n.inputs[k];
      if (in.empty()) continue;
      if (!c.shapes.count(in)) {
        Fail(n, fmt::format("input '{}' is not produced by any earlier node", in));
      }
      // Integers only where an operator takes them: Reshape's shape, Dropout's training_mode.
      const bool int_ok = (n.op == "Reshape" && k == 1) || (n.op == "Dropout" && k == 2) ||
                          (n.op == "Slice" && k >= 1) || (n.op == "Split" && k == 1) ||
                          ((n.op == "Squeeze" || n.op == "Unsqueeze") && k == 1) ||
                          (n.op == "Pad" && (k == 1 || k == 3)) || (n.op == "Resize" && k >= 1) ||
                          (n.op == "Gather" && k == 1);
      const auto ct = c.constants.find(in);
      if (!int_ok && ct != c.constants.end() && ct->second.is_int) {
        Fail(n, fmt::format("input '{}' is an integer tensor; float32 is required", in));
      }
      if (!int_ok && Elements(c.shapes.at(in)) == 0) {
        Fail(n, fmt::format("input '{}' is empty (shape {})", in, ShapeText(c.shapes.at(in))));
      }
    }
    Step st;
    st.index = int(impl->steps.size());
    st.op = n.op;
    st.klass = n.op;
    st.label = n.name;
    st.nodes = {n.name};
    if (n.op == "Conv") {
      PlanConv(c, n, *impl, st, done);
    } else if (n.op == "ConvTranspose") {
      PlanConvTranspose(c, n, *impl, st, done);
    } else if (n.op == "Gemm") {
      if (!PlanMlpChain(c, n, *impl, st, done)) PlanGemm(c, n, *impl, st, done);
    } else if (n.op == "MatMul") {
      PlanMatMul(c, n, *impl, st, done);
    } else if (n.op == "MaxPool" || n.op == "AveragePool" || n.op == "GlobalAveragePool" ||
               n.op == "GlobalMaxPool") {
      PlanPool(c, n, *impl, st);
    } else if (n.op == "BatchNormalization" && PlanVectorBatchNorm(c, n, *impl, st, done)) {
      // on the vector unit
    } else if (n.op == "Softmax" || n.op == "LogSoftmax") {
      PlanSoftmax(c, n, *impl, st);
    } else if (IsDataMove(n.op)) {
      PlanMove(c, n, *impl, st);
    } else if (IsVectorOp(n.op) || (c.vector_unit && (n.op == "Add" || n.op == "Relu"))) {
      // Add and Relu go to the vector unit where there is one (else the host's, below).
      PlanVector(c, n, *impl, st, done);
    } else {
      PlanHost(c, n, *impl, st);
    }
    // A view: the same elements in the same order (the plan's values are row-major NCHW), so
    // nothing is computed or moved; Dropout only without its mask output.
    st.view = !st.accel && st.outputs.size() == 1 &&
              (n.op == "Flatten" || n.op == "Reshape" || n.op == "Squeeze" || n.op == "Unsqueeze" ||
               n.op == "Identity" || (n.op == "Dropout" && Outputs(n) == 1));
    impl->macs += st.macs;
    impl->steps.push_back(std::move(st));
  }
  for (const auto& o : g.outputs) {
    auto it = c.shapes.find(o.name);
    if (it == c.shapes.end()) {
      throw Error(fmt::format("graph output '{}' is not produced by any node", o.name));
    }
    ValueInfo v = o;
    v.shape = it->second;
    v.known_rank = true;
    impl->outputs.push_back(v);
  }
  for (const auto& [name, t] : g.constants) impl->constants[name] = t;
  return Plan(std::move(impl));
}

std::map<std::string, Tensor> Plan::Run(
    const std::map<std::string, Tensor>& inputs, const AccelFn& accel,
    const std::function<void(const Step&, double)>& on_step) const {
  Env env;
  static_cast<std::map<std::string, Tensor>&>(env) = impl_->constants;
  for (const auto& v : impl_->inputs) {
    auto it = inputs.find(v.name);
    if (it == inputs.end()) throw Error(fmt::format("input '{}' is missing", v.name));
    if (it->second.shape != v.shape || it->second.is_int ||
        it->second.f.size() != size_t(Elements(v.shape))) {
      throw Error(fmt::format("input '{}': shape {}, but the plan is for {}", v.name,
                              ShapeText(it->second.shape), ShapeText(v.shape)));
    }
    env[v.name] = it->second;
  }
  // Every job counted (AccelJob::from_a refers to that count) and checked to have said where
  // its operands come from (Env::Prepare).
  const AccelFn counted = [&](const AccelJob& job, int step) {
    if (job.host_a != (env.step_a_dynamic && job.from_a < 0 && job.a_pieces.empty()) ||
        job.host_b != env.HostB(job)) {
      throw std::logic_error(fmt::format("step {}: a job not prepared (Env::Prepare)", step));
    }
    std::vector<uint32_t> r = accel(job, step);
    ++env.jobs;
    return r;
  };
  // A view (the same elements in the same order) keeps its input's producer when the producer's
  // matrix is the view's too: the same shape, or N × C with no spatial extent on both sides.
  const auto nc = [](const Shape& s) {
    if (s.size() < 2) return false;
    int64_t p = 1;
    for (size_t i = 2; i < s.size(); ++i) p *= s[i];
    return p == 1;
  };
  static const std::set<std::string> kViews = {"Flatten",   "Reshape",  "Squeeze",
                                               "Unsqueeze", "Identity", "Dropout"};
  for (size_t i = 0; i < impl_->steps.size(); ++i) {
    const Step& st = impl_->steps[i];
    env.step_a_dynamic = !st.inputs.empty() && env.dynamic.count(st.inputs[0]) != 0;
    env.step_b_dynamic = false;
    env.step_res_dynamic = !st.residual.empty() && env.dynamic.count(st.residual) != 0;
    for (size_t k = 1; k < st.inputs.size(); ++k) {
      if (st.inputs[k] == st.residual) continue;
      env.step_b_dynamic = env.step_b_dynamic || env.dynamic.count(st.inputs[k]) != 0;
    }
    const auto t0 = std::chrono::steady_clock::now();
    impl_->execs[i](env, counted, int(i));
    const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    if (st.accel || env.step_a_dynamic || env.step_b_dynamic) {
      for (const auto& o : st.outputs) env.dynamic.insert(o);
    }
    if (!st.accel && kViews.count(st.op) && !st.inputs.empty() && st.outputs.size() == 1 &&
        env.cats.count(st.inputs[0]) && env.at(st.inputs[0]).shape == env.at(st.outputs[0]).shape) {
      env.cats[st.outputs[0]] = env.cats.at(st.inputs[0]);
    }
    if (!st.accel && kViews.count(st.op) && !st.inputs.empty() && st.outputs.size() == 1) {
      auto it = env.made.find(st.inputs[0]);
      if (it != env.made.end()) {
        const Shape& a = env.at(st.inputs[0]).shape;
        const Shape& b = env.at(st.outputs[0]).shape;
        if (a == b || (nc(a) && nc(b) && a[0] == b[0] && a[1] == b[1])) {
          env.made[st.outputs[0]] = it->second;
        }
      }
    }
    if (on_step) on_step(st, s);
  }
  std::map<std::string, Tensor> out;
  for (const auto& o : impl_->outputs) out[o.name] = env.at(o.name);
  return out;
}

}  // namespace tpu::net
