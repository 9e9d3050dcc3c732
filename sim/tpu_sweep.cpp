// SPDX-License-Identifier: Apache-2.0
// tpu_sweep: the exhaustive numerics sweeps behind `make verify-exhaustive`.
//
//   golden-mac-zero   golden MAC vs std::fmaf, all 2^32 (a, b), c = +0; and the golden GEMM's
//                     fast kernel (gemm::MacRows, TPU_GEMM_KERNEL chooses) vs the golden MAC
//   golden-mac-rand   the same with a fresh random c per pair
//   golden-cvt        golden fp32->bf16 vs Eigen::bfloat16, all 2^32 inputs
//   rtl-mac-matter    RTL MAC vs golden, all (a, b), c drawn to matter (half uniform, half with
//                     its exponent within ±30 of the product's)
//   rtl-mac-cancel    RTL MAC vs golden, all (a, b), c within a few ulps of cancelling a·b
//   rtl-cvt           RTL converter vs golden, all 2^32 inputs, relu off and on
//   random            N fully random triples on the combinational RTL MAC, and the 3-stage MAC
//                     checked in order on the same vectors
//   vpu-exp           the vector unit's exp (tpu/vpu.h), all 2^32 inputs: golden vs the same
//                     algorithm on the host's fmaf, and (IEEE) its error against exp within the
//                     contract's bound; prints the largest error
//   vpu-recip         the same for the vector unit's reciprocal
//   vpu-rsqrt         the same for its 1/sqrt (negative inputs: the canonical NaN)
//   vpu-sqrt          the same for its sqrt
//   vpu-sigmoid       the same for its sigmoid (from exp and reciprocal)
//   vpu-tanh          the same for its tanh (a polynomial near 0, exp and reciprocal beyond)
//   vpu-log           the same for its natural logarithm
//   vpu-erf           the same for its erf (a polynomial below 1, 1 - exp of one beyond)
//   vpu-div           its division a / b: every a once, each with a random b (half of them with an
//                     exponent near a's), against the host's binary32 division
// Each sweep runs per mode (IEEE, FTZ) on --threads threads with one model each; the random c of
// pair (a, b) depends only on the seed and a, so a run reproduces from its seed.
#include <fmt/format.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "Vcvt.h"
#include "Vmac_p0.h"
#include "Vmac_p3.h"
#include "tpu/gemm.h"
#include "tpu/numerics.h"
#include "tpu/tb/mac_harness.h"
#include "tpu/tb/mac_vectors.h"
#include "tpu/tb/oracles.h"
#include "tpu/tb/rng.h"
#include "tpu/tb/vpu_error.h"
#include "tpu/vpu.h"

namespace {

using tpu::num::Mode;
using Clock = std::chrono::steady_clock;

// Shared state of one sweep: work is handed out in chunks of the outer index (0..outer-1).
class Sweep {
 public:
  Sweep(std::string name, Mode mode, uint64_t outer, uint64_t inner)
      : name_(std::move(name)), mode_(mode), outer_(outer), inner_(inner) {}

  // body(index, rng, report) checks inner_ items for one outer index; returns mismatches.
  using Body = std::function<uint64_t(uint64_t outer_index, tpu::tb::Rng& rng,
                                      const std::function<void(std::string)>& report)>;
  // make_body() is called once per thread (each thread owns its models).
  void Run(unsigned threads, uint64_t seed, const std::function<Body()>& make_body) {
    const auto t0 = Clock::now();
    std::vector<std::thread> pool;
    for (unsigned t = 0; t < threads; ++t) {
      pool.emplace_back([&] {
        Body body = make_body();
        const auto report = [&](std::string s) {
          std::lock_guard<std::mutex> lock(mu_);
          if (reports_.size() < 10) reports_.push_back(std::move(s));
        };
        for (uint64_t i; (i = next_.fetch_add(1)) < outer_;) {
          tpu::tb::Rng rng(tpu::tb::DeriveSeed(
              seed, fmt::format("{}/{}/{}", name_, tpu::num::ModeName(mode_), i)));
          try {
            mismatches_ += body(i, rng, report);
          } catch (const std::exception& e) {  // watchdog or assertion in a clocked model
            mismatches_ += 1;
            report(fmt::format("outer index {}: {}", i, e.what()));
          }
          done_ += 1;
        }
      });
    }
    Progress(t0);
    for (auto& th : pool) th.join();
    seconds_ = std::chrono::duration<double>(Clock::now() - t0).count();
    PrintLine(true);
  }

