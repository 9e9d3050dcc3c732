// SPDX-License-Identifier: Apache-2.0
// Networks (tpu_net): a graph of operators as ONNX defines them (the importer, tpu/onnx_import.h,
// builds one from a model file), planned into steps for the accelerator and the host, and run.
//
// The plan (Plan::Build) infers every value's shape from the graph inputs' shapes, checks every
// operator and attribute (an unsupported one is a net::Error naming the node and the operator),
// and lowers the graph into steps, in the graph's order:
//  * accelerator steps: Conv (groups, padding, strides, dilations), Gemm, MatMul, with a following
//    BatchNormalization folded into a convolution's weights and bias and a following Relu fused
//    into the store path. Each step is one or more AccelJobs: a GEMM or a convolution the host
//    library compiles (tpu/host.h) with bf16 operands rounded from fp32 at this boundary
//    (num::Fp32ToBf16 in the machine's mode), an fp32 bias or initial value, and an fp32 or bf16
//    output (bf16 when every consumer is itself an accelerator step that would round it anyway).
//    A depthwise convolution runs on the vector unit where its vector memory holds the weights
//    (host::CompileDepthwise: the same bits as the MXU's groups, in one job). ConvTranspose is
//    the convolution it equals (zeros inserted and the kernel flipped by the host). A chain of
//    Gemms (each read only by the next, through a Relu) is one step and one program
//    (host::CompileMlp).
//  * vector steps: Sigmoid, Tanh, Exp, Log, Erf, Sqrt, Reciprocal, Neg, Clip, LeakyRelu, Mul, Sub,
//    Div, Max, Min, Pow (constant exponent 1, 2, 3, -1), Gelu, each a chain of the numerics
//    contract's vector operations applied elementwise (operands broadcast by the host): an AccelJob
//    of kind kVector on a machine with the vector unit, else a host step computing the same
//    operations. With the vector unit, Add and a standalone Relu are vector steps too, and an
//    elementwise reader that is a vector step's only reader joins it as one more stage (GELU's five
//    nodes: one step, one job).
//  * pooling: MaxPool, AveragePool, GlobalAveragePool, GlobalMaxPool on the vector unit
//    (host::CompilePool, the contract's vector pooling) where the machine has one, else host
//    steps.
//  * Softmax, LogSoftmax: on the vector unit (host::CompileSoftmax, the contract's vector
//    softmax) where the machine's vector memory holds a slice, else host steps (binary64).
//  * host steps: Relu, Add, BatchNormalization (not after a convolution), the pooling
//    operators without the vector unit, and Flatten, Reshape, Transpose, Identity, Dropout
//    (inference), Concat, Split, Slice, Squeeze, Unsqueeze, Pad, Resize (nearest), Gather
//    (constant indices), Constant, which only move data. Shape, Gather, Cast and integer
//    arithmetic on constants fold when the plan is built.
//    Their numerics are in docs/numerics.md
//    ("Host operators"), computed here with IEEE 754 binary32 / binary64 operations in a stated
//    order, so this file is their golden definition.
// Values between steps are fp32 tensors in ONNX's layout (NCHW); a convolution's input is
// rearranged to NHWC on the host (a data move) and its NHWC output back.
//
// Plan::Run executes the steps; an accelerator job goes to a callback (the back end: the golden
// model, or the RTL with every output checked against the golden model, tpu/tb/net_run.h).
#pragma once

#include <cstdint>
#include <cstring>
#include <functional>
#include <map>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "tpu/host.h"
#include "tpu/numerics.h"
#include "tpu/tensor.h"

