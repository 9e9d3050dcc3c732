// SPDX-License-Identifier: Apache-2.0
// Stimulus for the MAC and the converter: special values, addends drawn to matter, and the
// TestFloat-style directed families (exponent sweeps, cancellations, rounding ties, the
// subnormal boundary). Shared by the tests, the exhaustive sweeps and the benchmark.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "tpu/numerics.h"
#include "tpu/tb/rng.h"

namespace tpu::tb {

struct MacVector {
  uint16_t a;
  uint16_t b;
  uint32_t c;
};

// Special values: ±0, smallest/largest subnormal, smallest/largest normal, ±1, ±inf, NaNs
// (quiet, negative, signalling).
const std::vector<uint16_t>& Bf16Specials();
const std::vector<uint32_t>& Fp32Specials();

// How the addend c of a sweep is drawn for a given (a, b).
enum class CPolicy : uint8_t {
  kZero,     // c = +0
  kUniform,  // any 32-bit pattern
  kMatter,   // half kUniform, half kNearProduct (the sweep "drawn to matter")
  kCancel,   // within a few ulps of -(a·b): exact and near cancellation
};
uint32_t DrawC(Rng& rng, uint16_t a, uint16_t b, CPolicy policy);

// Directed families; each calls `emit` once per vector.
using MacEmit = std::function<void(const MacVector&)>;
void CornerCross(const MacEmit& emit);                              // specials over a × b × c
void ExponentSweep(Rng& rng, int per_offset, const MacEmit& emit);  // c from pe-80 to pe+80
void Cancellations(Rng& rng, int count, const MacEmit& emit);       // exact and near
void RoundingTies(Rng& rng, int count, const MacEmit& emit);        // ties to even and to odd
void SubnormalBoundary(Rng& rng, int count, const MacEmit& emit);   // results near 2^-126
void FusedDirected(const MacEmit& emit);                            // the contract's named cases

// Converter inputs: every sign and exponent with the rounding-relevant low halves.
void ConverterStructured(Rng& rng, const std::function<void(uint32_t)>& emit);

// "IEEE a=0x3F80 b=0x4000 c=0x3F800000 (1, 2, 1)": one MAC case for a report.
std::string DescribeMac(const MacVector& v, num::Mode mode);

}  // namespace tpu::tb
