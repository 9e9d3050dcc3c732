// SPDX-License-Identifier: Apache-2.0
// Random GEMM operands for the matrix-unit tests and benchmarks.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "tpu/gemm.h"
#include "tpu/tb/rng.h"

namespace tpu::tb {

enum class GemmData : uint8_t {
  kModerate,  // finite values with exponents within 2^±8: long chains stay finite and round
  kSpecials,  // kModerate with ±0, subnormals, ±inf, NaN and extremes mixed in (about 4%)
  kTiny,      // values near the subnormal range: products underflow, FTZ and IEEE differ
};
const char* GemmDataName(GemmData d);

struct GemmOperands {
  gemm::Shape shape;
  std::vector<uint16_t> a, b;
  std::vector<uint32_t> c0;  // empty unless asked for
};

GemmOperands RandomGemm(Rng& rng, const gemm::Shape& s, GemmData kind, bool with_c0);

// "M×K×N" for messages.
std::string ShapeName(const gemm::Shape& s);

}  // namespace tpu::tb
