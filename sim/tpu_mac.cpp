// SPDX-License-Identifier: Apache-2.0
// tpu_mac (`make run`): the MAC RTL on the default configuration (combinational, run-time mode)
// against the golden model and the host oracle.
//
//   tpu_mac                          the contract's named cases, then --random triples per mode
//   tpu_mac --a 0x3F80 --b 2.5 --c 1e-3 [--mode ftz]     one case, explained
//   tpu_mac --vectors FILE           one case per line: "a b c [ieee|ftz]" (# comments)
// Values are bit patterns (0x...) or decimal numbers (rounded to bf16 / fp32).
#include <fmt/format.h>

#include <CLI/CLI.hpp>
#include <cerrno>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <fstream>
#include <optional>
#include <sstream>
#include <string>

#include "Vmac_p0.h"
#include "tpu/numerics.h"
#include "tpu/tb/mac_harness.h"
#include "tpu/tb/mac_vectors.h"
#include "tpu/tb/oracles.h"

namespace {

using tpu::num::Mode;
using Sim = tpu::tb::SimCtrl<Vmac_p0>;

// Parses "0x..." as a bit pattern of `bits` bits, or a decimal number rounded to that format.
std::optional<uint32_t> ParseValue(const std::string& s, int bits, std::string* err) {
  if (s.size() > 2 && (s[0] == '0') && (s[1] == 'x' || s[1] == 'X')) {
    errno = 0;
    char* end = nullptr;
    const unsigned long long v = std::strtoull(s.c_str(), &end, 16);
    if (errno != 0 || *end != '\0') {
      *err = fmt::format("'{}' is not a hexadecimal bit pattern", s);
      return std::nullopt;
    }
    if (v >> bits) {
      *err =
          fmt::format("'{}' does not fit in {} bits ({})", s, bits, bits == 16 ? "bf16" : "fp32");
      return std::nullopt;
    }
    return static_cast<uint32_t>(v);
  }
  char* end = nullptr;
  const float f = std::strtof(s.c_str(), &end);
  if (s.empty() || *end != '\0') {
    *err = fmt::format("'{}' is neither a bit pattern (0x...) nor a number", s);
    return std::nullopt;
  }
  const uint32_t x = tpu::tb::AsBits(f);
  return bits == 16 ? tpu::num::Fp32ToBf16(x, Mode::kIeee) : x;
}

struct Outcome {
  uint32_t rtl;
  uint32_t golden;
  uint32_t host;
  bool ok() const { return rtl == golden && tpu::tb::MacMatchesHost(golden, host); }
};

Outcome Evaluate(Sim& m, const tpu::tb::MacVector& v, Mode mode) {
  return {tpu::tb::EvalMac(m, v.a, v.b, v.c, mode), tpu::num::Mac(v.a, v.b, v.c, mode),
          tpu::tb::HostMac(v.a, v.b, v.c, mode)};
}

void Explain(Sim& m, const tpu::tb::MacVector& v, Mode mode) {
  const Outcome o = Evaluate(m, v, mode);
  fmt::print("mode     {}\n", tpu::num::ModeName(mode));
  fmt::print("a        {:<28} {}\n", tpu::num::FormatBf16(v.a),
             tpu::num::FpClassName(tpu::num::Classify16(v.a)));
  fmt::print("b        {:<28} {}\n", tpu::num::FormatBf16(v.b),
             tpu::num::FpClassName(tpu::num::Classify16(v.b)));
  fmt::print("c        {:<28} {}\n", tpu::num::FormatFp32(v.c),
             tpu::num::FpClassName(tpu::num::Classify32(v.c)));
  fmt::print("RTL      {:<28} {}\n", tpu::num::FormatFp32(o.rtl),
             tpu::num::FpClassName(tpu::num::Classify32(o.rtl)));
  fmt::print("golden   {}\n", tpu::num::FormatFp32(o.golden));
  fmt::print("host     {} (fmaf{})\n", tpu::num::FormatFp32(o.host),
             mode == Mode::kFtz ? " with daz/flush" : "");
  fmt::print("bf16     {} (stored with round-to-nearest-even)\n",
             tpu::num::FormatBf16(tpu::num::Fp32ToBf16(o.rtl, mode)));
  fmt::print("{}\n", o.ok() ? "agree" : "DISAGREE");
}

int RunFile(Sim& m, const std::string& path) {
  std::ifstream in(path);
  if (!in) {
    fmt::print(stderr, "tpu_mac: cannot open vector file '{}'\n", path);
    return 2;
  }
  std::string line;
  int lineno = 0;
  int bad = 0;
  fmt::print("{:>5}  {:<4} {:<22} {:<22} {:<30} {:<30} {}\n", "line", "mode", "a", "b", "c",
             "result", "");
  while (std::getline(in, line)) {
    ++lineno;
    if (const auto hash = line.find('#'); hash != std::string::npos) line.resize(hash);
    std::istringstream ss(line);
    std::string sa, sb, sc, smode, extra;
    if (!(ss >> sa)) continue;  // blank or comment
    std::string err;
    if (!(ss >> sb >> sc)) {
      fmt::print(stderr, "{}:{}: expected 'a b c [ieee|ftz]', got '{}'\n", path, lineno, line);
      return 2;
    }
    ss >> smode >> extra;
    const auto a = ParseValue(sa, 16, &err);
    const auto b = a ? ParseValue(sb, 16, &err) : std::nullopt;
    const auto c = b ? ParseValue(sc, 32, &err) : std::nullopt;
    if (!c || !(smode.empty() || smode == "ieee" || smode == "ftz") || !extra.empty()) {
      if (err.empty()) err = fmt::format("mode must be 'ieee' or 'ftz', got '{} {}'", smode, extra);
      fmt::print(stderr, "{}:{}: {}\n", path, lineno, err);
      return 2;
    }
    const Mode mode = smode == "ftz" ? Mode::kFtz : Mode::kIeee;
    const tpu::tb::MacVector v{static_cast<uint16_t>(*a), static_cast<uint16_t>(*b), *c};
    const Outcome o = Evaluate(m, v, mode);
    bad += !o.ok();
    fmt::print("{:>5}  {:<4} {:<22} {:<22} {:<30} {:<30} {}\n", lineno, tpu::num::ModeName(mode),
               tpu::num::FormatBf16(v.a), tpu::num::FormatBf16(v.b), tpu::num::FormatFp32(v.c),
               tpu::num::FormatFp32(o.rtl), o.ok() ? "" : "DISAGREE");
  }
  return bad == 0 ? 0 : 1;
}

int RunDefault(Sim& m, uint64_t random, uint64_t seed) {
  fmt::print(
      "tpu_mac: bf16 x bf16 + fp32 fused MAC (RTL tpu_mac, combinational, run-time mode)\n\n");
  fmt::print("The contract's named cases:\n");
  struct Named {
    tpu::tb::MacVector v;
    Mode mode;
    const char* what;
  };
  const Named named[] = {
      {{0x1A01, 0x1A81, 0x01000000}, Mode::kIeee, "fused: one rounding (unfused: 0x01000000)"},
      {{0x5F80, 0x5F80, 0xFF7FFFFF}, Mode::kIeee, "2^64*2^64 - FLT_MAX = 2^104, not inf"},
      {{0x1C80, 0x1C80, 0x00800000}, Mode::kFtz, "FTZ: 2^-140 + 2^-126, product kept"},
      {{0x1D81, 0x9D83, 0x00802101}, Mode::kFtz, "FTZ: flush after IEEE rounding"},
      {{0x8001, 0x0001, 0x00000000}, Mode::kIeee, "(-tiny)*(+tiny) + 0 = -0"},
      {{0x0000, 0xC040, 0x80000000}, Mode::kIeee, "(+0)*(-3) + (-0) = -0"},
      {{0x7F80, 0x0001, 0x00000000}, Mode::kFtz, "FTZ: inf * subnormal = inf * 0 = NaN"},
  };
  int bad = 0;
  for (const auto& n : named) {
    const Outcome o = Evaluate(m, n.v, n.mode);
    bad += !o.ok();
    fmt::print("  {:<4} {:<36} -> {:<28} {}{}\n", tpu::num::ModeName(n.mode),
               fmt::format("{:04X} * {:04X} + {:08X}", n.v.a, n.v.b, n.v.c),
               tpu::num::FormatFp32(o.rtl), n.what, o.ok() ? "" : "  DISAGREE");
  }
  fmt::print("\nRandom triples (c drawn to matter), seed {} (reproduce: --seed {}):\n", seed, seed);
  for (Mode mode : {Mode::kIeee, Mode::kFtz}) {
    tpu::tb::Rng rng(tpu::tb::DeriveSeed(seed, tpu::num::ModeName(mode)));
    tpu::tb::Scoreboard sb(fmt::format("  {} RTL vs golden", tpu::num::ModeName(mode)));
    for (uint64_t i = 0; i < random; ++i) {
      const uint16_t a = rng.U16();
      const uint16_t b = rng.U16();
      const tpu::tb::MacVector v{a, b, tpu::tb::DrawC(rng, a, b, tpu::tb::CPolicy::kMatter)};
      sb.Check(i, tpu::tb::DescribeMac(v, mode), tpu::num::Mac(a, b, v.c, mode),
               tpu::tb::EvalMac(m, a, b, v.c, mode));
    }
    fmt::print("{}", sb.Summary());
    fmt::print("\n");
    bad += sb.mismatches() != 0;
  }
  fmt::print("{}\n", bad == 0 ? "all agree" : "MISMATCHES FOUND");
  return bad == 0 ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"The bf16 MAC RTL against the golden model (make run)"};
  std::string sa, sb, sc, mode_name = "ieee", file;
  uint64_t random = 1'000'000;
  uint64_t seed = 0;
  app.add_option("--a", sa, "bf16 operand: 0x3F80 or a number");
  app.add_option("--b", sb, "bf16 operand");
  app.add_option("--c", sc, "fp32 addend: 0x3F800000 or a number");
  app.add_option("--mode", mode_name, "ieee or ftz")->check(CLI::IsMember({"ieee", "ftz"}));
  app.add_option("--vectors", file, "file of 'a b c [ieee|ftz]' lines");
  app.add_option("--random", random, "random triples per mode in the default run");
  auto* seed_opt = app.add_option("--seed", seed, "seed of the random triples");
  CLI11_PARSE(app, argc, argv);