namespace tpu::net {

// Bad input: an unsupported operator or attribute, a malformed graph, a wrong input shape. The
// message is one line that names the node and its operator where there is one.
struct Error : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// A binary32 value's bit pattern and back.
inline uint32_t F32Bits(float f) {
  uint32_t u;
  std::memcpy(&u, &f, 4);
  return u;
}
inline float F32FromBits(uint32_t u) {
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}

// Shapes and tensors (tpu/tensor.h), under the names this layer has always used.
using tpu::Elements;
using tpu::Shape;
using tpu::ShapeText;
using tpu::Tensor;

struct Attr {
  enum class Kind : uint8_t { kInt, kFloat, kString, kInts, kFloats, kTensor, kOther };
  Kind kind = Kind::kOther;
  int64_t i = 0;
  float f = 0;
  std::string s;
  std::vector<int64_t> ints;
  std::vector<float> floats;
  Tensor t;
};

struct Node {
  std::string name;  // ONNX's node name, or "<op>_<index>" when it has none
  std::string op;    // ONNX op_type
  std::string domain;
  std::vector<std::string> inputs;  // "" for an omitted optional input
  std::vector<std::string> outputs;
  std::map<std::string, Attr> attrs;
};

struct ValueInfo {
  std::string name;
  Shape shape;  // -1 for a symbolic or unknown dimension; empty with known_rank false
  bool known_rank = false;
  std::string dtype = "float32";  // ONNX's element type, lower case
};

struct Graph {
  std::string name;
  int64_t opset = 0;                        // of the default domain
  std::vector<Node> nodes;                  // in a topological order
  std::map<std::string, Tensor> constants;  // initializers
  std::vector<ValueInfo> inputs;            // the graph's inputs that are not initializers
  std::vector<ValueInfo> outputs;
};

// Makes every int64 input given in `inputs` a constant of the graph (a Reshape's target shape
// must be known when the plan is built), and every float input read only as a Resize's roi or
// scales, and removes it from `inputs` and from g.inputs.
void BindIntInputs(Graph& g, std::map<std::string, Tensor>& inputs);

class Plan;
// The plan for these input tensors: integer inputs bound (BindIntInputs), every graph input
// given and no other (Error naming it), the plan built for their shapes in `mode`.
// `vector_unit`: the machine has the vector unit (Plan::Build).
// `vmem_depth`: its vector memory's rows when known (Plan::Build).
Plan PlanForInputs(Graph* g, std::map<std::string, Tensor>* inputs, num::Mode mode,
                   bool vector_unit = false, int vmem_depth = 0);

// One program of the host library.
struct AccelJob {
  // kVector: elementwise work on the vector unit (host::CompileVector, version 1.4): m × n fp32
  // `va` through `stages`, B `vb` (m × n, or 1 × n for a row) where a stage reads it.
  // kPool: pooling on the vector unit (host::CompilePool, version 1.4) of `pool`'s NHWC fp32
  // input `va`; the output is N·OH·OW × C (m × n), NHWC.
  // kDepthwise: a depthwise convolution on the vector unit (host::CompileDepthwise) of `pool`'s
  // window: `a` the NHWC bf16 input, `b` kh·kw × C bf16 weights, `bias` C fp32 or empty, relu,
  // out; the output N·OH·OW × C.
  // kSoftmax: softmax (log-softmax with `log`) on the vector unit (host::CompileSoftmax) of n
  // slices of m elements, `va` m × n (row i: element i of every slice); the output likewise.
  // kMlp: a chain of dense layers as one program (host::CompileMlp): m = M, k = sizes[0],
  // n = sizes.back(); `a` M × sizes[0] bf16,
  // layer i's weights `layers_b[i]` sizes[i] × sizes[i+1] bf16 and bias `layers_bias[i]` (all
  // empty or all given), relu on the hidden layers; the output M × sizes.back() (`out`).
  enum class Kind : uint8_t { kGemm, kConv, kVector, kPool, kDepthwise, kSoftmax, kMlp };
  Kind kind = Kind::kGemm;
  int m = 0, k = 0, n = 0;  // the GEMM (a convolution's: M pixels, K taps, N = Cout)
  host::ConvShape conv;     // kConv: its shape
  std::vector<uint16_t> a;  // kGemm: M x K (K x M with trans.a); kConv: the NHWC input, bf16
  std::vector<uint16_t> b;  // K x N (N x K with trans.b) bf16 (a convolution's HWIO weights)
  // kGemm: an operand given transposed (Aᵀ, Bᵀ), which the machine's transposing LOADs read
  // (ISA 1.3; training's gradients dW = Xᵀ·dY and dX = dY·Wᵀ). Not with a bias.
  host::GemmTranspose trans;
  std::vector<uint32_t> bias;  // N fp32, or empty
  std::vector<uint32_t> c0;    // M x N fp32 initial value, or empty (kGemm)
  // kConv, or kGemm with neither C0 nor a transposed operand: M x N fp32 (the output's layout,
  // channels last) that the MACs start from, plus the bias (host::CompileDense's residual: a
  // residual add in the accumulators), or empty.
  std::vector<uint32_t> residual;
  bool relu = false;
  host::OutFormat out = host::OutFormat::kFp32;
  std::vector<host::VectorStage> stages;  // kVector
  std::vector<uint32_t> va, vb;           // kVector: A and B, fp32 bits (kPool: va the input)
  host::PoolShape pool;                   // kPool, kDepthwise
  bool log = false;                       // kSoftmax: log-softmax
  bool fp32 = false;       // kDepthwise: fp32 operands, `va` the input and `vb` the weights
  std::vector<int> sizes;  // kMlp
  std::vector<std::vector<uint16_t>> layers_b;
  std::vector<std::vector<uint32_t>> layers_bias;
  // Where the operands come from (set by the plan, for whole-network programs:
  // tpu/tb/net_run.h). from_a: the index, in the run's order, of the job whose output is A (`a`
  // or `va`) bit for bit as that job stores it (channels last: N·H·W rows × C, or a GEMM's M × N),
  // or -1; from_b likewise for a vector job's B (`vb`). host_a: A is computed by the host from
  // some job's output (a data move, a host operator); host_b: likewise for any other operand.
  int from_a = -1, from_b = -1;
  int from_res = -1;  // likewise for `residual` (fp32, as that job stores it)
  // > 1: A's row i is rows i·g .. i·g + g − 1 of from_a's output side by side (a dense layer
  // after a Flatten of a channels-last value, K permuted to match).
  int from_a_group = 1;
  // A (when from_a is -1) the channels of several jobs' outputs side by side (a Concat): job
  // `job`'s output at column col0 of A's rows, each as that job stores it.
  struct Piece {
    int job = -1;
    int col0 = 0;
  };
  std::vector<Piece> a_pieces;
  std::string a_cat;  // with a_pieces: the Concat's output value they make up
  bool host_a = false, host_b = false;
  // An fp32 output that readers also take as bf16 (a convolution's operand): a whole-network
  // program stores it a second time, bf16, for them (kConv, kGemm without C0, kVector, kPool,
  // kDepthwise).
  bool also_bf16 = false;
  // kConv: through GEMM windows wherever the machine can express them, even where the host's
  // im2col would take fewer passes (a whole-network program then reads the input in place).
  bool windows = false;
  uint64_t Macs() const {
    // (a depthwise convolution: k taps of each of n channels for m outputs, on the vector unit)
    if (kind == Kind::kMlp) {  // every layer's
      uint64_t s = 0;
      for (size_t i = 0; i + 1 < sizes.size(); ++i) s += uint64_t(m) * sizes[i] * sizes[i + 1];
      return s;
    }
    return kind == Kind::kVector || kind == Kind::kPool || kind == Kind::kSoftmax
               ? 0
               : uint64_t(m) * k * n;
  }
  std::string Describe() const;  // "GEMM 64x576x64, bias, relu, bf16 out"
};

// What an accelerator step's back end returns: the output M x N row-major (fp32 bits, or bf16
// bits in the low 16 bits).
using AccelFn = std::function<std::vector<uint32_t>(const AccelJob& job, int step)>;

struct Step {
  int index = 0;
  std::string label;   // the nodes: "conv1 + bn1 + relu"
  std::string op;      // the main operator: "Conv", "MaxPool", ...
  std::string klass;   // its class for reports: "conv 3x3", "dense", "matmul", or op
  bool accel = false;  // an accelerator step (else the host)
  // A view (Flatten, Reshape, Squeeze, Unsqueeze, Identity, Dropout): its output is its input's
  // elements in the same order, so neither the host nor the machine computes or moves anything
  // (a whole-network program reads the producer's output in place where the machine's
  // channels-last matrix is the same; else its next program starts there).
  bool view = false;
  std::string detail;              // how it is lowered: "2 groups, im2col (dilations)"
  std::vector<std::string> nodes;  // the ONNX nodes it covers
  uint64_t macs = 0;               // accelerator MACs (0 on the host)
  int jobs = 0;                    // accelerator programs
  std::vector<std::string> inputs, outputs;
  Shape out_shape;
  // A convolution with a residual add in its accumulators: the Add's other operand (also in
  // `inputs`), or empty.
  std::string residual;
};

class Plan {
 public:
  // Throws Error. `input_shapes`: every graph input's shape (the graph's own where it is fully
  // known may be omitted).
  // `vector_unit`: the machine has the vector unit (version 1.4), so the vector operators
  // (Sigmoid, Tanh, Exp, Log, Erf, Sqrt, Reciprocal, Neg, Clip, LeakyRelu, Mul, Sub, Div, Max, Min)
  // are accelerator steps; without it they are host steps computing the same bits.
  // `vmem_depth`: the vector memory's rows, when known: a depthwise convolution whose weights
  // fit (1 + kh·kw + 3 rows) runs on the vector unit (the same bits as the MXU's groups).
  static Plan Build(const Graph& g, const std::map<std::string, Shape>& input_shapes,
                    num::Mode mode, bool vector_unit = false, int vmem_depth = 0);
  Plan(Plan&&) noexcept;
  Plan& operator=(Plan&&) noexcept;
  ~Plan();

