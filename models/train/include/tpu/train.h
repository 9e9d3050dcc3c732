// SPDX-License-Identifier: Apache-2.0
// Training on the accelerator (docs/training.md): a multi-layer perceptron (dense layers, relu
// between them, softmax cross-entropy on the last) trained by mixed-precision SGD as TPUs do it:
// fp32 master weights, bf16 copies and bf16 activations and gradients into the matrix unit, fp32
// accumulation, the update in fp32. This is the golden training loop: every accelerator job of a
// step goes through the caller's AccelFn (the golden model, or the RTL checked against it bit for
// bit), and every host step's numerics are defined (docs/numerics.md, "Training"), so a run is
// reproducible to the bit from its seed on any array shape.
//
// A step on a batch of B rows, layers l = 0 .. L-1 with X_0 = bf16(x):
//  forward (accelerator, one dense job per layer): Z_l = X_l·bf16(W_l) + b_l (fp32), hidden
//    layers store X_{l+1} = bf16(relu(Z_l)), the last the fp32 logits;
//  loss: the mean softmax cross-entropy in binary64 (host, reported only); its gradient
//    dZ = (softmax(Z) - onehot)·fp32(1/B) with the contract's vector softmax (vector unit);
//  backward, l = L-1 .. 0, with G_l = bf16(dZ_l):
//    dW_l = X_lᵀ·G_l (accelerator, fp32 out; X_l read transposed by the machine),
//    db_l = the column sums of G_l (host, fp32, rows in order),
//    for l > 0: dX_l = bf16(G_l·bf16(W_l)ᵀ) (accelerator; W_l read transposed by the machine),
//    dZ_{l-1} = [X_l > 0]·dX_l + 0 (vector unit: relu's mask);
//  update (vector unit, fp32, each operation rounded): v = v·momentum + g (with momentum), then
//    w = v·(-lr) + w (or g·(-lr) + w).
// "Vector unit": the numerics contract's vector operations in the machine's mode, as jobs of kind
// kVector or kSoftmax where the machine has the vector unit (VectorUnit below), else the same bits
// computed by the host (host::VectorOnHost, host::SoftmaxOnHost).
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "tpu/net.h"
#include "tpu/numerics.h"

