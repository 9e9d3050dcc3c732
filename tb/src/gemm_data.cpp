// SPDX-License-Identifier: Apache-2.0
#include "tpu/tb/gemm_data.h"

#include <fmt/format.h>

#include "tpu/tb/mac_vectors.h"

namespace tpu::tb {

const char* GemmDataName(GemmData d) {
  switch (d) {
    case GemmData::kModerate: return "moderate";
    case GemmData::kSpecials: return "specials";
    case GemmData::kTiny: return "tiny";
  }
  return "?";
}

namespace {

uint16_t Bf16Around(Rng& rng, int exp_lo, int exp_hi) {
  const uint16_t sign = rng.Bit() ? 0x8000 : 0;
  const auto exp = static_cast<uint16_t>(rng.Range(exp_lo, exp_hi));
  return static_cast<uint16_t>(sign | (exp << 7) | (rng.U16() & 0x7F));
}

uint16_t DrawA(Rng& rng, GemmData kind) {
  switch (kind) {
    case GemmData::kModerate: return Bf16Around(rng, 127 - 8, 127 + 8);
    case GemmData::kSpecials:
      if (rng.Range(0, 99) < 4) {
        const auto& s = Bf16Specials();
        return s[rng.Range(0, static_cast<int>(s.size()) - 1)];
      }
      return Bf16Around(rng, 127 - 8, 127 + 8);
    case GemmData::kTiny:
      // Products near 2^-126: exponents around 2^-63 each, some subnormal operands.
      if (rng.Range(0, 9) == 0)
        return static_cast<uint16_t>((rng.Bit() ? 0x8000 : 0) | (rng.U16() & 0x7F));
      return Bf16Around(rng, 127 - 66, 127 - 60);
  }
  return 0;
}

uint32_t DrawC0(Rng& rng, GemmData kind) {
  if (kind == GemmData::kSpecials && rng.Range(0, 99) < 4) {
    const auto& s = Fp32Specials();
    return s[rng.Range(0, static_cast<int>(s.size()) - 1)];
  }
  const int lo = kind == GemmData::kTiny ? 0 : 127 - 8;
  const int hi = kind == GemmData::kTiny ? 3 : 127 + 8;
  const uint32_t sign = rng.Bit() ? 0x80000000u : 0;
  return sign | (static_cast<uint32_t>(rng.Range(lo, hi)) << 23) | (rng.U32() & 0x7FFFFF);
}

}  // namespace

GemmOperands RandomGemm(Rng& rng, const gemm::Shape& s, GemmData kind, bool with_c0) {
  GemmOperands g;
  g.shape = s;
  g.a.resize(size_t(s.m) * s.k);
  g.b.resize(size_t(s.k) * s.n);
  for (auto& x : g.a) x = DrawA(rng, kind);
  for (auto& x : g.b) x = DrawA(rng, kind);
  if (with_c0) {
    g.c0.resize(size_t(s.m) * s.n);
    for (auto& x : g.c0) x = DrawC0(rng, kind);
  }
  return g;
}

std::string ShapeName(const gemm::Shape& s) {
  return fmt::format("{}x{}x{}", s.m, s.k, s.n);
}

}  // namespace tpu::tb
