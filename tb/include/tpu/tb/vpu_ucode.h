// SPDX-License-Identifier: Apache-2.0
// An interpreter of the vector unit's micro-programs (rtl/vpu/ucode.json, assembled into
// tpu/tb/vpu_ucode_rom.h by scripts/gen_ucode.py; docs/vpu.md, "Micro-programs"): one lane, one
// row, micro-op by micro-op, every arithmetic step on the golden num::Fma32. It decodes the same
// 64-bit words the RTL's ROM holds, so a program it runs bit-exact against the golden model
// (vpu_ucode_test) is a program the RTL lane must run bit-exact too.
#pragma once

#include <cstdint>
#include <cstring>
#include <stdexcept>
#include <string>

#include "tpu/numerics.h"
#include "tpu/tb/vpu_ucode_rom.h"
#include "tpu/vpu.h"

namespace tpu::tb::ucode {

// A lane's state for one row: registers (r0 .. r2 the inputs, r7 the result; the others start
// at +0), the 10-bit integer K (starts at 0) and the predicates (start false).
struct LaneState {
  uint32_t r[kNumRegs] = {};
  int k = 0;
  bool p[kNumPreds] = {};
};

inline uint64_t Get(uint64_t word, Field f) {
  return (word >> f.lsb) & ((uint64_t{1} << f.width) - 1);
}

// K's arithmetic wraps in kKBits bits (two's complement).
inline int WrapK(int v) {
  const int m = 1 << kKBits;
  v &= m - 1;
  return v >= m / 2 ? v - m : v;
}

inline const Program& FindProgram(const std::string& name) {
  for (const Program& p : kPrograms) {
    if (name == p.name) return p;
  }
  throw std::invalid_argument("vpu ucode: no micro-program '" + name + "'");
}

// Executes one micro-op on `s`.
inline void Step(uint64_t w, LaneState& s, num::Mode mode) {
  constexpr uint32_t kSign = num::kFp32SignMask;
  if (Get(w, kFieldPen) != 0) {
    const bool p = s.p[Get(w, kFieldPidx)];
    if (p == (Get(w, kFieldPinv) != 0)) return;  // predicated off: nothing is written
  }
  const auto operand = [&](Field f) {
    const auto v = static_cast<int>(Get(w, f));
    return v < kConstBase ? s.r[v] : kConst[v - kConstBase];
  };
  const int imm = WrapK(static_cast<int>(Get(w, kFieldImm)));
  const auto d = static_cast<int>(Get(w, kFieldD));
  const uint32_t a = operand(kFieldA) ^ (Get(w, kFieldNa) != 0 ? kSign : 0u);
  const uint32_t b = operand(kFieldB);
  const uint32_t c = operand(kFieldC) ^ (Get(w, kFieldNc) != 0 ? kSign : 0u);
  switch (static_cast<Op>(Get(w, kFieldOp))) {
    case Op::kFma: s.r[d] = num::Fma32(a, b, c, mode) ^ (Get(w, kFieldNr) != 0 ? kSign : 0u); break;
    case Op::kMov: s.r[d] = a; break;
    case Op::kAbs: s.r[d] = a & ~kSign; break;
    case Op::kMant: s.r[d] = (a & 0x7FFFFFu) | vpu::kOne; break;
    case Op::kCsgn: s.r[d] = (a & ~kSign) | (b & kSign); break;
    case Op::kPow2: s.r[d] = static_cast<uint32_t>((s.k + imm + 127) & 0xFF) << 23; break;
    case Op::kMax: s.r[d] = vpu::Max(a, b, mode); break;
    case Op::kMin: s.r[d] = vpu::Min(a, b, mode); break;
    case Op::kGt: s.r[d] = vpu::Gt(a, b, mode); break;
    case Op::kGe: s.r[d] = vpu::Ge(a, b, mode); break;
    case Op::kEq: s.r[d] = vpu::Eq(a, b, mode); break;
    case Op::kKint: s.r[d] = 0x4B400000u + static_cast<uint32_t>(s.k); break;  // K sign-extended
    case Op::kKfrac: s.k = WrapK(static_cast<int>(a & 0x7FFFFFu) - 0x400000); break;
    case Op::kKexp: s.k = WrapK(static_cast<int>((a >> 23) & 0xFFu) - 127); break;
    case Op::kKadd: s.k = WrapK(s.k + imm); break;
    case Op::kKneg: s.k = WrapK(-s.k); break;
    case Op::kKhalf: s.k = s.k >> 1; break;  // arithmetic: floor(K / 2)
    case Op::kPmag: s.p[d] = (a & ~kSign) >= (b & ~kSign); break;
    case Op::kPsign: s.p[d] = (a & kSign) != 0; break;
    case Op::kPkgt: s.p[d] = s.k > imm; break;
    case Op::kPklt: s.p[d] = s.k < imm; break;
    case Op::kPkodd: s.p[d] = (s.k & 1) != 0; break;
    case Op::kPand:
      s.p[d] = s.p[Get(w, kFieldPa)] && (s.p[Get(w, kFieldPb)] != (Get(w, kFieldPbinv) != 0));
      break;
    default:
      throw std::logic_error("vpu ucode: micro-op with opcode " + std::to_string(Get(w, kFieldOp)) +
                             " has no meaning");
  }
}

// Runs a program on one lane's inputs a (r0), b (r1) and c (r2), read as the contract's operands
// (FTZ: a subnormal as a zero of its sign), and returns r7.
inline uint32_t Run(const Program& prog, uint32_t a, uint32_t b, uint32_t c, num::Mode mode) {
  LaneState s;
  s.r[0] = vpu::Operand(a, mode);
  s.r[1] = vpu::Operand(b, mode);
  s.r[2] = vpu::Operand(c, mode);
  for (int i = 0; i < prog.length; ++i) Step(kRom[prog.start + i], s, mode);
  return s.r[7];
}

}  // namespace tpu::tb::ucode