  uint64_t mismatches() const { return mismatches_; }
  uint64_t checked() const { return outer_ * inner_; }
  double seconds() const { return seconds_; }
  const std::string& name() const { return name_; }
  Mode mode() const { return mode_; }
  const std::vector<std::string>& reports() const { return reports_; }

 private:
  // Live progress on stderr: a rewritten line on a terminal, a line per 10% otherwise.
  void Progress(Clock::time_point t0) {
    const bool tty = isatty(STDERR_FILENO) != 0;
    uint64_t last_decile = 0;
    auto last_print = Clock::now();
    while (done_ < outer_) {
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
      const auto now = Clock::now();
      seconds_ = std::chrono::duration<double>(now - t0).count();
      const uint64_t decile = done_ * 10 / outer_;
      if (done_ < outer_ && ((tty && now - last_print > std::chrono::milliseconds(500)) ||
                             (!tty && decile != last_decile))) {
        PrintLine(false);
        last_print = now;
      }
      last_decile = decile;
    }
  }
  void PrintLine(bool final) {
    const double frac = static_cast<double>(done_) / static_cast<double>(outer_);
    const double rate = seconds_ > 0 ? frac * static_cast<double>(checked()) / seconds_ : 0;
    const double eta = frac > 0 ? seconds_ * (1 - frac) / frac : 0;
    const bool tty = isatty(STDERR_FILENO) != 0;
    fmt::print(stderr, "{}[{:<15} {:<4}] {:5.1f}%  {:.3g}/{:.3g}  {:6.2f} M/s  {}  mismatches {}{}",
               tty ? "\r" : "", name_, tpu::num::ModeName(mode_), 100 * frac,
               frac * static_cast<double>(checked()), static_cast<double>(checked()), rate / 1e6,
               final ? fmt::format("done in {:.1f} s", seconds_) : fmt::format("ETA {:.0f} s", eta),
               mismatches_.load(), (final || !tty) ? "\n" : "   ");
  }