namespace tpu::train {

struct Dense {
  int in = 0, out = 0;
  std::vector<float> w;    // in × out row-major, the fp32 master weights
  std::vector<float> b;    // out
  std::vector<float> v_w;  // momentum buffers (zero until the first step with momentum)
  std::vector<float> v_b;
};

struct Mlp {
  std::vector<Dense> layers;  // relu after every layer but the last
  std::vector<int> Sizes() const;
  uint64_t ForwardMacs(int batch) const;
};

// An MLP read from an ONNX graph (tpu/net.h): the input (rows × features, any shape whose
// dimensions after the first multiply to the first layer's inputs), optionally through Flatten,
// Reshape or Identity, then layers Gemm (alpha = beta = 1, transA = 0, transB 0 or 1, a 1-D bias
// initializer) or MatMul with an Add of a 1-D initializer, each but the last followed by Relu,
// weights and biases initializers. `binding` records where each came from. Throws net::Error
// naming the node that does not fit.
struct MlpBinding {
  std::string input, output;
  struct Layer {
    std::string w, b;
    bool trans_b = false;  // the weight initializer is out × in (Gemm transB = 1)
  };
  std::vector<Layer> layers;
};
Mlp MlpFromGraph(const net::Graph& g, MlpBinding* binding);
// The trained weights and biases as the graph's initializers (binding's names and layouts).
std::map<std::string, net::Tensor> MlpInitializers(const Mlp& m, const MlpBinding& binding);

// He-uniform initial weights from a seed (docs/training.md, "Initial weights"): w = (2u - 1) ·
// sqrt(6 / in), u uniform in [0, 1) from SplitMix64, in binary64 rounded to fp32; biases +0.
// Throws std::invalid_argument for fewer than 2 sizes or a size < 1.
Mlp InitMlp(const std::vector<int>& sizes, uint64_t seed);

struct Recipe {
  int batch = 32;
  float lr = 0.1f;
  float momentum = 0.0f;  // 0: plain SGD
};

// The order of the training rows in an epoch: a Fisher-Yates shuffle of 0 .. n-1 driven by
// SplitMix64 seeded with seed + epoch (docs/training.md, "Data order").
std::vector<int> EpochOrder(int n, uint64_t seed, int epoch);

// The passes of a step, as the `step` argument of the AccelFn (per-pass statistics): the update
// is the SGD update's vector jobs (the loss gradient and relu's masks belong to the backward pass).
enum Pass : int { kForward = 0, kBackward = 1, kEvaluation = 2, kUpdate = 3 };

// The machine's vector unit as a step uses it (docs/training.md, "The vector work"): with
// vmem_depth > 0 the loss gradient, relu's masks and the update run there as jobs, without it the
// host computes the same bits, so a step's bits do not depend on it. `lanes`: the array's columns
// C (the update's tensor is that wide: one column tile).
struct VectorUnit {
  int vmem_depth = 0;
  int lanes = 1;
};

struct StepResult {
  float loss = 0;   // the batch's mean cross-entropy (binary64, rounded to fp32)
  int correct = 0;  // rows whose largest logit (the first on a tie) is the label
  uint64_t forward_macs = 0, backward_macs = 0;
};

// The forward and backward passes of a step: the loss and every layer's gradients (dw in × out,
// db out, fp32), the weights untouched. Throws std::invalid_argument for a label out of range
// or a size mismatch.
struct Gradients {
  StepResult result;
  std::vector<std::vector<float>> dw, db;  // by layer
};
Gradients Backprop(const Mlp& m, const std::vector<float>& x, const std::vector<int32_t>& y,
                   const net::AccelFn& run, num::Mode mode, VectorUnit vu = {});

// One SGD step on rows x (batch × in float32) with labels y (0 .. out-1): Backprop, then every
// layer's update.
StepResult Step(Mlp& m, const Recipe& r, const std::vector<float>& x, const std::vector<int32_t>& y,
                const net::AccelFn& run, num::Mode mode, VectorUnit vu = {});

// The logits (batch × out fp32) of rows x (batch × in) by the forward pass of Step.
std::vector<float> Logits(const Mlp& m, const std::vector<float>& x, int batch,
                          const net::AccelFn& run, num::Mode mode);

// A convolution's gradients (docs/training.md, "Convolutions"): x NHWC (N·H·W × Cin) and w HWIO
// (K × Cout, K = kh·kw·Cin) as the forward job multiplied them (bf16), dy (M × Cout, M = N·OH·OW
// output pixels, fp32). With G = bf16(dy):
//  dw with stride 1: the accelerator's convolution of x's channels (images of H × W, the batch
//       as their channels) with G as the kernel (OH × OW taps); else im2col(x)ᵀ·G (accelerator,
//       fp32 out: the host's im2col matrix, the numerics contract's, read transposed),
//  db = the column sums of G (host, fp32, pixels in order),
//  dx when need_dx: for a square kernel of stride 1 (pad <= k - 1) the accelerator's convolution
//       of G padded by k - 1 - pad with w turned by 180° and its channels swapped (fp32 out);
//       else col2im(G·wᵀ) (accelerator, fp32 out: w read transposed; then the host adds each
//       input element's taps in fp32 from +0, output pixels in order, taps in order).
struct ConvGradients {
  std::vector<float> dw, db, dx;
  uint64_t macs = 0;
};
ConvGradients ConvBackward(const host::ConvShape& s, const std::vector<uint16_t>& x,
                           const std::vector<uint16_t>& w, const std::vector<float>& dy,
                           bool need_dx, const net::AccelFn& run, num::Mode mode);

// A network trained from its ONNX graph (docs/training.md, "Networks"; the digits CNN): Conv
// (one group, no dilation, equal pads and strides), BatchNormalization (batch statistics in
// training, running averages in evaluation), Relu, Add, MaxPool (no padding),
// GlobalAveragePool, Flatten and Gemm, convolutions and dense layers on the accelerator and the
// rest on the host, each step's numerics in docs/numerics.md ("Training networks"). Values
// between nodes are fp32 NCHW; accelerator operands are rounded to bf16.
class Network {
 public:
  // Throws net::Error naming the node that is not supported.
  static Network FromGraph(const net::Graph& g);
  Network(Network&&) noexcept;
  Network& operator=(Network&&) noexcept;
  ~Network();
  // He-uniform weights as InitMlp's stream, in the order of the nodes and each weight
  // initializer's own layout (fan-in: every dimension but the output channels); biases +0,
  // BatchNormalization scale 1, bias +0, running mean +0, running variance 1.
  void InitFromSeed(uint64_t seed);
  int64_t Features() const;  // per row of the input
  int Classes() const;       // of the output Gemm (0 when the output is not one)