  tpu::tb::SimCtrl<Vmac_p0> sim("mac_p0", 1);
  const bool one = !sa.empty() || !sb.empty() || !sc.empty();
  if (one) {
    if (sa.empty() || sb.empty() || sc.empty()) {
      fmt::print(stderr, "tpu_mac: give all of --a, --b and --c\n");
      return 2;
    }
    std::string err;
    const auto a = ParseValue(sa, 16, &err);
    const auto b = a ? ParseValue(sb, 16, &err) : std::nullopt;
    const auto c = b ? ParseValue(sc, 32, &err) : std::nullopt;
    if (!c) {
      fmt::print(stderr, "tpu_mac: {}\n", err);
      return 2;
    }
    Explain(sim, {static_cast<uint16_t>(*a), static_cast<uint16_t>(*b), *c},
            mode_name == "ftz" ? Mode::kFtz : Mode::kIeee);
    return sim.AssertionFailed() ? 1 : 0;
  }
  int rc;
  if (!file.empty()) {
    rc = RunFile(sim, file);
  } else {
    if (seed_opt->count() == 0) seed = tpu::tb::ChooseSeed();
    rc = RunDefault(sim, random, seed);
  }
  if (sim.AssertionFailed()) {
    fmt::print(stderr, "tpu_mac: an RTL assertion failed (message above)\n");
    return 1;
  }
  return rc;
}
