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

// The vector unit's fp32 FMA (num::Fma32, tpu_mac with InManBits = 23): the same kinds of
// family on three fp32 operands.
struct Fma32Vector {
  uint32_t a;
  uint32_t b;
  uint32_t c;
};
using Fma32Emit = std::function<void(const Fma32Vector&)>;
// An fp32 operand: one in eight subnormal or zero, one in eight infinite or NaN, one in eight any
// pattern, the rest normal with an exponent within 30 of exp_center (a biased exponent).
uint32_t DrawFp32(Rng& rng, int exp_center);
void Fma32Cross(const Fma32Emit& emit);                             // specials over a × b × c
void Fma32Random(Rng& rng, uint64_t count, const Fma32Emit& emit);  // c near a·b, or anywhere
// Products on a rounding tie or exact (short significands) with an addend 2^-25 .. 2^-140 of their
// size: only the addend's sign decides the rounding (the window's jam).
void Fma32FarAddendTies(Rng& rng, int count, const Fma32Emit& emit);
// Products on a tie ((1 + m·2^-12)^2 for odd m, scaled) against tiny addends (subnormal, or normal
// and far below) of either sign placed at every alignment from partly inside the window to wholly
// out of it: where the window's jam alone decides the rounding, one shifted-out bit at a time.
void Fma32TiesAgainstJams(Rng& rng, int per_shift, const Fma32Emit& emit);
void Fma32Cancellations(Rng& rng, int count, const Fma32Emit& emit);      // exact and near
void Fma32RoundingTies(Rng& rng, int count, const Fma32Emit& emit);       // c + odd·ulp(c)/2
void Fma32SubnormalBoundary(Rng& rng, int count, const Fma32Emit& emit);  // results near 2^-126
// The MAC's families on bf16 operands widened to fp32 (mac(a, b, c) = fma32(a<<16, b<<16, c)).
void Fma32FromMac(Rng& rng, int count, const Fma32Emit& emit);
std::string DescribeFma32(const Fma32Vector& v, num::Mode mode);

// Converter inputs: every sign and exponent with the rounding-relevant low halves.
void ConverterStructured(Rng& rng, const std::function<void(uint32_t)>& emit);

// "IEEE a=0x3F80 b=0x4000 c=0x3F800000 (1, 2, 1)": one MAC case for a report.
std::string DescribeMac(const MacVector& v, num::Mode mode);

}  // namespace tpu::tb
