// SPDX-License-Identifier: Apache-2.0
#include "tpu/tb/mac_vectors.h"

#include <fmt/format.h>

#include <algorithm>

namespace tpu::tb {
namespace {

int Bf16Exp(uint16_t x) {
  return (x >> 7) & 0xFF;
}

// A product's biased exponent, approximately (ignores subnormal normalisation).
int ProductExp(uint16_t a, uint16_t b) {
  return std::max(Bf16Exp(a), 1) + std::max(Bf16Exp(b), 1) - 127;
}

uint32_t WithExp(uint32_t bits, int biased_exp) {
  if (biased_exp < 0) biased_exp = 0;
  if (biased_exp > 254) biased_exp = 254;
  return (bits & 0x807FFFFFu) | (static_cast<uint32_t>(biased_exp) << 23);
}

}  // namespace

const std::vector<uint16_t>& Bf16Specials() {
  static const std::vector<uint16_t> v = {
      0x0000, 0x8000,          // ±0
      0x0001, 0x8001,          // ±smallest subnormal
      0x007F, 0x807F,          // ±largest subnormal
      0x0080, 0x8080,          // ±smallest normal
      0x7F7F, 0xFF7F,          // ±largest normal
      0x3F80, 0xBF80,          // ±1
      0x7F80, 0xFF80,          // ±inf
      0x7FC0, 0xFFC0, 0x7F81,  // NaN: quiet, negative, signalling
  };
  return v;
}

const std::vector<uint32_t>& Fp32Specials() {
  static const std::vector<uint32_t> v = {
      0x00000000, 0x80000000, 0x00000001, 0x80000001, 0x007FFFFF, 0x807FFFFF,
      0x00800000, 0x80800000, 0x7F7FFFFF, 0xFF7FFFFF, 0x3F800000, 0xBF800000,
      0x7F800000, 0xFF800000, 0x7FC00000, 0xFFC00000, 0x7F800001,
  };
  return v;
}

uint32_t DrawC(Rng& rng, uint16_t a, uint16_t b, CPolicy policy) {
  switch (policy) {
    case CPolicy::kZero: return 0;
    case CPolicy::kUniform: return rng.U32();
    case CPolicy::kMatter: {
      const uint64_t r = rng.Next();
      const auto bits = static_cast<uint32_t>(r);
      if (r >> 63) return bits;
      return WithExp(bits, ProductExp(a, b) + static_cast<int>((r >> 32) % 61) - 30);
    }
    case CPolicy::kCancel: {
      // -(a·b) rounded to fp32 (exact unless it over/underflows), then a few ulps away. The
      // product comes from the golden model, which the oracle sweeps check on its own.
      const uint32_t p = num::Mac(a, b, num::kFp32SignMask, num::Mode::kIeee);
      return (p ^ num::kFp32SignMask) + static_cast<uint32_t>(rng.Range(-4, 4));
    }
  }
  return 0;
}

void CornerCross(const MacEmit& emit) {
  for (uint16_t a : Bf16Specials())
    for (uint16_t b : Bf16Specials())
      for (uint32_t c : Fp32Specials()) emit({a, b, c});
}

void ExponentSweep(Rng& rng, int per_offset, const MacEmit& emit) {
  for (int off = -80; off <= 80; ++off) {
    for (int i = 0; i < per_offset; ++i) {
      // Mostly normal operands, sometimes subnormal ones (low exponent fields).
      uint16_t a = rng.U16();
      uint16_t b = rng.U16();
      if (Bf16Exp(a) == 0xFF) a ^= 0x4000;
      if (Bf16Exp(b) == 0xFF) b ^= 0x4000;
      const int pe = ProductExp(a, b);
      const int ce = pe + off;
      if (ce < 0 || ce > 254) continue;
      // Half of the addends sit at a binade edge (fraction 0: a power of two, or all ones): below
      // a power of two the spacing halves, which is where a misaligned product shows.
      uint32_t c = rng.U32();
      switch (i % 4) {
        case 0: c &= 0xFF800000u; break;
        case 1: c |= 0x007FFFFFu; break;
        default: break;
      }
      emit({a, b, WithExp(c, ce)});
    }
  }
}

void Cancellations(Rng& rng, int count, const MacEmit& emit) {
  for (int i = 0; i < count; ++i) {
    const uint16_t a = rng.U16() & 0xBFFF;  // keep products in range mostly
    const uint16_t b = rng.U16() & 0xBFFF;
    const uint32_t p = num::Mac(a, b, num::kFp32SignMask, num::Mode::kIeee);
    const uint32_t neg = p ^ num::kFp32SignMask;
    emit({a, b, neg});                                                // exact
    emit({a, b, neg + static_cast<uint32_t>(rng.Range(-8, 8))});      // near, same binade mostly
    emit({a, b, neg + static_cast<uint32_t>(rng.Range(-300, 300))});  // partial
  }
}

void RoundingTies(Rng& rng, int count, const MacEmit& emit) {
  // c has ulp 2^(E-23) (E its unbiased exponent); a product of (2m+1)·2^(E-24) (an odd 8-bit
  // integer times a power of two, so exact in bf16·bf16) lands exactly halfway between two
  // representable sums. c's own LSB (even or odd) decides the direction.
  for (int i = 0; i < count; ++i) {
    const int ce = rng.Range(40, 220);  // biased exponent of c
    uint32_t c = WithExp(rng.U32(), ce);
    if (i % 4 == 0) c &= 0xFF800001u;  // near a power of two (fraction 0 or 1)
    const int m = rng.Range(0, 127);
    const int odd = 2 * m + 1;  // 1..255
    int msb = 0;
    while ((odd >> (msb + 1)) != 0) ++msb;  // odd = 1.f × 2^msb
    // a = odd as bf16 (value odd), b = 2^k so that a·b = odd · 2^(E-24).
    const uint16_t a_mag = static_cast<uint16_t>(((127 + msb) << 7) | ((odd << (7 - msb)) & 0x7F));
    const int k = (ce - 127) - 24;  // unbiased
    if (k < -126 || k > 127) continue;
    const auto b_mag = static_cast<uint16_t>((k + 127) << 7);
    const uint16_t sign = rng.Bit() ? 0x8000 : 0;
    emit({static_cast<uint16_t>(a_mag | sign), b_mag, c});
    emit({static_cast<uint16_t>(a_mag | sign), b_mag, c ^ 1u});  // the other parity
  }
}

void SubnormalBoundary(Rng& rng, int count, const MacEmit& emit) {
  for (int i = 0; i < count; ++i) {
    // Products around 2^-126 .. 2^-152 and addends in the subnormal / smallest-normal range.
    const int ea = rng.Range(1, 126);
    const int eb = std::max(1, std::min(254, 127 - 126 - (ea - 127) + rng.Range(-26, 2)));
    const auto a = static_cast<uint16_t>((rng.Bit() << 15) | (ea << 7) | (rng.U16() & 0x7F));
    const auto b = static_cast<uint16_t>((rng.Bit() << 15) | (eb << 7) | (rng.U16() & 0x7F));
    uint32_t c = (rng.U32() & 0x80FFFFFFu);                         // exponent field 0 or 1
    if (rng.Range(0, 3) == 0) c = rng.U32() & 0x807FFFFFu;          // subnormal (or zero) c
    if (rng.Range(0, 7) == 0) c = (c & 0x80000000u) | 0x00800000u;  // exactly ±2^-126
    emit({a, b, c});
    // The same product against -(2^-126 ± a few ulps): results straddle the boundary.
    emit({a, b,
          (0x00800000u + static_cast<uint32_t>(rng.Range(-3, 3))) |
              (((a ^ b) & 0x8000u) ? 0u : 0x80000000u)});
  }
}

void FusedDirected(const MacEmit& emit) {
  emit({0x1A01, 0x1A81, 0x01000000});  // IEEE: 0x01000001 fused, 0x01000000 unfused
  emit({0x5F80, 0x5F80, 0xFF7FFFFF});  // 2^64·2^64 - FLT_MAX ≈ 2.03e31, not inf
  emit({0x1C80, 0x1C80, 0x00800000});  // FTZ: 2^-70·2^-70 + 2^-126 (product alone flushes)
  emit({0x1D81, 0x9D83, 0x00802101});  // FTZ: exact 2^-126 - 2^-150, tie rounds to 2^-126
  emit({0x8001, 0x0001, 0x00000000});  // (-tiny)·(+tiny) + (+0) = -0 (ragged-tile rule)
  emit({0x3940, 0x3940, 0xBF800000});  // -1 + 1.125·2^-25: below a power of two, 0xBF7FFFFF
}

uint32_t DrawFp32(Rng& rng, int exp_center) {
  const uint32_t sign = rng.U32() & 0x80000000u;
  switch (rng.U32() % 8) {
    case 0: return sign | (rng.U32() & 0x7FFFFFu);                       // subnormal or zero
    case 1: return sign | 0x7F800000u | (rng.U32() % 3 == 0 ? 1u : 0u);  // inf or NaN
    case 2: return rng.U32();                                            // any pattern
    default: {
      const int e = std::clamp(exp_center + static_cast<int>(rng.U32() % 61) - 30, 1, 254);
      return sign | (static_cast<uint32_t>(e) << 23) | (rng.U32() & 0x7FFFFFu);
    }
  }
}

void Fma32Cross(const Fma32Emit& emit) {
  for (uint32_t a : Fp32Specials())
    for (uint32_t b : Fp32Specials())
      for (uint32_t c : Fp32Specials()) emit({a, b, c});
}

void Fma32Random(Rng& rng, uint64_t count, const Fma32Emit& emit) {
  for (uint64_t i = 0; i < count; ++i) {
    const int center = 1 + static_cast<int>(rng.U32() % 254);
    const uint32_t a = DrawFp32(rng, center), b = DrawFp32(rng, 127);
    // c near the product (cancellation and ties), or anywhere.
    const int product_exp = center + static_cast<int>((b >> 23) & 0xFFu) - 127;
    uint32_t c = DrawFp32(rng, std::clamp(product_exp, 1, 254));
    if (i % 4 == 3) c = rng.U32();
    emit({a, b, c});
  }
}

void Fma32FarAddendTies(Rng& rng, int count, const Fma32Emit& emit) {
  for (int i = 0; i < count; ++i) {
    const auto short_sig = [&](int e) {  // 13 significant bits, a random sign
      return (rng.U32() & 0x80000000u) | (static_cast<uint32_t>(e) << 23) | (rng.U32() & 0x7FF800u);
    };
    const int ea = 64 + static_cast<int>(rng.U32() % 128),
              eb = 64 + static_cast<int>(rng.U32() % 128);
    const uint32_t a = short_sig(ea), b = short_sig(eb);
    const int ec = ea + eb - 127 - 25 - static_cast<int>(rng.U32() % 116);
    const uint32_t c = (rng.U32() & 0x80000000u) |
                       (ec >= 1 ? (static_cast<uint32_t>(ec) << 23) | (rng.U32() & 0x7FFFFFu)
                                : 1u + (rng.U32() & 0xFFFu));  // subnormal below the range
    emit({a, b, c});
  }
}

void Fma32TiesAgainstJams(Rng& rng, int per_shift, const Fma32Emit& emit) {
  // a = b = (1 + m·2^-12)·2^ea (m odd, below 1696 so that the square stays below 2) gives
  // (1 + m·2^-11 + m²·2^-24)·2^(2·ea): its lowest set bit, 2^-24 of it, is the result's guard
  // bit. The addend's top set bit lands d bits below the product's (d = 0 .. 80); a subnormal
  // addend has only its low bits set.
  for (int d = 0; d <= 80; ++d) {
    for (int i = 0; i < per_shift; ++i) {
      const uint32_t m = (static_cast<uint32_t>(rng.Range(0, 847)) << 1) | 1u;
      uint32_t c_mag;
      int c_top;  // the weight of c's top set bit, as a power of two
      if (rng.Bit()) {
        const int width = rng.Range(1, 12);
        c_mag = (rng.U32() & ((1u << width) - 1u)) | (1u << (width - 1));
        c_top = -150 + width;
      } else {
        const int ec = rng.Range(1, 60);  // biased
        c_mag = (static_cast<uint32_t>(ec) << 23) | (rng.Bit() ? 0u : (rng.U32() & 0x7FFFFFu));
        c_top = ec - 127;
      }
      const int p_top = c_top + d;  // 2·ea
      if ((p_top & 1) != 0 || p_top / 2 < -126 || p_top / 2 > 127) continue;
      const uint32_t a = (static_cast<uint32_t>(p_top / 2 + 127) << 23) | (m << 11);
      emit({a ^ (rng.Bit() ? 0x80000000u : 0u), a, c_mag | (rng.Bit() ? 0x80000000u : 0u)});
    }
  }
}

void Fma32Cancellations(Rng& rng, int count, const Fma32Emit& emit) {
  for (int i = 0; i < count; ++i) {
    // Products in range: exponents that sum to within the normal range.
    const int ea = rng.Range(20, 234);
    const int eb = std::clamp(127 + rng.Range(-100, 100) - (ea - 127), 1, 254);
    const uint32_t a = (rng.U32() & 0x807FFFFFu) | (static_cast<uint32_t>(ea) << 23);
    const uint32_t b = (rng.U32() & 0x807FFFFFu) | (static_cast<uint32_t>(eb) << 23);
    // -(a·b) rounded to fp32, then exact and near: the 48-bit product minus a 24-bit neighbour
    // leaves its low half (massive cancellation), or a few ulps of it.
    const uint32_t neg = num::Fma32(a, b, num::kFp32SignMask, num::Mode::kIeee) ^ 0x80000000u;
    emit({a, b, neg});
    emit({a, b, neg + static_cast<uint32_t>(rng.Range(-8, 8))});
    emit({a, b, neg + static_cast<uint32_t>(rng.Range(-300, 300))});
  }
}

void Fma32RoundingTies(Rng& rng, int count, const Fma32Emit& emit) {
  // c has ulp 2^(E-23); a = an odd integer below 2^24 and b = 2^k give a·b = odd·2^(E-24): the
  // sum's last bit is half an ulp of c's binade, a tie when the sum stays in it.
  for (int i = 0; i < count; ++i) {
    const int ce = rng.Range(60, 230);
    uint32_t c = WithExp(rng.U32(), ce);
    if (i % 4 == 0) c &= 0xFF800001u;
    const uint32_t odd = (rng.U32() & ((1u << rng.Range(1, 24)) - 1u)) | 1u;
    int msb = 0;
    while ((odd >> (msb + 1)) != 0) ++msb;
    const uint32_t a_mag =
        (static_cast<uint32_t>(127 + msb) << 23) | ((odd << (23 - msb)) & 0x7FFFFFu);
    const int k = (ce - 127) - 24;
    if (k < -126 || k > 127) continue;
    const uint32_t b = static_cast<uint32_t>(k + 127) << 23;
    const uint32_t a = a_mag | (rng.Bit() ? 0x80000000u : 0u);
    emit({a, b, c});
    emit({a, b, c ^ 1u});
  }
}

void Fma32SubnormalBoundary(Rng& rng, int count, const Fma32Emit& emit) {
  for (int i = 0; i < count; ++i) {
    // Products around 2^-126 .. 2^-152 and addends in the subnormal / smallest-normal range;
    // subnormal operands (normalised inside the unit) now and then.
    const int ea = rng.Range(1, 126);
    const int eb = std::max(1, std::min(254, 127 - 126 - (ea - 127) + rng.Range(-26, 2)));
    uint32_t a = (rng.U32() & 0x807FFFFFu) | (static_cast<uint32_t>(ea) << 23);
    const uint32_t b = (rng.U32() & 0x807FFFFFu) | (static_cast<uint32_t>(eb) << 23);
    if (rng.Range(0, 7) == 0) a &= 0x807FFFFFu;
    uint32_t c = rng.U32() & 0x80FFFFFFu;
    if (rng.Range(0, 3) == 0) c = rng.U32() & 0x807FFFFFu;
    if (rng.Range(0, 7) == 0) c = (c & 0x80000000u) | 0x00800000u;
    emit({a, b, c});
    emit({a, b,
          (0x00800000u + static_cast<uint32_t>(rng.Range(-3, 3))) |
              (((a ^ b) & 0x80000000u) ? 0u : 0x80000000u)});
  }
}

void Fma32FromMac(Rng& rng, int count, const Fma32Emit& emit) {
  const auto widen = [&](const MacVector& v) {
    emit({num::Bf16ToFp32(v.a), num::Bf16ToFp32(v.b), v.c});
  };
  FusedDirected(widen);
  ExponentSweep(rng, std::max(1, count / 400), widen);
  Cancellations(rng, count, widen);
  RoundingTies(rng, count, widen);
  SubnormalBoundary(rng, count, widen);
}

std::string DescribeFma32(const Fma32Vector& v, num::Mode mode) {
  return fmt::format("{} fma32 a={} b={} c={}", num::ModeName(mode), num::FormatFp32(v.a),
                     num::FormatFp32(v.b), num::FormatFp32(v.c));
}

void ConverterStructured(Rng& rng, const std::function<void(uint32_t)>& emit) {
  static const uint32_t kLow[] = {0x0000, 0x0001, 0x7FFF, 0x8000, 0x8001, 0xFFFF, 0x4000, 0xC000};
  for (uint32_t hi = 0; hi < 0x10000; ++hi) {  // every sign, exponent and kept fraction
    for (uint32_t low : kLow) emit((hi << 16) | low);
    emit((hi << 16) | (rng.U32() & 0xFFFF));
  }
}

std::string DescribeMac(const MacVector& v, num::Mode mode) {
  return fmt::format("{} a={} b={} c={}", num::ModeName(mode), num::FormatBf16(v.a),
                     num::FormatBf16(v.b), num::FormatFp32(v.c));
}

}  // namespace tpu::tb
