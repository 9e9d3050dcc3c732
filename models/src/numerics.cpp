// SPDX-License-Identifier: Apache-2.0
// Golden bf16/fp32 numerics in integer arithmetic (see tpu/numerics.h).
#include "tpu/numerics.h"

#include <fmt/format.h>

#include <cstring>

namespace tpu::num {
namespace {

using u128 = unsigned __int128;

// An exact finite value sig * 2^exp (sig == 0 means zero), with a sign.
struct Exact {
  bool neg;
  uint64_t sig;
  int exp;
};

// fp32 layout.
constexpr int kManBits = 23;
constexpr int kBias = 127;
constexpr int kMinLsbExp = 1 - kBias - kManBits;  // weight of the smallest subnormal: -149

int BitLength(uint64_t x) {
  return x == 0 ? 0 : 64 - __builtin_clzll(x);
}
int BitLength(u128 x) {
  const auto hi = static_cast<uint64_t>(x >> 64);
  return hi != 0 ? 64 + BitLength(hi) : BitLength(static_cast<uint64_t>(x));
}

// Unpacks a finite bf16 (man_bits = 7) or fp32 (man_bits = 23) pattern; `ftz` reads subnormals
// as zero.
Exact Unpack(uint32_t bits, int man_bits, bool ftz) {
  const int width = 1 + 8 + man_bits;
  const bool neg = (bits >> (width - 1)) & 1u;
  const uint32_t e = (bits >> man_bits) & 0xFFu;
  const uint64_t f = bits & ((1u << man_bits) - 1u);
  if (e == 0) {
    return {neg, ftz ? 0 : f, 1 - kBias - man_bits};
  }
  return {neg, f | (uint64_t{1} << man_bits), static_cast<int>(e) - kBias - man_bits};
}

// Rounds the exact value (neg, s * 2^e), s != 0, to fp32 with round-to-nearest-even.
// U is uint64_t or u128 (the value's width). `how` (may be null) receives the rounding case.
template <class U>
uint32_t RoundPack(bool neg, U s, int e, RoundCase* how) {
  constexpr int kBits = static_cast<int>(sizeof(U) * 8);
  const uint32_t sign = neg ? kFp32SignMask : 0u;
  const int n = BitLength(s);
  const int top = e + n - 1;  // weight of the leading one
  int lsb = top - kManBits;
  if (lsb < kMinLsbExp) lsb = kMinLsbExp;
  uint64_t q;
  RoundCase dir = RoundCase::kExact;
  if (lsb <= e) {
    q = static_cast<uint64_t>(s << (e - lsb));  // exact: at most 24 significant bits
  } else {
    const int r = lsb - e;  // bits dropped
    if (r > n) {
      q = 0;  // value below half an ulp: rounds to zero (keeps its sign)
      dir = RoundCase::kDown;
    } else {
      const U half = U{1} << (r - 1);
      const U rem = (r >= kBits) ? s : (s & ((U{1} << r) - 1));
      q = (r >= kBits) ? 0 : static_cast<uint64_t>(s >> r);
      if (rem != 0) {
        const bool up = rem > half || (rem == half && (q & 1u));
        if (rem == half) {
          dir = up ? RoundCase::kTieEvenUp : RoundCase::kTieEvenDown;
        } else {
          dir = up ? RoundCase::kUp : RoundCase::kDown;
        }
        if (up) ++q;
      }
    }
  }
  if (q == (uint64_t{1} << (kManBits + 1))) {  // carry into the next binade
    q >>= 1;
    ++lsb;
  }
  if (q < (uint64_t{1} << kManBits)) {
    // Subnormal or zero (lsb == -149 here).
    if (how != nullptr) {
      *how = dir == RoundCase::kExact ? dir
             : q == 0                 ? RoundCase::kUnderflowZero
                                      : RoundCase::kUnderflowSubnormal;
    }
    return sign | static_cast<uint32_t>(q);
  }
  const int biased = lsb + kManBits + kBias;
  if (biased >= 255) {  // overflow to infinity
    if (how != nullptr) *how = RoundCase::kOverflow;
    return sign | 0x7F800000u;
  }
  if (how != nullptr) *how = dir;
  return sign | (static_cast<uint32_t>(biased) << kManBits) |
         static_cast<uint32_t>(q & ((1u << kManBits) - 1u));
}

// Rounds (a_neg ? -a : a) + (b_neg ? -b : b), both scaled by 2^e and non-zero.
template <class U>
uint32_t AddSigned(bool a_neg, U a, bool b_neg, U b, int e, RoundCase* how) {
  if (a_neg == b_neg) return RoundPack(a_neg, a + b, e, how);
  if (a == b) {  // exact cancellation of non-zero terms: +0
    if (how != nullptr) *how = RoundCase::kExact;
    return 0u;
  }
  return a > b ? RoundPack(a_neg, a - b, e, how) : RoundPack(b_neg, b - a, e, how);
}

// fusedMultiplyAdd(a, b, c) for a and b of kInMan fraction bits (7: bf16, the MAC; 23: fp32, the
// vector unit's FMA) and c fp32, rounded once. `how` (may be null) receives the rounding case of
// the IEEE-rounded result.
template <int kInMan>
uint32_t FmaIeee(uint32_t a, uint32_t b, uint32_t c, bool ftz, RoundCase* how) {
  constexpr int kInW = 1 + 8 + kInMan;
  constexpr uint32_t kMag = (1u << (kInW - 1)) - 1u;  // all but the sign
  constexpr uint32_t kInf = 0xFFu << kInMan;          // exponent all ones, fraction 0
  // The widest operand of the addition, in bits: the exact product or c's 24-bit significand.
  constexpr int kW = 2 * (kInMan + 1) > 24 ? 2 * (kInMan + 1) : 24;
  // Shifts for which the aligned sum is exact in 64 and in 128 bits (kW + d bits, plus a carry).
  constexpr int kExact64 = 63 - kW, kExact128 = 127 - kW;
  // Beyond kExact128, lo lies below a quarter ulp of any result (see below): a stand-in one at
  // hi's last bit - kStandIn rounds the same. kStandIn + kW must fit 128 bits.
  constexpr int kStandIn = 38;
  static_assert(kExact128 > kW + 25 && kStandIn > 26 && kStandIn + kW < 127);
  if (how != nullptr) *how = RoundCase::kSpecial;  // until a finite path says otherwise
  const bool a_nan = (a & kMag) > kInf, b_nan = (b & kMag) > kInf;
  if (a_nan || b_nan || IsNaN32(c)) return kFp32CanonicalNaN;
  const bool a_inf = (a & kMag) == kInf;
  const bool b_inf = (b & kMag) == kInf;
  const bool c_inf = (c & 0x7FFFFFFFu) == 0x7F800000u;
  const Exact ua = Unpack(a, kInMan, ftz);
  const Exact ub = Unpack(b, kInMan, ftz);
  const Exact uc = Unpack(c, kManBits, ftz);
  const bool p_neg = ua.neg != ub.neg;
  if (a_inf || b_inf) {
    if ((!a_inf && ua.sig == 0) || (!b_inf && ub.sig == 0)) return kFp32CanonicalNaN;  // inf*0
    if (c_inf && uc.neg != p_neg) return kFp32CanonicalNaN;                            // inf-inf
    return (p_neg ? kFp32SignMask : 0u) | 0x7F800000u;
  }
  if (c_inf) return c;

  const uint64_t p_sig = ua.sig * ub.sig;  // exact: at most 24 x 24 bits
  const int p_exp = ua.exp + ub.exp;
  if (p_sig == 0) {
    if (how != nullptr) *how = RoundCase::kExact;
    if (uc.sig == 0) return (p_neg && uc.neg) ? kFp32SignMask : 0u;  // both zeros
    return c;  // exact: x + 0 = x (c is normal here when ftz)
  }
  if (uc.sig == 0) return RoundPack(p_neg, p_sig, p_exp, how);

  // Both non-zero: align to the operand whose leading one is higher ("hi"); lo's bits then
  // start at most kW - 1 bits above hi's last bit (d >= 1 - kW).
  Exact hi{p_neg, p_sig, p_exp};
  Exact lo = uc;
  if (uc.exp + BitLength(uc.sig) > p_exp + BitLength(p_sig)) std::swap(hi, lo);
  const int d = hi.exp - lo.exp;
  if (d <= kExact64) {
    const uint64_t h = d >= 0 ? hi.sig << d : hi.sig;
    const uint64_t l = d >= 0 ? lo.sig : lo.sig << -d;
    return AddSigned(hi.neg, h, lo.neg, l, d >= 0 ? lo.exp : hi.exp, how);
  }
  if (d <= kExact128) {
    return AddSigned(hi.neg, u128{hi.sig} << d, lo.neg, u128{lo.sig}, lo.exp, how);
  }
  // lo < 2^(lo.exp + kW) = 2^(hi.exp - d + kW) <= 2^(hi.exp - 26), under a quarter ulp of any
  // possible result (whose last bit weighs at least 2^(hi.exp - 24), or 2^-149): it only decides
  // the rounding direction, and any non-zero stand-in that is also below a quarter ulp rounds the
  // same (and gives the same rounding case: inexact, never a tie).
  return AddSigned(hi.neg, u128{hi.sig} << kStandIn, lo.neg, u128{1}, hi.exp - kStandIn, how);
}

uint32_t MacIeee(uint16_t a, uint16_t b, uint32_t c, bool ftz, RoundCase* how) {
  return FmaIeee<7>(a, b, c, ftz, how);
}

}  // namespace

const char* ModeName(Mode m) {
  return m == Mode::kFtz ? "FTZ" : "IEEE";
}

const char* FpClassName(FpClass c) {
  switch (c) {
    case FpClass::kZero: return "zero";
    case FpClass::kSubnormal: return "subnormal";
    case FpClass::kNormal: return "normal";
    case FpClass::kInf: return "inf";
    case FpClass::kNaN: return "nan";
  }
  return "?";
}

FpClass Classify32(uint32_t x) {
  const uint32_t e = (x >> 23) & 0xFFu;
  const uint32_t f = x & 0x7FFFFFu;
  if (e == 0) return f == 0 ? FpClass::kZero : FpClass::kSubnormal;
  if (e == 0xFF) return f == 0 ? FpClass::kInf : FpClass::kNaN;
  return FpClass::kNormal;
}

FpClass Classify16(uint16_t x) {
  return Classify32(Bf16ToFp32(x));
}

uint32_t Mac(uint16_t a, uint16_t b, uint32_t c, Mode mode) {
  const bool ftz = mode == Mode::kFtz;
  const uint32_t r = MacIeee(a, b, c, ftz, nullptr);
  return ftz ? Flush32(r) : r;
}

uint32_t Fma32(uint32_t a, uint32_t b, uint32_t c, Mode mode) {
  const bool ftz = mode == Mode::kFtz;
  const uint32_t r = FmaIeee<kManBits>(a, b, c, ftz, nullptr);
  return ftz ? Flush32(r) : r;
}

namespace {
// An IEEE-mode result with its rounding case, flushed (and the case kFtzFlush) in FTZ mode.
uint32_t FlushWithCase(uint32_t r, bool ftz, RoundCase* how) {
  if (ftz && IsSubnormal32(r)) {
    *how = RoundCase::kFtzFlush;
    return Flush32(r);
  }
  return r;
}
}  // namespace

uint32_t Mac(uint16_t a, uint16_t b, uint32_t c, Mode mode, RoundCase* how) {
  const bool ftz = mode == Mode::kFtz;
  RoundCase unused;
  if (how == nullptr) how = &unused;
  return FlushWithCase(MacIeee(a, b, c, ftz, how), ftz, how);
}

uint32_t Fma32(uint32_t a, uint32_t b, uint32_t c, Mode mode, RoundCase* how) {
  const bool ftz = mode == Mode::kFtz;
  RoundCase unused;
  if (how == nullptr) how = &unused;
  return FlushWithCase(FmaIeee<kManBits>(a, b, c, ftz, how), ftz, how);
}

uint16_t Fp32ToBf16(uint32_t x, Mode mode) {
  if (IsNaN32(x)) return kBf16CanonicalNaN;
  const bool ftz = mode == Mode::kFtz;
  if (ftz) x = Flush32(x);
  // Round to nearest-even on the dropped half; a carry ripples into the exponent (and turns the
  // largest finite values into infinity, as IEEE requires).
  const uint32_t rounded = x + 0x7FFFu + ((x >> 16) & 1u);
  const auto r = static_cast<uint16_t>(rounded >> 16);
  return ftz ? Flush16(r) : r;
}

uint16_t Fp32ToBf16(uint32_t x, Mode mode, RoundCase* how) {
  const uint16_t r = Fp32ToBf16(x, mode);
  if (how == nullptr) return r;
  const uint32_t e = (x >> 23) & 0xFFu;
  const uint32_t dropped = x & 0xFFFFu;
  if (e == 0xFF) {
    *how = RoundCase::kSpecial;  // NaN or infinity
  } else if (mode == Mode::kFtz && (IsSubnormal32(x) || IsSubnormal16(r))) {
    *how = RoundCase::kFtzFlush;
  } else if (dropped == 0) {
    *how = RoundCase::kExact;
  } else if ((r & 0x7FFFu) == 0x7F80u) {
    *how = RoundCase::kOverflow;
  } else if ((r & 0x7FFFu) == 0) {
    *how = RoundCase::kUnderflowZero;
  } else if (IsSubnormal16(r)) {
    *how = RoundCase::kUnderflowSubnormal;
  } else if (dropped == 0x8000u) {
    *how = (x >> 16) & 1u ? RoundCase::kTieEvenUp : RoundCase::kTieEvenDown;
  } else {
    *how = dropped > 0x8000u ? RoundCase::kUp : RoundCase::kDown;
  }
  return r;
}

const char* RoundCaseName(RoundCase c) {
  switch (c) {
    case RoundCase::kSpecial: return "special";
    case RoundCase::kExact: return "exact";
    case RoundCase::kDown: return "down";
    case RoundCase::kUp: return "up";
    case RoundCase::kTieEvenDown: return "tie_even_down";
    case RoundCase::kTieEvenUp: return "tie_even_up";
    case RoundCase::kOverflow: return "overflow";
    case RoundCase::kUnderflowSubnormal: return "underflow_subnormal";
    case RoundCase::kUnderflowZero: return "underflow_zero";
    case RoundCase::kFtzFlush: return "ftz_flush";
  }
  return "?";
}

uint32_t Relu(uint32_t x) {
  if (IsNaN32(x)) return kFp32CanonicalNaN;
  const bool positive = (x & kFp32SignMask) == 0 && x != 0;
  return positive ? x : 0u;
}

std::string FormatFp32(uint32_t x) {
  float f;
  std::memcpy(&f, &x, sizeof f);  // display only
  if (IsNaN32(x)) return fmt::format("0x{:08X} (nan)", x);
  return fmt::format("0x{:08X} ({:.9g})", x, f);
}

std::string FormatBf16(uint16_t x) {
  const uint32_t w = Bf16ToFp32(x);
  float f;
  std::memcpy(&f, &w, sizeof f);  // display only
  if (IsNaN16(x)) return fmt::format("0x{:04X} (nan)", x);
  return fmt::format("0x{:04X} ({:.4g})", x, f);
}

}  // namespace tpu::num