  struct Grads {
    StepResult result;
    std::map<std::string, std::vector<float>> d;  // by initializer name
  };
  // Forward (batch statistics) and backward passes; update_running_stats: BatchNormalization's
  // running averages take the batch's statistics (a training step does).
  Grads Backprop(const std::vector<float>& x, const std::vector<int32_t>& y,
                 const net::AccelFn& run, num::Mode mode, bool update_running_stats = false,
                 VectorUnit vu = {});
  // Backprop, then SGD on every weight and bias (Recipe's lr and momentum).
  StepResult Step(const Recipe& r, const std::vector<float>& x, const std::vector<int32_t>& y,
                  const net::AccelFn& run, num::Mode mode, VectorUnit vu = {});
  // The output in evaluation mode (running statistics), jobs sent as pass kEvaluation.
  std::vector<float> Logits(const std::vector<float>& x, int batch, const net::AccelFn& run,
                            num::Mode mode);
  // Every float initializer, trained (and the running statistics).
  std::map<std::string, net::Tensor> Initializers() const;

 private:
  struct Op;
  struct Trace;
  Network();
  Trace Forward(const std::vector<float>& x, int batch, bool training, const net::AccelFn& run,
                num::Mode mode);
  std::string input_, output_;
  net::Shape input_shape_;
  std::map<std::string, net::Tensor> params_;
  std::vector<std::unique_ptr<Op>> ops_;
  std::map<std::string, std::vector<float>> velocity_;
};

// The steps around the GEMMs, exposed for the tests (docs/numerics.md, "Training"). Each runs on
// the vector unit where `vu` has one (jobs through `run`), else on the host, with the same bits.
// Mean cross-entropy of logits (batch × n) against y (binary64, reported), and its gradient dZ
// (batch × n fp32) as the header says.
float SoftmaxCrossEntropy(const std::vector<float>& logits, const std::vector<int32_t>& y, int n,
                          std::vector<float>* grad, num::Mode mode, const net::AccelFn& run = {},
                          VectorUnit vu = {});
// Relu's mask: [x > 0]·dy + 0 element by element (+0 where x is not > 0 and dy finite).
std::vector<float> ReluBackward(const std::vector<float>& x, const std::vector<float>& dy,
                                num::Mode mode, const net::AccelFn& run = {}, VectorUnit vu = {});
// The update of one or more parameters as the header says (one job, or two with momentum, for
// all of them): w, its velocity v (zeros when empty and momentum ≠ 0) and its gradient g.
struct Param {
  std::vector<float>* w;
  std::vector<float>* v;
  const std::vector<float>* g;
};
void SgdUpdate(const std::vector<Param>& params, float lr, float momentum, num::Mode mode,
               const net::AccelFn& run = {}, VectorUnit vu = {});
inline void SgdUpdate(std::vector<float>& w, std::vector<float>& v, const std::vector<float>& g,
                      float lr, float momentum, num::Mode mode) {
  SgdUpdate({{&w, &v, &g}}, lr, momentum, mode);
}

}  // namespace tpu::train
