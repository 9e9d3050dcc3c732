// SPDX-License-Identifier: Apache-2.0
// The accelerator's instruction set, version 1.4 (docs/isa.md): constants, one struct per
// instruction kind, the 32-byte encoding, decoding with reserved-bit checks, the per-instruction
// rules against a machine configuration, and a one-line disassembly.
//
// Decoding answers ERR_OPCODE / ERR_RESERVED; checking answers ERR_HEADER / ERR_SHAPE /
// ERR_FIELD / ERR_HBM. Every error carries a message naming the field, its value and the limit.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <variant>

#include "tpu/isa_defs.h"
#include "tpu/numerics.h"

namespace tpu::isa {

// The encoding constants (kInstrBytes, the version, kMagic, Opcode, ErrorCode, field offsets)
// and the register map come from rtl/accel/isa.json through the generated tpu/isa_defs.h.
inline constexpr uint32_t kHbmAlign = 32;    // hbm_addr and hbm_stride must be multiples of it
inline constexpr uint32_t kMaxTokens = 255;  // per queue

const char* ErrorName(ErrorCode e);  // "OK", "ERR_OPCODE", ...

// The machine a program runs on (or is compiled for).
struct MachineConfig {
  int r = 16;            // array rows (the K-chunk)
  int c = 16;            // array columns (the N-chunk)
  int act_depth = 2048;  // activation-buffer rows of R bf16
  int wgt_depth = 2048;  // weight-buffer rows of C bf16
  int acc_depth = 4096;  // accumulator rows of C fp32
  uint64_t hbm_bytes = uint64_t(1) << 30;
  num::Mode mode = num::Mode::kIeee;
  // The command processor's per-module dispatch queues: instructions dispatched but not yet
  // started (docs/isa.md, "Dispatch"). Last, so positional initialisers of the others still hold.
  int queue_depth = 32;
  // Not part of the machine's behaviour: the DMA's peak bytes per cycle, which the host library's
  // planner may use to trade block height for HBM bytes (0: unknown, plans ignore bandwidth).
  double dma_bytes_per_cycle = 0;
  // The vector unit (version 1.4): VMEM rows of C fp32 lanes; 0 is a machine without the unit,
  // which decodes and checks every instruction as version 1.3 did.
  int vmem_depth = 0;
  bool vector_unit() const { return vmem_depth > 0; }
};

// Dependency flags (byte 1): bit 0 pop_prev, 1 pop_next, 2 push_prev, 3 push_next.
struct Deps {
  bool pop_prev = false;
  bool pop_next = false;
  bool push_prev = false;
  bool push_next = false;
  uint8_t Bits() const;
  static Deps FromBits(uint8_t b);
  bool operator==(const Deps& o) const { return Bits() == o.Bits(); }
  bool operator!=(const Deps& o) const { return !(*this == o); }
};

struct Header {
  Deps deps;  // must be all clear
  std::array<uint8_t, 4> magic = kMagic;
  uint16_t major = kVersionMajor;
  uint16_t minor = kVersionMinor;
  uint16_t r = 0;
  uint16_t c = 0;
  uint32_t count = 0;  // instructions, including this one
  bool operator==(const Header& o) const;
};

enum Buffer : uint8_t { kBufAct = 0, kBufWgt = 1, kBufAcc = 2, kBufVmem = 3 };

struct Load {
  Deps deps;
  uint8_t buffer = kBufAct;
  uint64_t hbm_addr = 0;
  uint32_t hbm_stride = 0;
  uint16_t dst = 0;
  uint16_t rows = 0;
  uint16_t elems = 0;
  // Version 1.3: HBM row i, element e goes to buffer row dst + e, element i (buffers 0 and 1).
  bool transpose = false;
  // Version 1.4, buffer 3 (the vector memory) only: what HBM holds, kFmtFp32 or kFmtBf16.
  uint8_t format = 0;
  // Version 1.5, buffer 2 (the accumulators) only, not both (docs/isa.md "Residual adds"):
  //  * hold: the row read (rows = 1) goes to the compute module's held row, not the accumulators;
  //  * add: every row written is the row read plus the held row, element by element, the vector
  //    unit's add (fma32(x, 1, held), one rounding). The held row is +0 when a run starts.
  bool hold = false;
  bool add = false;
  bool operator==(const Load& o) const;
};

// A GEMM's convolution window (mode bit `window`, version 1.1): row m of the GEMM is output pixel
// p = out_col + m of an output row out_width wide, i.e. (oh, ow) = (out_row + p / out_width,
// p % out_width); its activation vector is the buffer row act + (ih - band_row)·width + iw of the
// input pixel (ih, iw) = (oh·stride + dh, ow·stride + dw), or +0 when ih is outside the band
// (band_row .. band_row + band_rows - 1) or iw outside 0 .. width - 1 (zero padding).
struct Window {
  uint8_t stride = 0;
  int8_t dh = 0;
  int8_t dw = 0;
  uint16_t band_row = 0;
  uint16_t band_rows = 0;
  uint16_t width = 0;
  uint16_t out_width = 0;
  uint16_t out_row = 0;
  uint16_t out_col = 0;
  bool operator==(const Window& o) const;
  // The activation-buffer row offset (from act) of GEMM row m, or -1 for a +0 row.
  int64_t RowOf(int m) const;
};

struct Gemm {
  Deps deps;
  uint16_t act = 0;
  uint16_t wgt = 0;
  uint16_t acc = 0;
  uint16_t rows = 0;
  uint16_t kv = 0;
  uint16_t nv = 0;
  bool accumulate = false;
  bool load_weights = false;
  bool window = false;  // rows come through `win` (the fields are 0 without it)
  Window win;           // all 0 without the window bit
  // Mode bit `broadcast` (version 1.2): every row starts from accumulator row init_row (a bias
  // loaded once) instead of +0; not with `accumulate`. init_row is 0 without the bit.
  bool broadcast = false;
  uint16_t init_row = 0;
  bool operator==(const Gemm& o) const;
};

enum Format : uint8_t { kFmtFp32 = 0, kFmtBf16 = 1 };
enum Activation : uint8_t { kActNone = 0, kActRelu = 1 };

struct Store {
  Deps deps;
  uint8_t format = kFmtFp32;
  uint8_t activation = kActNone;
  uint64_t hbm_addr = 0;
  uint32_t hbm_stride = 0;
  uint16_t acc = 0;
  uint16_t rows = 0;
  uint16_t elems = 0;
  // Version 1.4: kSrcVmem reads the vector memory's rows acc .. acc + rows - 1.
  uint8_t source = 0;
  // Version 1.6: the first element of each row stored (elements col .. col + elems - 1; col's
  // bytes a multiple of 32, col + elems <= C): part of a row into another tile (host::Link's
  // placed outputs across a tile boundary).
  uint16_t col = 0;
  bool operator==(const Store& o) const;
};

enum Source : uint8_t { kSrcAcc = 0, kSrcVmem = 1 };

// The vector unit's operation (version 1.4): for i < m, then j < n,
// D[d + i*dso + j*dsi] = op(A[a + i*aso + j*asi], B[b + i*bso + j*bsi] or the scalar, old D),
// on all C lanes; A and B from the accumulators or the vector memory, D in the vector memory.
struct Vop {
  Deps deps;
  uint8_t op = 0;  // VectorOp
  bool a_vmem = false;
  bool b_vmem = false;
  bool b_scalar = false;
  uint16_t a = 0, b = 0, d = 0;
  uint16_t n = 1, m = 1;
  uint16_t asi = 0, aso = 0, bsi = 0, bso = 0, dsi = 0, dso = 0;
  uint32_t scalar = 0;  // 0 without b_scalar
  bool operator==(const Vop& o) const;
};

struct End {
  Deps deps;  // must be all clear
  bool operator==(const End& o) const { return deps == o.deps; }
};

using Instr = std::variant<Header, Load, Gemm, Store, End, Vop>;
using Bytes = std::array<uint8_t, kInstrBytes>;

Opcode OpcodeOf(const Instr& in);
const Deps& DepsOf(const Instr& in);
Deps& DepsOf(Instr& in);

// Which part of the machine executes an instruction. LOAD goes to compute for buffer 2, to store
// for buffer 3 (the vector memory; on a machine without the vector unit to load, as version 1.3)
// and to load otherwise (an invalid buffer value is refused by Check); VOP to store.
enum class Module : uint8_t { kLoad = 0, kCompute = 1, kStore = 2, kAll, kCommand };
const char* ModuleName(Module m);
Module ModuleOf(const Instr& in, bool vector_unit = true);
// The module of an instruction's raw bytes, by its opcode byte and a LOAD's buffer byte alone, so
// also for one that does not decode (the pc of an error): kLoad, kCompute or kStore for a LOAD,
// GEMM or STORE, kCommand for HEADER, kAll for END, nullopt for an unknown opcode.
std::optional<Module> ModuleOfBytes(const uint8_t* in, bool vector_unit = true);

Bytes Encode(const Instr& in);

// Decoding never looks at the machine: an unknown opcode, a reserved byte or bit set, or a
// dependency flag illegal for the instruction's module (prev flags in the load module, next flags
// in the store module, any flag on HEADER / END) is refused. Without `vector_unit` it decodes as
// version 1.3: VOP is an unknown opcode and byte 6 of LOAD and STORE is reserved.
struct DecodeResult {
  ErrorCode code = ErrorCode::kOk;
  std::string message;  // names the field; empty when ok
  Instr instr;          // valid when code == kOk
  bool ok() const { return code == ErrorCode::kOk; }
};
DecodeResult Decode(const uint8_t* bytes, bool vector_unit = true);

// What Check needs beyond the instruction and the machine: where it sits in the program and the
// weights the compute module's previous GEMM loaded (program order).
struct CheckContext {
  uint32_t pc = 0;
  uint32_t host_count = 0;  // the program length the host wrote to the control registers
  bool weights_loaded = false;
  uint16_t weights_kv = 0;
  uint16_t weights_nv = 0;
  // Moves the context past `in` (records the weights a GEMM loads).
  void Advance(const Instr& in);
};

struct CheckResult {
  ErrorCode code = ErrorCode::kOk;
  std::string message;
  bool ok() const { return code == ErrorCode::kOk; }
};
// The rules of docs/isa.md for one decoded instruction. Field rules (ERR_FIELD) are checked
// before HBM rules (ERR_HBM), each in the order the fields are laid out.
CheckResult Check(const Instr& in, const MachineConfig& cfg, const CheckContext& ctx);

// One readable line, e.g. "GEMM act=0 wgt=16 acc=0 rows=64 kv=16 nv=16 acc+ load_w
// [pop_prev push_next]".
std::string Disassemble(const Instr& in);
std::string FormatDeps(const Deps& d);  // "[pop_prev push_next]", "" when no flag is set

}  // namespace tpu::isa