  std::string name_;
  Mode mode_;
  uint64_t outer_;
  uint64_t inner_;
  std::atomic<uint64_t> next_{0};
  std::atomic<uint64_t> done_{0};
  std::atomic<uint64_t> mismatches_{0};
  double seconds_ = 0;
  std::mutex mu_;
  std::vector<std::string> reports_;
};

// ---- Sweep bodies -------------------------------------------------------------------------

// A failed RTL assertion counts as one mismatch of the chunk it happened in (the message itself
// was printed by Verilator); the model's error state is sticky, so it is reported once.
template <class M>
uint64_t AssertionCheck(tpu::tb::SimCtrl<M>& sim, uint64_t outer,
                        const std::function<void(std::string)>& report) {
  static thread_local bool reported = false;
  if (!sim.AssertionFailed() || reported) return 0;
  reported = true;
  report(fmt::format("{}: an RTL assertion failed in outer index {} (message above)", sim.name(),
                     outer));
  return 1;
}

// The golden MAC against the host's fmaf, and the golden GEMM's fast kernel (the one the golden
// model uses: gemm::ActiveKernel) against the golden MAC, bit for bit: one row per a, with every
// b as a column and its c as the row's initial value.
Sweep::Body GoldenMac(Mode mode, tpu::tb::CPolicy policy) {
  auto bs = std::make_shared<std::vector<uint16_t>>(0x10000);
  for (uint32_t b = 0; b < 0x10000; ++b) (*bs)[b] = static_cast<uint16_t>(b);
  return [mode, policy, bs](uint64_t a, tpu::tb::Rng& rng, const auto& report) {
    uint64_t bad = 0;
    const auto a16 = static_cast<uint16_t>(a);
    std::vector<uint32_t> cs(0x10000), gs(0x10000);
    for (uint32_t b = 0; b < 0x10000; ++b) {
      const auto b16 = static_cast<uint16_t>(b);
      const uint32_t c = tpu::tb::DrawC(rng, a16, b16, policy);
      const uint32_t g = tpu::num::Mac(a16, b16, c, mode);
      const uint32_t h = tpu::tb::HostMac(a16, b16, c, mode);
      cs[b] = c, gs[b] = g;
      if (!tpu::tb::MacMatchesHost(g, h)) {
        ++bad;
        report(fmt::format("{}: golden {} host {}", tpu::tb::DescribeMac({a16, b16, c}, mode),
                           tpu::num::FormatFp32(g), tpu::num::FormatFp32(h)));
      }
    }
    std::vector<uint32_t> fast = cs;
    const uint16_t* a_row = &a16;
    uint32_t* c_row = fast.data();
    tpu::gemm::MacRows(1, 1, 0x10000, &a_row, bs->data(), 0x10000, &c_row, mode);
    for (uint32_t b = 0; b < 0x10000; ++b) {
      if (fast[b] == gs[b]) continue;
      ++bad;
      report(fmt::format("{}: fast GEMM kernel {} {} golden {}",
                         tpu::tb::DescribeMac({a16, static_cast<uint16_t>(b), cs[b]}, mode),
                         tpu::gemm::KernelName(tpu::gemm::ActiveKernel()),
                         tpu::num::FormatFp32(fast[b]), tpu::num::FormatFp32(gs[b])));
    }
    return bad;
  };
}

// A function of the vector unit over every fp32 input: the golden model (num::Fma32 steps)
// against the same algorithm on the host's fmaf, bit for bit, and in IEEE mode against the
// function's binary64 value within the contract's bound. The largest error, where it is and how
// many results are not the binary64 value rounded to fp32 are kept for the summary.
struct VpuFunction {
  const char* name;
  uint32_t (*golden)(uint32_t, Mode);
  uint32_t (*host)(uint32_t, Mode);
  double (*exact)(double);
  double (*error)(uint32_t x, uint32_t y);
  double bound;
  std::atomic<uint64_t> worst_bits{0};  // the largest error's double, as bits (errors are >= 0)
  std::atomic<uint32_t> worst_x{0};
  std::atomic<uint64_t> not_nearest{0};
};

VpuFunction g_vpu_exp{
    "exp",
    tpu::vpu::Exp,
    [](uint32_t x, Mode m) { return tpu::vpu::ExpWith(x, m, tpu::tb::HostFma32); },
    [](double x) { return std::exp(x); },
    tpu::tb::ExpUlpError,
    tpu::vpu::kExpMaxUlp};
VpuFunction g_vpu_recip{
    "recip",
    tpu::vpu::Recip,
    [](uint32_t x, Mode m) { return tpu::vpu::RecipWith(x, m, tpu::tb::HostFma32); },
    [](double x) { return 1.0 / x; },
    tpu::tb::RecipUlpError,
    tpu::vpu::kRecipMaxUlp};

VpuFunction g_vpu_rsqrt{
    "rsqrt",
    tpu::vpu::Rsqrt,
    [](uint32_t x, Mode m) { return tpu::vpu::RsqrtWith(x, m, tpu::tb::HostFma32); },
    [](double x) { return 1.0 / std::sqrt(x); },
    tpu::tb::RsqrtUlpError,
    tpu::vpu::kRsqrtMaxUlp};
VpuFunction g_vpu_sqrt{
    "sqrt",
    tpu::vpu::Sqrt,
    [](uint32_t x, Mode m) { return tpu::vpu::SqrtWith(x, m, tpu::tb::HostFma32); },
    [](double x) { return std::sqrt(x); },
    tpu::tb::SqrtUlpError,
    tpu::vpu::kSqrtMaxUlp};

VpuFunction g_vpu_sigmoid{
    "sigmoid",
    tpu::vpu::Sigmoid,
    [](uint32_t x, Mode m) { return tpu::vpu::SigmoidWith(x, m, tpu::tb::HostFma32); },
    [](double x) { return 1.0 / (1.0 + std::exp(-x)); },
    tpu::tb::SigmoidUlpError,
    tpu::vpu::kSigmoidMaxUlp};

VpuFunction g_vpu_tanh{
    "tanh",
    tpu::vpu::Tanh,
    [](uint32_t x, Mode m) { return tpu::vpu::TanhWith(x, m, tpu::tb::HostFma32); },
    [](double x) { return std::tanh(x); },
    tpu::tb::TanhUlpError,
    tpu::vpu::kTanhMaxUlp};

VpuFunction g_vpu_log{
    "log",
    tpu::vpu::Log,
    [](uint32_t x, Mode m) { return tpu::vpu::LogWith(x, m, tpu::tb::HostFma32); },
    [](double x) { return std::log(x); },
    tpu::tb::LogUlpError,
    tpu::vpu::kLogMaxUlp};

VpuFunction g_vpu_erf{
    "erf",
    tpu::vpu::Erf,
    [](uint32_t x, Mode m) { return tpu::vpu::ErfWith(x, m, tpu::tb::HostFma32); },
    [](double x) { return std::erf(x); },
    tpu::tb::ErfUlpError,
    tpu::vpu::kErfMaxUlp};

Sweep::Body VpuUnary(Mode mode, VpuFunction& f) {
  return [mode, &f](uint64_t hi, tpu::tb::Rng&, const auto& report) {
    uint64_t bad = 0, not_nearest = 0;
    double worst = 0;
    uint32_t worst_x = 0;
    for (uint32_t lo = 0; lo < 0x10000; ++lo) {
      const auto x = static_cast<uint32_t>(hi << 16 | lo);
      const uint32_t g = f.golden(x, mode);
      const uint32_t h = f.host(x, mode);
      if (g != h) {
        ++bad;
        report(fmt::format("{} {} x={}: golden {} host-fma {}", f.name, tpu::num::ModeName(mode),
                           tpu::num::FormatFp32(x), tpu::num::FormatFp32(g),
                           tpu::num::FormatFp32(h)));
      }
      const double exact = f.exact(double(tpu::tb::AsFloat(x)));
      if (mode == Mode::kIeee && !tpu::num::IsNaN32(x) && std::isnan(exact)) {
        // Outside the domain (a negative x for rsqrt and sqrt): the canonical NaN.
        if (g != tpu::num::kFp32CanonicalNaN) {
          ++bad;
          report(fmt::format("{} x={}: {} where the exact value is NaN", f.name,
                             tpu::num::FormatFp32(x), tpu::num::FormatFp32(g)));
        }
      } else if (mode == Mode::kIeee && !tpu::num::IsNaN32(x)) {
        const double err = f.error(x, g);
        if (err > worst) worst = err, worst_x = x;
        const auto nearest = static_cast<float>(exact);
        not_nearest += tpu::tb::AsBits(nearest) != g;
        if (err > f.bound) {
          ++bad;
          report(fmt::format("{} x={}: {} is {:.3f} ulp from the exact value (bound {})", f.name,
                             tpu::num::FormatFp32(x), tpu::num::FormatFp32(g), err, f.bound));
        }
      }
    }
    f.not_nearest += not_nearest;
    uint64_t bits;
    std::memcpy(&bits, &worst, sizeof bits);
    for (uint64_t cur = f.worst_bits.load(); bits > cur;) {
      if (f.worst_bits.compare_exchange_weak(cur, bits)) {
        f.worst_x = worst_x;
        break;
      }
    }
    return bad;
  };
}

// vpu-div: 2^32 pairs, a = the outer and inner index (every fp32 pattern once), b random from the
// pair's seed: any pattern, or (half the time) a's exponent moved by -2 .. 2 with a random sign
// and fraction, where quotients near 1 and exact ones are common. The golden result equals the
// host-fma run; in IEEE mode its error against binary64 a/b is within vpu::kDivMaxUlp (NaN where
// the quotient is one).
struct DivStats {
  std::atomic<uint64_t> worst_bits{0};
  std::atomic<uint64_t> worst_pair{0};
  std::atomic<uint64_t> not_nearest{0};
} g_div;

Sweep::Body VpuDiv(Mode mode) {
  return [mode](uint64_t hi, tpu::tb::Rng& rng, const auto& report) {
    uint64_t bad = 0, not_nearest = 0;
    double worst = 0;
    uint64_t worst_pair = 0;
    for (uint32_t lo = 0; lo < 0x10000; ++lo) {
      const auto a = static_cast<uint32_t>(hi << 16 | lo);
      uint32_t b = rng.U32();
      if (b & 1u) {
        const int e = static_cast<int>((a >> 23) & 0xFF) + static_cast<int>(rng.U32() % 5) - 2;
        b = (b & 0x807FFFFFu) | (static_cast<uint32_t>(std::clamp(e, 0, 254)) << 23);
      }
      const uint32_t g = tpu::vpu::Div(a, b, mode);
      const uint32_t h = tpu::vpu::DivWith(a, b, mode, tpu::tb::HostFma32);
      if (g != h) {
        ++bad;
        report(fmt::format("div {} {} / {}: golden {} host-fma {}", tpu::num::ModeName(mode),
                           tpu::num::FormatFp32(a), tpu::num::FormatFp32(b),
                           tpu::num::FormatFp32(g), tpu::num::FormatFp32(h)));
      }
      if (mode != Mode::kIeee) continue;
      const double exact = double(tpu::tb::AsFloat(a)) / double(tpu::tb::AsFloat(b));
      if (std::isnan(exact)) {
        if (g != tpu::num::kFp32CanonicalNaN) {
          ++bad;
          report(fmt::format("div {} / {}: {} where the quotient is NaN", tpu::num::FormatFp32(a),
                             tpu::num::FormatFp32(b), tpu::num::FormatFp32(g)));
        }
        continue;
      }
      const double err = tpu::tb::ResultError(g, exact);
      if (err > worst) worst = err, worst_pair = uint64_t(a) << 32 | b;
      not_nearest += tpu::tb::AsBits(tpu::tb::AsFloat(a) / tpu::tb::AsFloat(b)) != g;
      if (err > tpu::vpu::kDivMaxUlp) {
        ++bad;
        report(fmt::format("div {} / {}: {} is {:.3f} ulp from the exact value (bound {})",
                           tpu::num::FormatFp32(a), tpu::num::FormatFp32(b),
                           tpu::num::FormatFp32(g), err, tpu::vpu::kDivMaxUlp));
      }
    }
    g_div.not_nearest += not_nearest;
    uint64_t bits;
    std::memcpy(&bits, &worst, sizeof bits);
    for (uint64_t cur = g_div.worst_bits.load(); bits > cur;) {
      if (g_div.worst_bits.compare_exchange_weak(cur, bits)) {
        g_div.worst_pair = worst_pair;
        break;
      }
    }
    return bad;
  };
}

Sweep::Body GoldenCvt(Mode mode) {
  return [mode](uint64_t hi, tpu::tb::Rng&, const auto& report) {
    uint64_t bad = 0;
    for (uint32_t lo = 0; lo < 0x10000; ++lo) {
      const auto x = static_cast<uint32_t>(hi << 16 | lo);
      const uint16_t g = tpu::num::Fp32ToBf16(x, mode);
      const uint16_t h = tpu::tb::HostFp32ToBf16(x, mode);
      if (!tpu::tb::CvtMatchesHost(g, h)) {
        ++bad;
        report(fmt::format("{} x={}: golden {} Eigen {}", tpu::num::ModeName(mode),
                           tpu::num::FormatFp32(x), tpu::num::FormatBf16(g),
                           tpu::num::FormatBf16(h)));
      }
    }
    return bad;
  };
}

Sweep::Body RtlMac(Mode mode, tpu::tb::CPolicy policy) {
  auto sim = std::make_shared<tpu::tb::SimCtrl<Vmac_p0>>("mac_p0", 1);
  return [sim, mode, policy](uint64_t a, tpu::tb::Rng& rng, const auto& report) {
    uint64_t bad = 0;
    for (uint32_t b = 0; b < 0x10000; ++b) {
      const auto a16 = static_cast<uint16_t>(a);
      const auto b16 = static_cast<uint16_t>(b);
      const uint32_t c = tpu::tb::DrawC(rng, a16, b16, policy);
      const uint32_t r = tpu::tb::EvalMac(*sim, a16, b16, c, mode);
      const uint32_t g = tpu::num::Mac(a16, b16, c, mode);
      if (r != g) {
        ++bad;
        report(fmt::format("{}: RTL {} golden {}", tpu::tb::DescribeMac({a16, b16, c}, mode),
                           tpu::num::FormatFp32(r), tpu::num::FormatFp32(g)));
      }
    }
    return bad + AssertionCheck(*sim, a, report);
  };
}

Sweep::Body RtlCvt(Mode mode) {
  auto sim = std::make_shared<tpu::tb::SimCtrl<Vcvt>>("cvt", 1);
  return [sim, mode](uint64_t hi, tpu::tb::Rng&, const auto& report) {
    uint64_t bad = 0;
    for (uint32_t lo = 0; lo < 0x10000; ++lo) {
      const auto x = static_cast<uint32_t>(hi << 16 | lo);
      for (bool relu : {false, true}) {
        const uint16_t r = tpu::tb::EvalCvt(*sim, x, relu, mode);
        const uint16_t g = tpu::num::StoreBf16(x, relu, mode);
        if (r != g) {
          ++bad;
          report(fmt::format("{} relu={} x={}: RTL {} golden {}", tpu::num::ModeName(mode), relu,
                             tpu::num::FormatFp32(x), tpu::num::FormatBf16(r),
                             tpu::num::FormatBf16(g)));
        }
      }
    }
    return bad + AssertionCheck(*sim, hi, report);
  };
}

// Fully random triples: chunks of 2^16 on the combinational MAC, and the same vectors in order
// through the 3-stage MAC (random valid gaps, both modes mixed).
Sweep::Body RtlRandom() {
  auto comb = std::make_shared<tpu::tb::SimCtrl<Vmac_p0>>("mac_p0", 1);
  auto pipe = std::make_shared<tpu::tb::SimCtrl<Vmac_p3>>("mac_p3", UINT64_MAX);
  return [comb, pipe](uint64_t chunk, tpu::tb::Rng& rng, const auto& report) {
    tpu::tb::Scoreboard sb("mac_p3 in order");
    tpu::tb::MacPipeChecker<Vmac_p3> checker(*pipe, 3, rng.Next(), sb);
    uint64_t bad = 0;
    for (uint32_t i = 0; i < 0x10000; ++i) {
      const tpu::tb::MacVector v{rng.U16(), rng.U16(), rng.U32()};
      const Mode mode = rng.Bit() ? Mode::kFtz : Mode::kIeee;
      const uint32_t r = tpu::tb::EvalMac(*comb, v.a, v.b, v.c, mode);
      const uint32_t g = tpu::num::Mac(v.a, v.b, v.c, mode);
      if (r != g) {
        ++bad;
        report(fmt::format("{}: RTL {} golden {}", tpu::tb::DescribeMac(v, mode),
                           tpu::num::FormatFp32(r), tpu::num::FormatFp32(g)));
      }
      checker.Push(v, mode);
    }
    checker.Finish();
    if (sb.mismatches() != 0 || !checker.errors().empty()) {
      report(fmt::format("chunk {}: {}{}", chunk, sb.Summary(), checker.errors()));
    }
    return bad + sb.mismatches() + (checker.errors().empty() ? 0 : 1) +
           AssertionCheck(*comb, chunk, report);
  };
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"Exhaustive numerics sweeps (make verify-exhaustive)"};
  const std::vector<std::string> all = {
      "golden-mac-zero", "golden-mac-rand", "golden-cvt", "rtl-mac-matter",
      "rtl-mac-cancel",  "rtl-cvt",         "random",     "vpu-exp",
      "vpu-recip",       "vpu-rsqrt",       "vpu-sqrt",   "vpu-sigmoid",
      "vpu-tanh",        "vpu-log",         "vpu-erf",    "vpu-div"};
  std::vector<std::string> sweeps;
  bool run_all = false;
  std::string mode_name = "both";
  unsigned threads = std::max(1u, std::thread::hardware_concurrency());
  uint64_t seed = 0;
  bool seed_given = false;
  uint64_t outer_limit = 0;
  uint64_t random_triples = 100'000'000;
  app.add_flag("--all", run_all, "run every sweep in both modes");
  app.add_option("--sweep", sweeps, "sweeps to run")->check(CLI::IsMember(all));
  app.add_option("--mode", mode_name, "ieee, ftz or both")
      ->check(CLI::IsMember({"ieee", "ftz", "both"}));
  app.add_option("--threads", threads, "worker threads (one model each)")
      ->check(CLI::Range(1u, 64u));
  app.add_option("--seed", seed, "seed of the random addends")->each([&](const std::string&) {
    seed_given = true;
  });
  app.add_option("--outer", outer_limit,
                 "only the first N of 65536 outer values (a quick partial sweep)")
      ->check(CLI::Range(uint64_t{1}, uint64_t{65536}));
  app.add_option("--random", random_triples, "triples for the 'random' sweep (rounded up to 2^16)");
  CLI11_PARSE(app, argc, argv);
  if (run_all) sweeps = all;
  if (sweeps.empty()) {
    fmt::print(stderr, "tpu_sweep: nothing to do; give --all or --sweep NAME (one of: {})\n",
               fmt::join(all, ", "));
    return 2;
  }
  if (!seed_given) seed = tpu::tb::ChooseSeed();
  std::vector<Mode> modes;
  if (mode_name != "ftz") modes.push_back(Mode::kIeee);
  if (mode_name != "ieee") modes.push_back(Mode::kFtz);
  fmt::print("tpu_sweep: seed {} (reproduce: --seed {}), {} threads\n", seed, seed, threads);