  const std::vector<Step>& steps() const;
  const std::vector<ValueInfo>& inputs() const;   // with the shapes the plan was built for
  const std::vector<ValueInfo>& outputs() const;  // with inferred shapes
  uint64_t Macs() const;
  // What the plan computes differently from the graph, one line each (a float64 graph input is
  // computed in float32).
  const std::vector<std::string>& warnings() const;

  // Runs the plan. `inputs` by graph input name (each of the planned shape; Error otherwise).
  // `on_step(step, seconds)` is called after every step with its host time. Returns the graph's
  // outputs by name.
  std::map<std::string, Tensor> Run(
      const std::map<std::string, Tensor>& inputs, const AccelFn& accel,
      const std::function<void(const Step&, double)>& on_step = {}) const;

  struct Impl;

 private:
  explicit Plan(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

// Host operators' numerics, exposed for the tests (docs/numerics.md, "Host operators").
float HostAdd(float a, float b);
// BatchNormalization's per-channel scale s = gamma / sqrt(var + eps) and the folded values.
double BnScale(float gamma, float var, float eps);
float BnApply(float x, float mean, float beta, double s);  // (x - mean)·s + beta, in binary64
float BnWeight(float w, double s);                         // w·s, in binary64, rounded once

}  // namespace tpu::net
