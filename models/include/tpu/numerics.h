// SPDX-License-Identifier: Apache-2.0
// Golden bf16/fp32 numerics: the numerics contract (docs/numerics.md) in integer arithmetic.
//
// Every function works on bit patterns only; the host FPU is never used for arithmetic here, so
// that it stays an independent oracle for the tests. Formatting helpers use the host float only
// to print a decimal rendering of a value.
#pragma once

#include <cstdint>
#include <string>

namespace tpu::num {

// Arithmetic mode of the accelerator.
enum class Mode : uint8_t {
  kIeee,  // IEEE 754: gradual underflow, subnormals honoured.
  kFtz,   // Subnormal inputs read as zero; subnormal results (after IEEE rounding) flushed.
};

const char* ModeName(Mode m);

// Bit-pattern constants.
inline constexpr uint32_t kFp32CanonicalNaN = 0x7FC00000u;
inline constexpr uint16_t kBf16CanonicalNaN = 0x7FC0u;
inline constexpr uint32_t kFp32SignMask = 0x80000000u;
inline constexpr uint16_t kBf16SignMask = 0x8000u;

// Classification of an fp32 or bf16 bit pattern.
enum class FpClass : uint8_t { kZero, kSubnormal, kNormal, kInf, kNaN };
const char* FpClassName(FpClass c);

FpClass Classify32(uint32_t x);
FpClass Classify16(uint16_t x);
inline bool IsNaN32(uint32_t x) {
  return (x & 0x7FFFFFFFu) > 0x7F800000u;
}
inline bool IsNaN16(uint16_t x) {
  return (x & 0x7FFFu) > 0x7F80u;
}
inline bool IsSubnormal32(uint32_t x) {
  return (x & 0x7F800000u) == 0 && (x & 0x007FFFFFu) != 0;
}
inline bool IsSubnormal16(uint16_t x) {
  return (x & 0x7F80u) == 0 && (x & 0x007Fu) != 0;
}

// Subnormal -> zero of the same sign (the contract's "daz"/"flush" on each format).
inline uint32_t Flush32(uint32_t x) {
  return IsSubnormal32(x) ? (x & kFp32SignMask) : x;
}
inline uint16_t Flush16(uint16_t x) {
  return IsSubnormal16(x) ? (x & kBf16SignMask) : x;
}

// bf16 -> fp32 is exact: append 16 zero bits.
inline uint32_t Bf16ToFp32(uint16_t a) {
  return static_cast<uint32_t>(a) << 16;
}

// mac(a, b, c) = fusedMultiplyAdd(fp32(a), fp32(b), c), rounded once to nearest-even, with the
// contract's zero-sign, NaN (always 0x7FC00000) and FTZ rules.
uint32_t Mac(uint16_t a, uint16_t b, uint32_t c, Mode mode);

// The vector unit's primitive (docs/numerics.md, "The vector unit"): fusedMultiplyAdd(a, b, c) on
// three fp32 values, rounded once to nearest-even, with the MAC's zero-sign, NaN and FTZ rules.
// mac(a, b, c) is fma32(fp32(a), fp32(b), c).
uint32_t Fma32(uint32_t a, uint32_t b, uint32_t c, Mode mode);

// fp32 -> bf16, round to nearest-even on the 16 dropped bits; NaN -> 0x7FC0; FTZ rules.
uint16_t Fp32ToBf16(uint32_t x, Mode mode);

// How a result was rounded: a side channel for functional coverage (tpu/tb/fcov.h). The results
// of the functions below are those of the functions above, bit for bit; `how` only reports.
// "Down" and "up" are in magnitude (toward and away from zero); "ulp" is the result's.
enum class RoundCase : uint8_t {
  kSpecial,             // a NaN or infinite operand decided the result: nothing was rounded
  kExact,               // the exact value is the result (zeros and subnormals included)
  kDown,                // inexact, less than half an ulp dropped
  kUp,                  // inexact, more than half an ulp dropped: rounded away from zero
  kTieEvenDown,         // exactly half an ulp dropped, the even neighbour is the smaller one
  kTieEvenUp,           // exactly half an ulp dropped, the even neighbour is the larger one
  kOverflow,            // a finite exact value rounded to an infinity
  kUnderflowSubnormal,  // inexact, and the result is subnormal
  kUnderflowZero,       // inexact, and the result is a zero (a non-zero value rounded to 0)
  kFtzFlush,            // FTZ mode: a subnormal was replaced by a zero (see below)
};
inline constexpr int kNumRoundCases = 10;
const char* RoundCaseName(RoundCase c);  // "exact", "tie_even_up", ...

// Mac with its rounding case. kFtzFlush: the IEEE-rounded result was subnormal and was flushed
// (subnormal inputs read as zero are the operands' business, not a rounding case).
uint32_t Mac(uint16_t a, uint16_t b, uint32_t c, Mode mode, RoundCase* how);
// Fma32 with its rounding case, as Mac's.
uint32_t Fma32(uint32_t a, uint32_t b, uint32_t c, Mode mode, RoundCase* how);
// Fp32ToBf16 with its rounding case. kFtzFlush: a subnormal input was read as zero (a normal
// input never rounds to a bf16 subnormal: the formats share their exponent range).
uint16_t Fp32ToBf16(uint32_t x, Mode mode, RoundCase* how);

// relu in fp32: NaN -> 0x7FC00000, x > 0 ? x : +0.
uint32_t Relu(uint32_t x);

// The store path's conversion: optional relu in fp32, then rounding to bf16.
inline uint16_t StoreBf16(uint32_t x, bool relu, Mode mode) {
  return Fp32ToBf16(relu ? Relu(x) : x, mode);
}

// Readable renderings: "0x3F80 (1)" and "0x3F800000 (1)", decimal with full precision.
std::string FormatBf16(uint16_t x);
std::string FormatFp32(uint32_t x);

}  // namespace tpu::num
