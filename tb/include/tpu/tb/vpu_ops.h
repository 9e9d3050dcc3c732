// SPDX-License-Identifier: Apache-2.0
// The golden meaning of each vector-unit micro-program (rtl/vpu/ucode.json), by name: the
// instruction set's vector operation of that name (rtl/accel/isa.json's vector_ops, in the same
// order as the ROM's programs; isa::ApplyVectorOp, the golden model's), on A, B (or the scalar)
// and the destination's old value D. The interpreter's test (vpu_ucode_test) and the RTL's
// (vpu_rtl_test) check every program against it.
#pragma once

#include <cstdint>
#include <functional>
#include <string>

#include "tpu/isa_model.h"
#include "tpu/numerics.h"

namespace tpu::tb::ucode {

using Golden = std::function<uint32_t(uint32_t a, uint32_t b, uint32_t d, num::Mode m)>;

// The golden operation of the program `name` (std::invalid_argument if the ISA has none).
inline Golden GoldenOf(const std::string& name) {
  const isa::VectorOp op = isa::VectorOpByName(name);
  return [op](uint32_t a, uint32_t b, uint32_t d, num::Mode m) {
    return isa::ApplyVectorOp(op, a, b, d, m);
  };
}

// Programs of one operand (A): sampled over fp32 patterns rather than drawn in pairs.
inline bool Unary(const std::string& name) {
  const auto& info = isa::kVectorOps[size_t(isa::VectorOpByName(name))];
  return !info.reads_b && !info.reads_d;
}

}  // namespace tpu::tb::ucode
