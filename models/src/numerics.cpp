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

int BitLength(u128 x) {
  const uint64_t hi = static_cast<uint64_t>(x >> 64);
  if (hi != 0) return 128 - __builtin_clzll(hi);
  const uint64_t lo = static_cast<uint64_t>(x);
  return lo == 0 ? 0 : 64 - __builtin_clzll(lo);
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
uint32_t RoundPack(bool neg, u128 s, int e) {
  const uint32_t sign = neg ? kFp32SignMask : 0u;
  const int n = BitLength(s);
  const int top = e + n - 1;  // weight of the leading one
  int lsb = top - kManBits;
  if (lsb < kMinLsbExp) lsb = kMinLsbExp;
  uint64_t q;
  if (lsb <= e) {
    q = static_cast<uint64_t>(s << (e - lsb));  // exact: at most 24 significant bits
  } else {
    const int r = lsb - e;  // bits dropped
    if (r > n) {
      q = 0;  // value below half an ulp: rounds to zero (keeps its sign)
    } else {
      const u128 half = u128{1} << (r - 1);
      const u128 rem = (r >= 128) ? s : (s & ((u128{1} << r) - 1));
      q = (r >= 128) ? 0 : static_cast<uint64_t>(s >> r);
      if (rem > half || (rem == half && (q & 1u))) ++q;
    }
  }
  if (q == (uint64_t{1} << (kManBits + 1))) {  // carry into the next binade
    q >>= 1;
    ++lsb;
  }
  if (q < (uint64_t{1} << kManBits)) {
    return sign | static_cast<uint32_t>(q);  // subnormal or zero (lsb == -149 here)
  }
  const int biased = lsb + kManBits + kBias;
  if (biased >= 255) return sign | 0x7F800000u;  // overflow to infinity
  return sign | (static_cast<uint32_t>(biased) << kManBits) |
         static_cast<uint32_t>(q & ((1u << kManBits) - 1u));
}

uint32_t MacIeee(uint16_t a, uint16_t b, uint32_t c, bool ftz) {
  if (IsNaN16(a) || IsNaN16(b) || IsNaN32(c)) return kFp32CanonicalNaN;
  const bool a_inf = (a & 0x7FFFu) == 0x7F80u;
  const bool b_inf = (b & 0x7FFFu) == 0x7F80u;
  const bool c_inf = (c & 0x7FFFFFFFu) == 0x7F800000u;
  const Exact ua = Unpack(a, 7, ftz);
  const Exact ub = Unpack(b, 7, ftz);
  const Exact uc = Unpack(c, kManBits, ftz);
  const bool p_neg = ua.neg != ub.neg;
  if (a_inf || b_inf) {
    if ((!a_inf && ua.sig == 0) || (!b_inf && ub.sig == 0)) return kFp32CanonicalNaN;  // inf*0
    if (c_inf && uc.neg != p_neg) return kFp32CanonicalNaN;                            // inf-inf
    return (p_neg ? kFp32SignMask : 0u) | 0x7F800000u;
  }
  if (c_inf) return c;

  const uint64_t p_sig = ua.sig * ub.sig;  // exact: 8 x 8 bits
  const int p_exp = ua.exp + ub.exp;
  if (p_sig == 0) {
    if (uc.sig == 0) return (p_neg && uc.neg) ? kFp32SignMask : 0u;  // both zeros
    return c;  // exact: x + 0 = x (c is normal here when ftz)
  }
  if (uc.sig == 0) return RoundPack(p_neg, p_sig, p_exp);

  // Both non-zero: align to the operand whose leading one is higher ("hi").
  Exact hi{p_neg, p_sig, p_exp};
  Exact lo = uc;
  if (uc.exp + BitLength(uc.sig) > p_exp + BitLength(p_sig)) std::swap(hi, lo);
  u128 h;
  u128 l;
  int e;
  const int d = hi.exp - lo.exp;
  if (d <= 90) {
    // Exact alignment (at most 24 + 90 + 16 bits).
    h = d >= 0 ? (u128{hi.sig} << d) : u128{hi.sig};
    l = d >= 0 ? u128{lo.sig} : (u128{lo.sig} << -d);
    e = d >= 0 ? lo.exp : hi.exp;
  } else {
    // lo lies more than 60 bits below hi's last bit, far under a quarter ulp of any possible
    // result: it only decides the rounding direction, so any non-zero stand-in that is also
    // below a quarter ulp gives the same rounding.
    h = u128{hi.sig} << 64;
    l = 1;
    e = hi.exp - 64;
  }
  if (hi.neg == lo.neg) return RoundPack(hi.neg, h + l, e);
  if (h == l) return 0u;  // exact cancellation of non-zero terms: +0
  return h > l ? RoundPack(hi.neg, h - l, e) : RoundPack(lo.neg, l - h, e);
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
  const uint32_t r = MacIeee(a, b, c, ftz);
  return ftz ? Flush32(r) : r;
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