  std::vector<std::unique_ptr<Sweep>> done;
  const uint64_t full = outer_limit ? outer_limit : 0x10000;
  for (const std::string& s : sweeps) {
    if (s == "random") {
      const uint64_t chunks = (random_triples + 0xFFFF) / 0x10000;
      auto sw = std::make_unique<Sweep>(s, Mode::kIeee, chunks, 0x10000);
      sw->Run(threads, seed, [] { return RtlRandom(); });
      done.push_back(std::move(sw));
      continue;
    }
    for (Mode m : modes) {
      const uint64_t inner = s == "rtl-cvt" ? 0x20000 : 0x10000;
      auto sw = std::make_unique<Sweep>(s, m, full, inner);
      std::function<Sweep::Body()> make;
      if (s == "golden-mac-zero") make = [m] { return GoldenMac(m, tpu::tb::CPolicy::kZero); };
      if (s == "golden-mac-rand") make = [m] { return GoldenMac(m, tpu::tb::CPolicy::kMatter); };
      if (s == "golden-cvt") make = [m] { return GoldenCvt(m); };
      if (s == "rtl-mac-matter") make = [m] { return RtlMac(m, tpu::tb::CPolicy::kMatter); };
      if (s == "rtl-mac-cancel") make = [m] { return RtlMac(m, tpu::tb::CPolicy::kCancel); };
      if (s == "rtl-cvt") make = [m] { return RtlCvt(m); };
      if (s == "vpu-exp") make = [m] { return VpuUnary(m, g_vpu_exp); };
      if (s == "vpu-recip") make = [m] { return VpuUnary(m, g_vpu_recip); };
      if (s == "vpu-rsqrt") make = [m] { return VpuUnary(m, g_vpu_rsqrt); };
      if (s == "vpu-sqrt") make = [m] { return VpuUnary(m, g_vpu_sqrt); };
      if (s == "vpu-sigmoid") make = [m] { return VpuUnary(m, g_vpu_sigmoid); };
      if (s == "vpu-tanh") make = [m] { return VpuUnary(m, g_vpu_tanh); };
      if (s == "vpu-log") make = [m] { return VpuUnary(m, g_vpu_log); };
      if (s == "vpu-erf") make = [m] { return VpuUnary(m, g_vpu_erf); };
      if (s == "vpu-div") make = [m] { return VpuDiv(m); };
      sw->Run(threads, seed, make);
      done.push_back(std::move(sw));
    }
  }

