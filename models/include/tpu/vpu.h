// SPDX-License-Identifier: Apache-2.0
// The vector unit's operations (docs/numerics.md, "The vector unit"), written as the contract
// writes them: every arithmetic step is one fma32 (num::Fma32), and the rest is moving bits (a
// sign flip, reading an integer out of a significand, building a power of two). An
// implementation that computes fma32 bit for bit therefore computes these bit for bit.
//
// The algorithms are templates on the fma, `fma(a, b, c, mode)`, so that the host's fmaf
// (tb/oracles.h's HostFma32) can run the same steps as an independent check of num::Fma32 over
// every input (tpu_sweep's vpu-exp and vpu-recip).
#pragma once

#include <cstdint>
#include <stdexcept>

#include "tpu/numerics.h"

namespace tpu::vpu {

// fp32 constants of the algorithms (bit patterns).
inline constexpr uint32_t kOne = 0x3F800000u;
inline constexpr uint32_t kMinusOne = 0xBF800000u;
inline constexpr uint32_t kMinusZero = 0x80000000u;
inline constexpr uint32_t kPlusInf = 0x7F800000u;

// An operand as the vector unit reads it: FTZ mode reads a subnormal as a zero of its sign.
inline uint32_t Operand(uint32_t x, num::Mode mode) {
  return mode == num::Mode::kFtz ? num::Flush32(x) : x;
}

// a below b in the order of IEEE 754-2019's maximum and minimum: numeric order, with -0 below +0.
// Neither is a NaN.
inline bool Below(uint32_t a, uint32_t b) {
  const bool a_neg = (a & num::kFp32SignMask) != 0, b_neg = (b & num::kFp32SignMask) != 0;
  if (a_neg != b_neg) return a_neg;
  return a_neg ? a > b : a < b;  // one sign: by magnitude, reversed when negative
}

// max(a, b) and min(a, b): IEEE 754-2019 maximum and minimum (a NaN operand gives 0x7FC00000;
// max(-0, +0) = +0, min(-0, +0) = -0), on the operands as read in `mode`. ONNX's Max and Min
// and NumPy's maximum and minimum agree.
inline uint32_t Max(uint32_t a, uint32_t b, num::Mode mode) {
  a = Operand(a, mode), b = Operand(b, mode);
  if (num::IsNaN32(a) || num::IsNaN32(b)) return num::kFp32CanonicalNaN;
  return Below(a, b) ? b : a;
}
inline uint32_t Min(uint32_t a, uint32_t b, num::Mode mode) {
  a = Operand(a, mode), b = Operand(b, mode);
  if (num::IsNaN32(a) || num::IsNaN32(b)) return num::kFp32CanonicalNaN;
  return Below(b, a) ? b : a;
}

// Comparisons, IEEE 754's compareQuiet on the operands as read in `mode`: +1 (0x3F800000) when it
// holds, +0 otherwise; a NaN operand makes every one false (+0), and -0 equals +0. ONNX's Greater,
// GreaterOrEqual and Equal as 1/0 values.
inline bool Equal(uint32_t a, uint32_t b) {  // neither a NaN
  return a == b || ((a | b) & ~num::kFp32SignMask) == 0;
}
inline uint32_t Gt(uint32_t a, uint32_t b, num::Mode mode) {
  a = Operand(a, mode), b = Operand(b, mode);
  if (num::IsNaN32(a) || num::IsNaN32(b)) return 0u;
  return !Equal(a, b) && Below(b, a) ? kOne : 0u;
}
inline uint32_t Ge(uint32_t a, uint32_t b, num::Mode mode) {
  a = Operand(a, mode), b = Operand(b, mode);
  if (num::IsNaN32(a) || num::IsNaN32(b)) return 0u;
  return Equal(a, b) || Below(b, a) ? kOne : 0u;
}
inline uint32_t Eq(uint32_t a, uint32_t b, num::Mode mode) {
  a = Operand(a, mode), b = Operand(b, mode);
  if (num::IsNaN32(a) || num::IsNaN32(b)) return 0u;
  return Equal(a, b) ? kOne : 0u;
}

// select(c, a, b) = a where c is not a zero (as read in `mode`; a NaN is not a zero), else b. The
// chosen operand is returned as it is (bits moved, nothing computed). ONNX's Where with c as 1/0.
inline uint32_t Select(uint32_t c, uint32_t a, uint32_t b, num::Mode mode) {
  return (Operand(c, mode) & ~num::kFp32SignMask) != 0 ? a : b;
}

// relu(x) = max(x, +0): the store path's relu (num::Relu) on the operand as read in `mode`.
inline uint32_t Relu(uint32_t x, num::Mode mode) {
  return Max(x, 0u, mode);
}

// clip(x, lo, hi) = min(max(x, lo), hi), as ONNX's Clip (lo > hi gives hi).
inline uint32_t Clip(uint32_t x, uint32_t lo, uint32_t hi, num::Mode mode) {
  return Min(Max(x, lo, mode), hi, mode);
}

// leaky_relu(x, alpha): x * alpha (one fma32 with a -0 addend) where x < 0, else x; a NaN gives
// 0x7FC00000, and -0 stays -0 (it is not below 0), as ONNX's LeakyRelu. PReLU is the same with
// alpha per channel.
template <class Fma>
uint32_t LeakyReluWith(uint32_t x, uint32_t alpha, num::Mode mode, Fma fma) {
  x = Operand(x, mode);
  if (num::IsNaN32(x)) return num::kFp32CanonicalNaN;
  const bool below_zero = (x & num::kFp32SignMask) != 0 && (x & ~num::kFp32SignMask) != 0;
  return below_zero ? fma(x, alpha, kMinusZero, mode) : x;
}
inline uint32_t LeakyRelu(uint32_t x, uint32_t alpha, num::Mode mode) {
  return LeakyReluWith(x, alpha, mode, [](uint32_t a, uint32_t b, uint32_t c, num::Mode m) {
    return num::Fma32(a, b, c, m);
  });
}

// exp's constants: 1.5 * 2^23 (adding it rounds to an integer), log2(e), ln(2) in two parts, and
// the Taylor coefficients 1/7! .. 1/2!, 1, 1, each rounded to fp32.
inline constexpr uint32_t kExpShift = 0x4B400000u;      // 12582912
inline constexpr uint32_t kExpLog2e = 0x3FB8AA3Bu;      // 1.44269502...
inline constexpr uint32_t kExpLn2Hi = 0x3F317218u;      // 0.693147182...
inline constexpr uint32_t kExpLn2Lo = 0xB102E308u;      // -1.90465432e-9
inline constexpr uint32_t kExpOverflow = 0x42B17218u;   // 88.7228394: exp(x) > FLT_MAX from here
inline constexpr uint32_t kExpUnderflow = 0x42D00000u;  // 104: exp(-x) < 2^-150 from here
inline constexpr uint32_t kExpPoly[8] = {0x39500D01u, 0x3AB60B61u, 0x3C088889u, 0x3D2AAAABu,
                                         0x3E2AAAABu, 0x3F000000u, kOne,        kOne};

// The bound on Exp's error against exp's exact value, in units in the last place of the fp32
// result (the binade's ulp; 2^-149 for subnormal results), in IEEE mode: checked over all 2^32
// inputs by `tpu_sweep --sweep vpu-exp` (the largest is 0.9386 ulp, at x = 0x41D582E9) and on a
// sample by vpu_test.
inline constexpr double kExpMaxUlp = 1.0;

// p * 2^k rounded once, the last step of exp, reciprocal and division (the micro-program `scale`):
// fma32(p, 2^k, -0) for -126 <= k <= 127; for k > 127 fma32(fma32(p, 2^127, -0), 2^(k-127), -0);
// for k < -126 fma32(fma32(p, 2^(k+64), -0), 2^-64, -0) (the inner product exact, the outer one
// rounding into the subnormals or to an infinity). -190 <= k <= 254.
template <class Fma>
uint32_t ScaleWith(uint32_t p, int k, num::Mode mode, Fma fma) {
  const auto pow2 = [](int e) { return static_cast<uint32_t>(e + 127) << 23; };
  if (k > 127) return fma(fma(p, pow2(127), kMinusZero, mode), pow2(k - 127), kMinusZero, mode);
  if (k < -126) return fma(fma(p, pow2(k + 64), kMinusZero, mode), pow2(-64), kMinusZero, mode);
  return fma(p, pow2(k), kMinusZero, mode);
}

// exp(x), the contract's algorithm:
//   NaN -> 0x7FC00000; x >= 88.7228394 (+inf included) -> +inf; x <= -104 (-inf included) -> +0;
//   s = fma32(x, log2e, 1.5*2^23)          x*log2(e) rounded to the integer k, held in s
//   k = (s's fraction field) - 2^22        an integer in [-150, 128]
//   t = fma32(1.5*2^23, -1, s)             k as fp32 (exact)
//   r = fma32(-t, ln2_hi, x); r = fma32(-t, ln2_lo, r)      x - k*ln2, |r| <= 0.35
//   p = c7; p = fma32(p, r, c) for c = c6 .. c2, 1, 1       e^r by Horner (Taylor, degree 7)
//   p * 2^k, rounded once: fma32(p, 2^k, -0) for -126 <= k <= 127; for k = 128,
//   fma32(fma32(p, 2^127, -0), 2, -0); for k < -126, fma32(fma32(p, 2^(k+64), -0), 2^-64, -0)
//   (the inner product is exact, the outer one rounds into the subnormals or to +inf).
// Every step in `mode`: FTZ reads a subnormal x as zero (exp = 1) and flushes a subnormal result.
template <class Fma>
uint32_t ExpWith(uint32_t x, num::Mode mode, Fma fma) {
  if (num::IsNaN32(x)) return num::kFp32CanonicalNaN;
  const bool neg = (x & num::kFp32SignMask) != 0;
  const uint32_t mag = x & ~num::kFp32SignMask;
  if (!neg && mag >= kExpOverflow) return kPlusInf;
  if (neg && mag >= kExpUnderflow) return 0u;
  const uint32_t s = fma(x, kExpLog2e, kExpShift, mode);
  const int k = static_cast<int>(s & 0x7FFFFFu) - 0x400000;
  const uint32_t minus_t = fma(kExpShift, kMinusOne, s, mode) ^ num::kFp32SignMask;
  uint32_t r = fma(minus_t, kExpLn2Hi, x, mode);
  r = fma(minus_t, kExpLn2Lo, r, mode);
  uint32_t p = kExpPoly[0];
  for (int i = 1; i < 8; ++i) p = fma(p, r, kExpPoly[i], mode);
  return ScaleWith(p, k, mode, fma);
}

// reciprocal's constants: the initial line 24/17 - 8/17*m for 1/m on [1, 2) (its relative error is
// at most 1/17)
// and the error bound, checked over all 2^32 inputs by `tpu_sweep --sweep vpu-recip`.
inline constexpr uint32_t kRecip24Over17 = 0x3FB4B4B5u;      // 1.41176474
inline constexpr uint32_t kRecipMinus8Over17 = 0xBEF0F0F1u;  // -0.470588237
inline constexpr double kRecipMaxUlp = 1.0;

// 1/x, the contract's algorithm:
//   NaN -> 0x7FC00000; +-0 -> +-inf; +-inf -> +-0 (FTZ: a subnormal x is +-0 first);
//   a subnormal x (IEEE mode) is first scaled exactly: fma32(|x|, 2^64, -0);
//   |x| = m * 2^e with m in [1, 2) (m: |x|'s fraction under the exponent of 1);
//   y = fma32(m, -8/17, 24/17); three times: d = fma32(-m, y, 1), y = fma32(y, d, y)  (Newton)
//   |1/x| = y * 2^-e, rounded once as exp's p * 2^k (k = -e): one fma32 with 2^k for
//   -126 <= k <= 127, else through 2^127 or 2^(k+64) and 2^-64; the sign is x's.
template <class Fma>
uint32_t RecipWith(uint32_t x, num::Mode mode, Fma fma) {
  x = Operand(x, mode);
  if (num::IsNaN32(x)) return num::kFp32CanonicalNaN;
  const uint32_t sign = x & num::kFp32SignMask;
  uint32_t mag = x & ~num::kFp32SignMask;
  if (mag == 0) return sign | kPlusInf;
  if (mag == kPlusInf) return sign;
  const auto pow2 = [](int e) { return static_cast<uint32_t>(e + 127) << 23; };
  int e = -127;
  if (mag < 0x00800000u) {
    mag = fma(mag, pow2(64), kMinusZero, mode);  // a subnormal: exact, now normal
    e -= 64;
  }
  e += static_cast<int>(mag >> 23);
  const uint32_t m = (mag & 0x7FFFFFu) | kOne;
  uint32_t y = fma(m, kRecipMinus8Over17, kRecip24Over17, mode);
  for (int i = 0; i < 3; ++i) {
    const uint32_t d = fma(m ^ num::kFp32SignMask, y, kOne, mode);
    y = fma(y, d, y, mode);
  }
  return sign | ScaleWith(y, -e, mode, fma);
}

inline uint32_t Recip(uint32_t x, num::Mode mode) {
  return RecipWith(x, mode, [](uint32_t a, uint32_t b, uint32_t c, num::Mode m) {
    return num::Fma32(a, b, c, m);
  });
}

// rsqrt's and sqrt's constants: for 1/sqrt(m) on [1, 2) the line 1.26416063 - 0.28639999*m (its
// relative error is at most 2.3%), and for 1/sqrt(2m) the same line divided by sqrt(2); the
// error bounds, checked over all 2^32 inputs by `tpu_sweep --sweep vpu-rsqrt` and `vpu-sqrt`.
inline constexpr uint32_t kRsqrtLineP[2] = {0x3FA1D004u, 0x3F64D667u};  // 1.26416063, 0.89389652
inline constexpr uint32_t kRsqrtLineQ[2] = {0xBE92A305u, 0xBE4F6031u};  // -0.28639999, -0.20251538
inline constexpr uint32_t kHalf = 0x3F000000u;
inline constexpr double kRsqrtMaxUlp = 0.51;
inline constexpr double kSqrtMaxUlp = 0.5;

// The reduction rsqrt and sqrt share: |x| = m * 2^e with m in [1, 2) (a subnormal x first scaled
// exactly by 2^64), e's parity, and 1/sqrt(m * 2^parity) to within about 2^-40 (before its
// last rounding): y = P[par] + Q[par]*m, then three Newton steps on hm = m * 2^parity / 2 (exact):
// t = fma32(y, y, -0), d = fma32(-hm, t, 1/2), y = fma32(y, d, y).
struct RsqrtReduced {
  uint32_t m;  // m * 2^parity: in [1, 4)
  uint32_t y;  // 1/sqrt(m) (fp32)
  int half_e;  // (e - parity) / 2: x = m * 2^(2*half_e)
};
template <class Fma>
RsqrtReduced RsqrtReduce(uint32_t mag, num::Mode mode, Fma fma) {
  const auto pow2 = [](int e) { return static_cast<uint32_t>(e + 127) << 23; };
  int e = -127;
  if (mag < 0x00800000u) {  // subnormal: exact, now normal
    mag = fma(mag, pow2(64), kMinusZero, mode);
    e -= 64;
  }
  e += static_cast<int>(mag >> 23);
  const int par = e & 1;
  const uint32_t m = (mag & 0x7FFFFFu) | kOne;
  uint32_t y = fma(m, kRsqrtLineQ[par], kRsqrtLineP[par], mode);
  const uint32_t minus_hm = (m + (static_cast<uint32_t>(par) << 23) - (1u << 23)) ^
                            num::kFp32SignMask;  // -(m * 2^par / 2): an exponent change
  for (int i = 0; i < 2; ++i) {
    const uint32_t t = fma(y, y, kMinusZero, mode);
    const uint32_t d = fma(minus_hm, t, kHalf, mode);
    y = fma(y, d, y, mode);
  }
  // The last step with its residual 1 - mm*y^2 computed from mm*y split exactly into p + q.
  const uint32_t mm = m + (static_cast<uint32_t>(par) << 23);
  const uint32_t p = fma(mm, y, kMinusZero, mode);
  const uint32_t q = fma(mm, y, p ^ num::kFp32SignMask, mode);  // mm*y - p, exact
  const uint32_t r =
      fma(q ^ num::kFp32SignMask, y, fma(p ^ num::kFp32SignMask, y, kOne, mode), mode);
  y = fma(y - (1u << 23), r, y, mode);  // y + y/2 * r (y/2 exact: y is in (1/2, 1])
  return {mm, y, (e - par) / 2};
}

// 1/sqrt(x), the contract's algorithm:
//   NaN or x < 0 (-inf included, -0 not) -> 0x7FC00000; +-0 -> +-inf; +inf -> +0 (FTZ: a
//   subnormal x is +-0 first);
//   the reduction above; the result y * 2^-half_e is one exact fma32(y, 2^-half_e, -0)
//   (-half_e is in [-63, 74]: the result is normal).
template <class Fma>
uint32_t RsqrtWith(uint32_t x, num::Mode mode, Fma fma) {
  x = Operand(x, mode);
  if (num::IsNaN32(x)) return num::kFp32CanonicalNaN;
  const uint32_t sign = x & num::kFp32SignMask;
  const uint32_t mag = x & ~num::kFp32SignMask;
  if (mag == 0) return sign | kPlusInf;
  if (sign != 0) return num::kFp32CanonicalNaN;
  if (mag == kPlusInf) return 0u;
  const RsqrtReduced r = RsqrtReduce(mag, mode, fma);
  return fma(r.y, static_cast<uint32_t>(127 - r.half_e) << 23, kMinusZero, mode);
}

// sqrt(x), the contract's algorithm:
//   NaN or x < 0 (-inf included) -> 0x7FC00000; +-0 -> +-0; +inf -> +inf (FTZ: a subnormal x is
//   +-0 first);
//   the reduction above, then one correction of s = sqrt(m): s = fma32(m, y, -0),
//   r = fma32(-s, s, m) (the residual), s = fma32(r, y/2, s) (y/2 exact); the result
//   s * 2^half_e is one exact fma32(s, 2^half_e, -0) (half_e is in [-75, 63]: normal).
template <class Fma>
uint32_t SqrtWith(uint32_t x, num::Mode mode, Fma fma) {
  x = Operand(x, mode);
  if (num::IsNaN32(x)) return num::kFp32CanonicalNaN;
  const uint32_t sign = x & num::kFp32SignMask;
  const uint32_t mag = x & ~num::kFp32SignMask;
  if (mag == 0) return x;
  if (sign != 0) return num::kFp32CanonicalNaN;
  if (mag == kPlusInf) return kPlusInf;
  const RsqrtReduced r = RsqrtReduce(mag, mode, fma);
  uint32_t s = fma(r.m, r.y, kMinusZero, mode);
  const uint32_t res = fma(s ^ num::kFp32SignMask, s, r.m, mode);
  s = fma(res, r.y - (1u << 23), s, mode);  // y/2: y is in (1/2, 1], normal
  return fma(s, static_cast<uint32_t>(127 + r.half_e) << 23, kMinusZero, mode);
}

inline uint32_t Rsqrt(uint32_t x, num::Mode mode) {
  return RsqrtWith(x, mode, [](uint32_t a, uint32_t b, uint32_t c, num::Mode m) {
    return num::Fma32(a, b, c, m);
  });
}
inline uint32_t Sqrt(uint32_t x, num::Mode mode) {
  return SqrtWith(x, mode, [](uint32_t a, uint32_t b, uint32_t c, num::Mode m) {
    return num::Fma32(a, b, c, m);
  });
}

// sigmoid(x) = 1/(1 + exp(-x)), the contract's algorithm, from exp and reciprocal above (their
// steps in `mode`; FTZ reads a subnormal x as zero, sigmoid = 1/2):
//   NaN -> 0x7FC00000;
//   x >= +0:      e = exp(-x); s = recip(fma32(e, 1, 1))
//   x <= -0:      e = exp(x);  s = fma32(e, recip(fma32(e, 1, 1)), -0)   (e/(1 + e))
// (-0 takes the second branch: 1 * recip(2) = 1/2, as the first would give.) The bound is
// checked over all 2^32 inputs by `tpu_sweep --sweep vpu-sigmoid`.
inline constexpr double kSigmoidMaxUlp = 3.0;
template <class Fma>
uint32_t SigmoidWith(uint32_t x, num::Mode mode, Fma fma) {
  x = Operand(x, mode);
  if (num::IsNaN32(x)) return num::kFp32CanonicalNaN;
  const bool neg = (x & num::kFp32SignMask) != 0;
  const uint32_t e = ExpWith(neg ? x : x ^ num::kFp32SignMask, mode, fma);
  const uint32_t r = RecipWith(fma(e, kOne, kOne, mode), mode, fma);
  return neg ? fma(e, r, kMinusZero, mode) : r;
}
inline uint32_t Sigmoid(uint32_t x, num::Mode mode) {
  return SigmoidWith(x, mode, [](uint32_t a, uint32_t b, uint32_t c, num::Mode m) {
    return num::Fma32(a, b, c, m);
  });
}

// tanh's constants: the switch 0.55 between its two forms, and the coefficients c0 .. c5 of
// P(z), z = x^2, with tanh(x) ~ x + x*z*P(z) on [0, 0.55] (a least-squares fit of the relative
// error, weighted toward minimax, each coefficient rounded to fp32: 4.7e-9 relative before the
// evaluation's roundings).
inline constexpr uint32_t kTanhSwitch = 0x3F0CCCCDu;  // 0.55
inline constexpr uint32_t kTanhPoly[6] = {0xBEAAAAAAu, 0x3E08886Eu, 0xBD5D04CCu,
                                          0x3CB271EFu, 0xBC09DAEEu, 0x3B1D045Fu};
inline constexpr uint32_t kTwo = 0x40000000u;
inline constexpr uint32_t kMinusTwo = 0xC0000000u;
inline constexpr double kTanhMaxUlp = 2.0;

// tanh(x), the contract's algorithm, on a = |x| (the sign is x's; FTZ reads a subnormal x as a
// zero of its sign):
//   NaN -> 0x7FC00000;
//   a < 0.55:   z = fma32(a, a, -0); p = c5; p = fma32(p, z, c) for c = c4 .. c0;
//               t = fma32(fma32(a, z, -0), p, a)                        (a + a*z*P(z))
//   a >= 0.55:  E = exp(fma32(a, 2, -0)); t = fma32(recip(fma32(E, 1, 1)), -2, 1)
//                                                                       (1 - 2/(e^2a + 1))
// (+inf gives E = +inf, recip(+inf) = +0, t = 1.) The bound is checked over all 2^32 inputs by
// `tpu_sweep --sweep vpu-tanh`.
template <class Fma>
uint32_t TanhWith(uint32_t x, num::Mode mode, Fma fma) {
  x = Operand(x, mode);
  if (num::IsNaN32(x)) return num::kFp32CanonicalNaN;
  const uint32_t sign = x & num::kFp32SignMask;
  const uint32_t a = x & ~num::kFp32SignMask;
  uint32_t t;
  if (a < kTanhSwitch) {
    const uint32_t z = fma(a, a, kMinusZero, mode);
    uint32_t p = kTanhPoly[5];
    for (int i = 4; i >= 0; --i) p = fma(p, z, kTanhPoly[i], mode);
    t = fma(fma(a, z, kMinusZero, mode), p, a, mode);
  } else {
    const uint32_t e = ExpWith(fma(a, kTwo, kMinusZero, mode), mode, fma);
    t = fma(RecipWith(fma(e, kOne, kOne, mode), mode, fma), kMinusTwo, kOne, mode);
  }
  return sign | t;
}
inline uint32_t Tanh(uint32_t x, num::Mode mode) {
  return TanhWith(x, mode, [](uint32_t a, uint32_t b, uint32_t c, num::Mode m) {
    return num::Fma32(a, b, c, m);
  });
}

// erf's constants: the switch 1 between its two forms, the clamp 4 (erf(x) rounds to 1 in fp32
// from 3.92), the coefficients s0 .. s6 of Q(z), z = x^2, with erf(x) ~ x + x*Q(z) on [0, 1], and
// l0 .. l9 of L(a) ~ log(erfc(a)) on [1, 4]. Each set is a minimax fit (Lawson's iteration on
// Chebyshev nodes against mpmath at 40 digits) of the error erf's result sees: Q's relative to
// erf(x)/x (1.2e-9), L's absolute, weighted by erfc(a)/erf(a) (5.7e-11), each coefficient then
// rounded to fp32 (scripts/fit_erf.py). Written by hand: no library has an erf whose every
// step is an fma32.
inline constexpr uint32_t kErfSwitch = 0x3F800000u;  // 1
inline constexpr uint32_t kErfClamp = 0x40800000u;   // 4
inline constexpr uint32_t kErfSmall[7] = {0x3E0375D4u, 0xBEC0939Fu, 0x3DE7167Cu, 0xBCDBFC86u,
                                          0x3BAA02D9u, 0xBA51FB7Eu, 0x38A4B514u};
inline constexpr uint32_t kErfLarge[10] = {0x3983D625u, 0xBF90A07Eu, 0xBF21EDBEu, 0xBDDFB6CAu,
                                           0x3CD34C27u, 0xBB921531u, 0x3A03F012u, 0xB7EABC0Fu,
                                           0xB4B779E6u, 0x33C90F7Bu};
inline constexpr double kErfMaxUlp = 1.25;

// erf(x), the contract's algorithm, on a = |x| (the sign is x's: erf(-x) = -erf(x) bit for bit;
// FTZ reads a subnormal x as a zero of its sign):
//   NaN -> 0x7FC00000;
//   a < 1:   z = fma32(a, a, -0); q = s6; q = fma32(q, z, s) for s = s5 .. s0;
//            t = fma32(q, a, a)                                        (a + a*Q(a^2))
//   a >= 1:  b = min(a, 4); p = l9; p = fma32(p, b, l) for l = l8 .. l0;
//            t = fma32(exp(p), -1, 1)                                  (1 - e^L(b))
// (+inf is clamped to 4 and gives 1.) The bound is checked over all 2^32 inputs by
// `tpu_sweep --sweep vpu-erf`.
template <class Fma>
uint32_t ErfWith(uint32_t x, num::Mode mode, Fma fma) {
  x = Operand(x, mode);
  if (num::IsNaN32(x)) return num::kFp32CanonicalNaN;
  const uint32_t sign = x & num::kFp32SignMask;
  const uint32_t a = x & ~num::kFp32SignMask;
  uint32_t t;
  if (a < kErfSwitch) {
    const uint32_t z = fma(a, a, kMinusZero, mode);
    uint32_t q = kErfSmall[6];
    for (int i = 5; i >= 0; --i) q = fma(q, z, kErfSmall[i], mode);
    t = fma(q, a, a, mode);
  } else {
    const uint32_t b = a < kErfClamp ? a : kErfClamp;
    uint32_t p = kErfLarge[9];
    for (int i = 8; i >= 0; --i) p = fma(p, b, kErfLarge[i], mode);
    t = fma(ExpWith(p, mode, fma), kMinusOne, kOne, mode);
  }
  return sign | t;
}
inline uint32_t Erf(uint32_t x, num::Mode mode) {
  return ErfWith(x, mode, [](uint32_t a, uint32_t b, uint32_t c, num::Mode m) {
    return num::Fma32(a, b, c, m);
  });
}

// a / b, the contract's algorithm: the quotient of the significands from the reciprocal, corrected
// once from its exact remainder (Markstein's step), then scaled by the exponents' difference
// (FTZ reads subnormal operands as zeros):
//   w = NaN for a NaN b, else +-inf for b = +-0, +-0 for b = +-inf, +-1 otherwise (b's sign);
//   s = fma32(a, w, -0): where a or b is a NaN, a zero or an infinity the result is s (NaN
//       operands, 0/0 and inf/inf give 0x7FC00000; x/0 and inf/x an infinity, 0/x and x/inf a
//       zero, each of the quotient's sign); otherwise s carries the quotient's sign;
//   |a| = ma * 2^ea, |b| = mb * 2^eb with ma, mb in [1, 2) (a subnormal first scaled exactly by
//       2^64, as reciprocal's); y = recip(mb); q = fma32(ma, y, -0); r = fma32(-q, mb, ma)
//       (exact); q = fma32(r, y, q);
//   k = ea - eb clamped to [-160, 160] (as fp32 integers, exactly); the result q * 2^k rounded
//       once (ScaleWith) with s's sign.
// Where recip(mb) is within half an ulp of 1/mb the quotient q is ma/mb correctly rounded
// (Markstein), and so is the result unless it is subnormal (rounded twice). The bound is checked
// by `tpu_sweep --sweep vpu-div` on 2^32 pairs (every a) and by vpu_test. ONNX's Div on floats.
inline constexpr double kDivMaxUlp = 1.0;
template <class Fma>
uint32_t DivWith(uint32_t a, uint32_t b, num::Mode mode, Fma fma) {
  constexpr uint32_t kSign = num::kFp32SignMask;
  a = Operand(a, mode), b = Operand(b, mode);
  const uint32_t mag_a = a & ~kSign, mag_b = b & ~kSign;
  uint32_t w = kOne;
  if (mag_b == 0) w = kPlusInf;
  if (mag_b == kPlusInf) w = 0u;
  w |= b & kSign;
  if (num::IsNaN32(b)) w = num::kFp32CanonicalNaN;
  const uint32_t s = fma(a, w, kMinusZero, mode);
  if (num::IsNaN32(s)) return num::kFp32CanonicalNaN;
  const auto ordinary = [](uint32_t m) { return m != 0 && m < kPlusInf; };
  if (!ordinary(mag_a) || !ordinary(mag_b)) return s;
  const auto split = [&](uint32_t mag, int& e) {
    e = -127;
    if (mag < 0x00800000u) {  // a subnormal: exact, now normal
      mag = fma(mag, static_cast<uint32_t>(64 + 127) << 23, kMinusZero, mode);
      e -= 64;
    }
    e += static_cast<int>(mag >> 23);
    return (mag & 0x7FFFFFu) | kOne;
  };
  int ea, eb;
  const uint32_t ma = split(mag_a, ea), mb = split(mag_b, eb);
  const uint32_t y = RecipWith(mb, mode, fma);
  uint32_t q = fma(ma, y, kMinusZero, mode);
  const uint32_t r = fma(q ^ kSign, mb, ma, mode);
  q = fma(r, y, q, mode);
  const int k = ea - eb < -160 ? -160 : ea - eb > 160 ? 160 : ea - eb;
  return (s & kSign) | ScaleWith(q, k, mode, fma);
}
inline uint32_t Div(uint32_t a, uint32_t b, num::Mode mode) {
  return DivWith(a, b, mode, [](uint32_t x, uint32_t y, uint32_t z, num::Mode m) {
    return num::Fma32(x, y, z, m);
  });
}

// Lane reductions: the sum (add = fma32(a, 1, b)) or the maximum of lanes 0 .. n-1 of a row, in
// pairwise order: the lanes padded to the next power of two with the identity (-0 for the sum,
// -inf for the maximum: add(-0, x) = x and max(-inf, x) = x for every x), then level by level
// lane 2i with lane 2i + 1, the lower lane first. n >= 1.
template <class Combine>
uint32_t ReducePairwise(const uint32_t* x, int n, uint32_t identity, Combine combine) {
  if (n < 1 || n > 256) throw std::invalid_argument("vpu: a lane reduction over 1 to 256 lanes");
  int width = 1;
  while (width < n) width *= 2;
  uint32_t v[256];
  for (int i = 0; i < width; ++i) v[i] = i < n ? x[i] : identity;
  for (; width > 1; width /= 2) {
    for (int i = 0; i < width / 2; ++i) v[i] = combine(v[2 * i], v[2 * i + 1]);
  }
  return v[0];
}
inline uint32_t ReduceSum(const uint32_t* x, int n, num::Mode mode) {
  return ReducePairwise(x, n, kMinusZero,
                        [mode](uint32_t a, uint32_t b) { return num::Fma32(a, kOne, b, mode); });
}
inline uint32_t ReduceMax(const uint32_t* x, int n, num::Mode mode) {
  return ReducePairwise(x, n, kPlusInf | num::kFp32SignMask,
                        [mode](uint32_t a, uint32_t b) { return Max(a, b, mode); });
}

// log's constants: the reduced fraction's switch sqrt(2), ln(2) in two parts with ln2_hi's last
// bits zero, and the coefficients Lg1 .. Lg4 of log(1 + f) = f - f^2/2 + s*(f^2/2 + R(s^2)),
// s = f/(2 + f) (the published minimax coefficients of fdlibm's logf), each an fp32 pattern.
inline constexpr uint32_t kLogSqrt2 = 0x3FB504F3u;  // 1.41421354 (m above it is halved)
inline constexpr uint32_t kLogLn2Hi = 0x3F317180u;  // 0.693138123
inline constexpr uint32_t kLogLn2Lo = 0x3717F7D1u;  // 9.05800061e-6
inline constexpr uint32_t kLogLg[4] = {0x3F2AAAAAu, 0x3ECCCE13u, 0x3E91E9EEu, 0x3E789E26u};
inline constexpr double kLogMaxUlp = 1.0;

// log(x), the contract's algorithm:
//   NaN or x < 0 (-inf included) -> 0x7FC00000; +-0 -> -inf; +inf -> +inf (FTZ: a subnormal x is
//   +-0 first); a subnormal x (IEEE) is first scaled exactly by 2^64;
//   x = m * 2^k, m in [1, 2); m above sqrt(2) is halved and k incremented (m in [0.707, 1.414]);
//   f = fma32(m, 1, -1) (exact); hfsq = fma32(f, fma32(f, 1/2, -0), -0);
//   s = fma32(f, recip(fma32(f, 1, 2)), -0); z = fma32(s, s, -0); w = fma32(z, z, -0);
//   R = fma32(fma32(z, fma32(w, Lg3, Lg1), -0), 1, fma32(w, fma32(w, Lg4, Lg2), -0));
//   dk = k as fp32 (exact: fma32(bits(1.5*2^23) + k, 1, -1.5*2^23));
//   a = fma32(s, fma32(hfsq, 1, R), fma32(dk, ln2_lo, -0));
//   a = fma32(f, -1, fma32(a, -1, hfsq)); result = fma32(dk, ln2_hi, -a)
//   (dk*ln2_hi - ((hfsq - (s*(hfsq + R) + dk*ln2_lo)) - f)). The bound is checked over all 2^32
//   inputs by `tpu_sweep --sweep vpu-log`.
template <class Fma>
uint32_t LogWith(uint32_t x, num::Mode mode, Fma fma) {
  constexpr uint32_t kSign = num::kFp32SignMask;
  x = Operand(x, mode);
  if (num::IsNaN32(x)) return num::kFp32CanonicalNaN;
  uint32_t mag = x & ~kSign;
  if (mag == 0) return kPlusInf | kSign;
  if ((x & kSign) != 0) return num::kFp32CanonicalNaN;
  if (mag == kPlusInf) return kPlusInf;
  int k = -127;
  if (mag < 0x00800000u) {  // subnormal: exact, now normal
    mag = fma(mag, static_cast<uint32_t>(64 + 127) << 23, kMinusZero, mode);
    k -= 64;
  }
  k += static_cast<int>(mag >> 23);
  uint32_t m = (mag & 0x7FFFFFu) | kOne;
  if (m > kLogSqrt2) m -= 1u << 23, ++k;  // m / 2, exactly
  const uint32_t f = fma(m, kOne, kMinusOne, mode);
  const uint32_t hfsq = fma(f, fma(f, kHalf, kMinusZero, mode), kMinusZero, mode);
  const uint32_t s = fma(f, RecipWith(fma(f, kOne, kTwo, mode), mode, fma), kMinusZero, mode);
  const uint32_t z = fma(s, s, kMinusZero, mode);
  const uint32_t w = fma(z, z, kMinusZero, mode);
  const uint32_t t1 = fma(w, fma(w, kLogLg[3], kLogLg[1], mode), kMinusZero, mode);
  const uint32_t t2 = fma(z, fma(w, kLogLg[2], kLogLg[0], mode), kMinusZero, mode);
  const uint32_t r = fma(t2, kOne, t1, mode);
  // k as fp32: exp's 1.5 * 2^23 with k added to its fraction field, less 1.5 * 2^23 (exact).
  const uint32_t dk = fma(kExpShift + static_cast<uint32_t>(k), kOne, kExpShift | kSign, mode);
  uint32_t a = fma(s, fma(hfsq, kOne, r, mode), fma(dk, kLogLn2Lo, kMinusZero, mode), mode);
  a = fma(f, kMinusOne, fma(a, kMinusOne, hfsq, mode), mode);
  return fma(dk, kLogLn2Hi, a ^ kSign, mode);
}
inline uint32_t Log(uint32_t x, num::Mode mode) {
  return LogWith(x, mode, [](uint32_t a, uint32_t b, uint32_t c, num::Mode m) {
    return num::Fma32(a, b, c, m);
  });
}

// The golden exp: the algorithm on the golden fma32.
inline uint32_t Exp(uint32_t x, num::Mode mode) {
  return ExpWith(x, mode, [](uint32_t a, uint32_t b, uint32_t c, num::Mode m) {
    return num::Fma32(a, b, c, m);
  });
}

}  // namespace tpu::vpu
