// SPDX-License-Identifier: Apache-2.0
// Workloads for the accelerator front ends (tpusim, tests, benches): a program compiled by the
// host library (tpu/host.h), its named tensors with their HBM layouts, and the input data, random
// from a seed or given by the host. Load() writes program and inputs into a back end (accel::Sim)
// or the golden model (isa::Machine); ReadTensor() reads a tensor back row-major. The scoreboard
// that compares a back end with the golden model is in tpu/tb/accel_scoreboard.h.
//
// Tensor names: GEMM / dense / host: inputs A (M x K bf16), B (K x N bf16), C0 or bias (fp32),
// output C. MLP: inputs X, L<i>.W, L<i>.bias; outputs L<i>.out for every layer (hidden ones bf16).
// Convolution: inputs X (NHWC, N·H·W x Cin, read through GEMM windows) or, where the host lowers
// it by im2col, im2col(X) (the patch matrix the program reads); the NHWC input itself is also
// Workload::conv_input; W (HWIO = K x Cout), bias; output Y (NHWC, coordinates n, oh, ow, cout).
#pragma once

#include <cstdint>
#include <future>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "tpu/host.h"
#include "tpu/isa_model.h"
#include "tpu/net.h"
#include "tpu/tb/accel_sim.h"

namespace tpu::tb::accel {

// Random input values: finite bf16 over 25 binades (2^-12 .. 2^12, both signs) with about 5%
// zeros and 1% subnormals; kSpecials mixes in ±inf, NaN and extremes (about 4%).
enum class Values : uint8_t { kFinite, kSpecials };

struct Tensor {
  std::string name;
  bool weights = false;                 // layout: `wgt` when set, else `mat`
  host::TiledMatrix mat;                // activations, C0, biases, outputs
  host::WeightTiles wgt;                // B / W
  int elem_bytes = 2;                   // 2 bf16, 4 fp32
  std::vector<uint32_t> data;           // inputs: row-major bit patterns (bf16 in the low 16 bits)
  std::optional<host::ConvShape> conv;  // a convolution's output: rows are (n, oh, ow)

  int Rows() const { return weights ? wgt.k : mat.rows; }
  int Cols() const { return weights ? wgt.n : mat.cols; }
  uint64_t Elements() const { return uint64_t(Rows()) * Cols(); }
  // Coordinates of row-major element `index`: "row 3, col 5" or "n 0, oh 1, ow 2, cout 3".
  std::string Where(uint64_t index) const;
  // "C (64x64 fp32)".
  std::string Describe() const;
};

struct Workload {
  std::string kind;         // "gemm", "dense", "mlp", "conv", "host"
  std::string description;  // shape and options, e.g. "64x64x64, overwrite, fp32 out"
  uint64_t seed = 0;        // of the random inputs (0 for host data)
  host::Compiled prog;
  std::vector<Tensor> inputs;
  std::vector<Tensor> outputs;
  std::optional<host::ConvShape> conv;
  std::vector<uint16_t> conv_input;  // NHWC bf16 (convolutions)