  fmt::print("\n{:<16} {:<5} {:>14} {:>11} {:>9} {:>9}\n", "sweep", "mode", "checked", "mismatches",
             "seconds", "M/s");
  uint64_t total_bad = 0;
  for (const auto& sw : done) {
    fmt::print("{:<16} {:<5} {:>14} {:>11} {:>9.1f} {:>9.2f}\n", sw->name(),
               sw->name() == "random" ? "both" : tpu::num::ModeName(sw->mode()), sw->checked(),
               sw->mismatches(), sw->seconds(),
               static_cast<double>(sw->checked()) / sw->seconds() / 1e6);
    for (const auto& r : sw->reports()) fmt::print("    {}\n", r);
    total_bad += sw->mismatches();
  }
  for (const VpuFunction* f : {&g_vpu_exp, &g_vpu_recip, &g_vpu_rsqrt, &g_vpu_sqrt, &g_vpu_sigmoid,
                               &g_vpu_tanh, &g_vpu_log, &g_vpu_erf}) {
    if (f->worst_bits.load() == 0) continue;
    double worst;
    const uint64_t bits = f->worst_bits.load();
    std::memcpy(&worst, &bits, sizeof worst);
    fmt::print(
        "vpu-{}: the largest error over the inputs swept is {:.4f} ulp, at x = {} (bound {}); "
        "{} IEEE results differ from the binary64 value rounded to fp32\n",
        f->name, worst, tpu::num::FormatFp32(f->worst_x.load()), f->bound, f->not_nearest.load());
  }
  if (const uint64_t bits = g_div.worst_bits.load(); bits != 0) {
    double worst;
    std::memcpy(&worst, &bits, sizeof worst);
    const uint64_t pair = g_div.worst_pair.load();
    fmt::print(
        "vpu-div: the largest error over the pairs swept is {:.4f} ulp, at {} / {} (bound {}); {} "
        "IEEE results differ from the host's binary32 division\n",
        worst, tpu::num::FormatFp32(uint32_t(pair >> 32)), tpu::num::FormatFp32(uint32_t(pair)),
        tpu::vpu::kDivMaxUlp, g_div.not_nearest.load());
  }
  fmt::print("{}\n", total_bad == 0 ? "all sweeps: 0 mismatches"
                                    : fmt::format("FAILED: {} mismatches", total_bad));
  return total_bad == 0 ? 0 : 1;
}