  uint64_t Macs() const { return prog.stats.macs; }
  uint32_t Instructions() const { return prog.count(); }
  uint64_t ProgramBytes() const { return uint64_t(prog.count()) * isa::kInstrBytes; }
  uint64_t InputBytes() const;                          // payload of the inputs (no padding)
  uint64_t OutputBytes() const;                         // payload of the outputs
  const Tensor& Output(const std::string& name) const;  // throws std::out_of_range
};

// out = act(A·B [+ C0]); `init` as in host::CompileGemm. With `trans` (ISA 1.3), A and/or B are
// stored transposed (tensors A: K x M, B: N x K) and the machine's transposing LOADs read them.
Workload MakeGemm(const Config& cfg, int m, int k, int n, host::Init init, host::OutFormat out,
                  bool relu, uint64_t seed, Values values = Values::kFinite,
                  host::GemmTranspose trans = {});
// out = act(A·B + bias) (bias broadcast over rows).
Workload MakeDense(const Config& cfg, int m, int k, int n, bool bias, bool relu,
                   host::OutFormat out, uint64_t seed, Values values = Values::kFinite);
// sizes = {in, hidden..., out}; hidden layers bf16 (relu if asked), the last fp32.
Workload MakeMlp(const Config& cfg, int m, const std::vector<int>& sizes, bool bias, bool relu,
                 uint64_t seed, Values values = Values::kFinite);
// NHWC input, HWIO weights, NHWC output (fp32, or bf16 as a network passes it on).
Workload MakeConv(const Config& cfg, const host::ConvShape& shape, bool bias, bool relu,
                  host::OutFormat out, uint64_t seed, Values values = Values::kFinite);
// C = A·B (+ C0 when `c` is given): A (m x k) and B (k x n) row-major float32 rounded to bf16
// with the numerics contract's fp32 -> bf16 rounding (num::Fp32ToBf16 in the machine's mode);
// C0 kept fp32 and preloaded. Throws std::invalid_argument on a size mismatch.
Workload MakeFromHost(const Config& cfg, int m, int k, int n, const std::vector<float>& a,
                      const std::vector<float>& b, const std::vector<float>* c = nullptr);

// One accelerator job of a network (tpu/net.h) with its data: a convolution (tensor names as
// MakeConv's), a GEMM with C0 preloaded (as MakeGemm's), or a dense layer (as MakeDense's).
// Throws std::invalid_argument when the data do not match the shape.
// `data_base`: the job's tensors from there up (host::Program), so that jobs compiled one after
// another (each at the previous one's prog.addr) can be linked into one program. `bf16_copy`:
// a job with AccelJob::also_bf16 and an fp32 output stores it twice, the second output
// ("<name>.bf16") bf16 (whole-network programs; a job alone does not need it).
Workload MakeJob(const Config& cfg, const net::AccelJob& job, uint64_t data_base = 0,
                 bool bf16_copy = false);
// The input tensor of MakeJob's workload that holds the job's operand `which` (0: A, the
// activations; 1: a vector job's B; 2: the residual, "R") as the job gives it, or nullptr: no such
// operand, or the program reads something the host derives from it (a convolution's im2col, a
// transposed A, a softmax's slices).
const Tensor* JobOperand(const Workload& w, const net::AccelJob& job, int which);

// Several workloads as one program (host::Link; docs/accel.md "Programs of several layers"):
// each part compiled at the previous part's prog.addr; an input of a part bound to an earlier
// part's output is no longer written by the host. The result's tensors keep their layouts and
// are named "j<part>.<name>"; every part's outputs are outputs, except an output placed into a
// reader's input (col0 ≥ 0: a Concat), where that input is an output instead. Throws
// std::invalid_argument (host::Link's reasons, an unknown tensor, a link to a later part).
struct WorkloadLink {
  size_t part = 0;     // the reading part
  std::string input;   // its input tensor's name
  size_t from = 0;     // the producing part (< part)
  std::string output;  // its output tensor's name
  int col0 = -1;       // ≥ 0: the output is stored into the input at this column (LinkPlace)
  int group = 1;       // > 1: host::LinkBind's group (the input's row i is rows i·group ..)
};
Workload LinkWorkloads(const Config& cfg, const std::vector<Workload>& parts,
                       const std::vector<WorkloadLink>& links);

// Writes the program and the inputs.
void Load(Sim& sim, const Workload& w);
void Load(isa::Machine& m, const Workload& w);
// Runs the loaded program.
Result Run(Sim& sim, const Workload& w, const RunOptions& opt);
// Loads and runs the workload on the golden model.
isa::RunResult RunGolden(isa::Machine& golden, const Workload& w);
// The same on a fresh golden machine, started on a second thread so that it runs while a back
// end runs the workload (a checked run then takes about the back end's time); get() waits for
// it. `w` must outlive the future.
struct GoldenRun {
  std::unique_ptr<isa::Machine> machine;
  isa::RunResult result;
};
std::future<GoldenRun> StartGolden(const isa::MachineConfig& cfg, const Workload& w);

// A tensor read back row-major (bit patterns, bf16 in the low 16 bits).
std::vector<uint32_t> ReadTensor(Sim& sim, const Tensor& t);
std::vector<uint32_t> ReadTensor(const isa::Machine& m, const Tensor& t);

}  // namespace tpu::tb::accel
