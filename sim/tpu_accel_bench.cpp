// SPDX-License-Identifier: Apache-2.0
// tpu_accel_bench (`make bench-accel`, part of `make bench`): first the DMA's sequential read
// bandwidth on 1, 2, 4 and 8 channels (`--configs dma`: two rows of 128 columns, 256-byte rows),
// then the accelerator end to end, from HBM to HBM, on the default configuration (16×16 array,
// one HBM2 channel) and on the full 8-channel stack. For each configuration:
//  1. the measured sequential read bandwidth of the DMA path (a program of LOADs only);
//  2. a roofline table over a sweep of workload shapes: MACs, bytes moved on the DMA port
//     (program fetch included), arithmetic intensity (MACs per byte), attained MACs per cycle,
//     the roofline bound min(compute peak, measured bandwidth × intensity), attained / bound,
//     MAC utilization and the stall breakdown; every run is checked bit-exact against the
//     golden model;
//  3. the simulation speed (simulated cycles and MACs per second of host time, one thread).
// --csv FILE also writes the roofline rows to a CSV file (`make report`, scripts/report.py);
// --configs and --only choose the configurations and workloads (quick looks, parallel runs);
// --configs 128x128_1ch, 64x64_4ch and 128x128_8ch run the large arrays (hierarchical builds,
// each in its own variant program tpu_accel_bench-<name>, which this one runs).
#include <fmt/format.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <chrono>
#include <cstdint>
#include <ctime>
#include <fstream>
#include <functional>
#include <memory>
#include <regex>
#include <string>
#include <vector>

// One program holds the flat engines; each hierarchical engine has its own variant
// (TPU_BENCH_HIER, sim/CMakeLists.txt), which the main program runs as a child process.
#ifdef TPU_BENCH_HIER
#include TPU_BENCH_HIER_HEADER
#else
#include <unistd.h>

#include <climits>

#include "Vaccel_16x16_1ch.h"
#include "Vaccel_16x16_8ch.h"
#include "Vaccel_2x128_1ch.h"
#include "Vaccel_2x128_2ch.h"
#include "Vaccel_2x128_4ch.h"
#include "Vaccel_2x128_8ch.h"
#endif
#include "bench_util.h"
#include "tpu/isa.h"
#include "tpu/isa_model.h"
#include "tpu/tb/accel_config.h"
#include "tpu/tb/accel_harness.h"
#include "tpu/tb/accel_scoreboard.h"
#include "tpu/tb/workloads.h"

namespace {

using namespace tpu::tb::accel;
namespace isa = tpu::isa;
namespace host = tpu::host;
namespace bench = tpu::bench;

struct Shape {
  std::string name;
  std::function<Workload(const Config&, uint64_t)> make;
  // The layer as a GEMM (M × K × N; a convolution's im2col view) for the bounds of --table tpu.
  int m = 0, k = 0, n = 0;
};

// --table tpu: the TPU-class machine's table (issue: GEMV 1×8192², GEMM 1024³ and 4096×1024²,
// a dense layer with bias and relu, one convolution of each distinct shape of ResNet-50 at
// batch 8 and its final dense layer).
std::vector<Shape> TpuShapes() {
  using host::Init;
  using host::OutFormat;
  std::vector<Shape> s;
  auto gemm = [](int m, int k, int n) {
    return Shape{fmt::format("GEMM {}x{}x{}", m, k, n),
                 [=](const Config& c, uint64_t seed) {
                   return MakeGemm(c, m, k, n, Init::kOverwrite, OutFormat::kFp32, false, seed);
                 },
                 m, k, n};
  };
  // bf16 outputs too: what a layer hands the next one (half the fp32 result's write traffic).
  auto gemm_bf16 = [](int m, int k, int n) {
    return Shape{fmt::format("GEMM {}x{}x{} bf16 out", m, k, n),
                 [=](const Config& c, uint64_t seed) {
                   return MakeGemm(c, m, k, n, Init::kOverwrite, OutFormat::kBf16, false, seed);
                 },
                 m, k, n};
  };
  s.push_back(gemm(1, 8192, 8192));
  s.push_back(gemm(1024, 1024, 1024));
  s.push_back(gemm_bf16(1024, 1024, 1024));
  s.push_back(gemm(4096, 1024, 1024));
  s.push_back(gemm_bf16(4096, 1024, 1024));
  s.push_back(Shape{"dense 1024x4096x1024 bias relu bf16",
                    [](const Config& c, uint64_t seed) {
                      return MakeDense(c, 1024, 4096, 1024, true, true, OutFormat::kBf16, seed);
                    },
                    1024, 4096, 1024});
  auto conv = [](const std::string& what, int hw, int cin, int cout, int k, int stride, int pad) {
    host::ConvShape cs;
    cs.n = 8, cs.h = hw, cs.w = hw, cs.cin = cin, cs.cout = cout;
    cs.kh = k, cs.kw = k, cs.stride = stride, cs.pad = pad;
    return Shape{fmt::format("{} {}x{}x{}->{} {}x{}/{}", what, hw, hw, cin, cout, k, k, stride),
                 [=](const Config& c, uint64_t seed) {
                   return MakeConv(c, cs, true, true, OutFormat::kBf16, seed);
                 },
                 cs.M(), cs.K(), cout};
  };
  s.push_back(conv("R50 conv1", 224, 3, 64, 7, 2, 3));
  const int widths[] = {64, 128, 256, 512}, sizes[] = {56, 28, 14, 7};
  for (int i = 0; i < 4; ++i) {
    const int c = widths[i], hw = sizes[i];
    const std::string st = fmt::format("R50 conv{}", i + 2);
    s.push_back(conv(st + " 1x1 in", hw, 4 * c, c, 1, 1, 0));
    s.push_back(conv(st + " 3x3", hw, c, c, 3, 1, 1));
    s.push_back(conv(st + " 1x1 out", hw, c, 4 * c, 1, 1, 0));
  }
  s.push_back(Shape{"R50 fc 8x2048x1000",
                    [](const Config& c, uint64_t seed) {
                      return MakeDense(c, 8, 2048, 1000, true, false, OutFormat::kFp32, seed);
                    },
                    8, 2048, 1000});
  return s;
}

std::vector<Shape> Shapes(bool quick) {
  using host::Init;
  using host::OutFormat;
  std::vector<Shape> s;
  auto gemm = [](int m, int k, int n) {
    return Shape{fmt::format("GEMM {}x{}x{}", m, k, n), [=](const Config& c, uint64_t seed) {
                   return MakeGemm(c, m, k, n, Init::kOverwrite, OutFormat::kFp32, false, seed);
                 }};
  };
  if (!quick) s.push_back(gemm(1024, 1024, 1024));
  s.push_back(gemm(1, 4096, 4096));
  s.push_back(gemm(16, 2048, 2048));
  s.push_back(gemm(64, 1024, 1024));
  s.push_back(gemm(256, 256, 256));
  s.push_back(gemm(4096, 256, 64));
  s.push_back(Shape{"dense 512x1024x512 bias relu bf16", [](const Config& c, uint64_t seed) {
                      return MakeDense(c, 512, 1024, 512, true, true, OutFormat::kBf16, seed);
                    }});
  s.push_back(Shape{"MLP 128: 784-1024-1024-10", [](const Config& c, uint64_t seed) {
                      return MakeMlp(c, 128, {784, 1024, 1024, 10}, true, true, seed);
                    }});
  s.push_back(Shape{"conv 56x56x64->64 3x3 pad 1", [](const Config& c, uint64_t seed) {
                      host::ConvShape cs;
                      cs.n = 1, cs.h = 56, cs.w = 56, cs.cin = 64, cs.cout = 64;
                      cs.kh = 3, cs.kw = 3, cs.stride = 1, cs.pad = 1;
                      return MakeConv(c, cs, true, true, host::OutFormat::kFp32, seed);
                    }});
  s.push_back(Shape{"GEMM 8x64x64 (small)", [](const Config& c, uint64_t seed) {
                      return MakeGemm(c, 8, 64, 64, host::Init::kOverwrite, host::OutFormat::kFp32,
                                      false, seed);
                    }});
  return s;
}

// A program of LOADs only: `mib` MiB streamed into the weight buffer, contiguous, no tokens.
double StreamBandwidth(Sim& sim, double mib, bool quiet = false) {
  const Config& cfg = sim.config();
  const auto& m = cfg.machine;
  const uint64_t row_bytes = host::RoundUp32(uint64_t(m.c) * 2);
  const uint64_t per_load = row_bytes * m.wgt_depth;
  const uint32_t loads = uint32_t(std::max(1.0, mib * 1048576.0 / double(per_load)));
  std::vector<isa::Instr> prog;
  isa::Header h;
  h.r = uint16_t(m.r);
  h.c = uint16_t(m.c);
  h.count = loads + 2;
  prog.push_back(h);
  for (uint32_t i = 0; i < loads; ++i) {
    isa::Load l;
    l.buffer = isa::kBufWgt;
    l.hbm_addr = uint64_t(i) * per_load;
    l.hbm_stride = uint32_t(row_bytes);
    l.dst = 0;
    l.rows = uint16_t(m.wgt_depth);
    l.elems = uint16_t(m.c);
    prog.push_back(l);
  }
  prog.push_back(isa::End{});
  const uint64_t addr = uint64_t(loads) * per_load;
  for (size_t i = 0; i < prog.size(); ++i) {
    const isa::Bytes b = isa::Encode(prog[i]);
    sim.WriteHbm(addr + i * isa::kInstrBytes, b.data(), b.size());
  }
  const Result r = sim.Run(addr, uint32_t(prog.size()), {});
  if (r.code != isa::ErrorCode::kOk || r.hbm_violations != 0) {
    throw std::runtime_error(fmt::format("stream program failed: {} at pc {}; {}",
                                         isa::ErrorName(r.code), r.pc, r.violations));
  }
  const double data = double(loads) * double(per_load);
  if (quiet) return data / double(r.perf.cycles);
  fmt::print(
      "  sequential read stream: {:.1f} MiB of LOADs in {} cycles: {:.2f} B/cycle "
      "({:.1f}% of the DMA's {:.0f} B/cycle; program fetch excluded)\n",
      data / 1048576.0, r.perf.cycles, data / double(r.perf.cycles),
      100.0 * data / double(r.perf.cycles) / cfg.PeakBytesPerCycle(), cfg.PeakBytesPerCycle());
  return data / double(r.perf.cycles);
}

#ifndef TPU_BENCH_HIER
// The DMA's sequential read bandwidth on 1, 2, 4 and 8 channels: two rows of 128 columns (a
// weight-buffer row is 256 bytes, eight beats), a stream of LOADs, the program fetch excluded.
template <class V>
void DmaRow(const std::string& name, double mib) {
  const Config cfg = ConfigFromName(name);
  AccelSim<V> sim(cfg);
  const auto t0 = std::chrono::steady_clock::now();
  const double bw = StreamBandwidth(sim, mib, true);
  const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  const double peak = cfg.HbmPeakBytesPerCycle();  // N x 32
  fmt::print("  {:<10} {:>8} {:>10.2f} {:>10.0f} {:>8.1f}% {:>10.1f}\n", name, cfg.channels, bw,
             peak, 100.0 * bw / peak, secs);
  std::fflush(stdout);
}

void DmaTable(double mib) {
  fmt::print("\n== The DMA: sequential read bandwidth ({:.0f} MiB of LOADs, 2x128 arrays) ==\n",
             mib);
  fmt::print("  {:<10} {:>8} {:>10} {:>10} {:>9} {:>10}\n", "config", "channels", "B/cycle",
             "N x 32", "of peak", "seconds");
  DmaRow<Vaccel_2x128_1ch>("2x128_1ch", mib);
  DmaRow<Vaccel_2x128_2ch>("2x128_2ch", mib);
  DmaRow<Vaccel_2x128_4ch>("2x128_4ch", mib);
  DmaRow<Vaccel_2x128_8ch>("2x128_8ch", mib);
}

// A hierarchical engine's configuration: run its variant program (next to this one) with the
// same options, its rows appended to the CSV file. Returns whether every run passed.
bool RunVariant(const std::string& config, const std::vector<std::string>& args) {
  char self[PATH_MAX];
  const ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
  if (n <= 0) throw std::runtime_error("cannot find this program's path (/proc/self/exe)");
  self[n] = 0;
  std::string cmd = "'" + std::string(self) + "-" + config + "' --configs " + config;
  for (const std::string& a : args) {
    std::string q = "'";
    for (char c : a) q += c == '\'' ? std::string("'\\''") : std::string(1, c);
    cmd += " " + q + "'";
  }
  std::fflush(stdout);
  const int rc = std::system(cmd.c_str());
  if (rc != 0) fmt::print("  {}: the variant program failed (status {})\n", config, rc);
  return rc == 0;
}
#endif

// The --table tpu columns for one run: the layer's lower bounds and how close it came.
struct Bounds {
  double compute = 0;   // MACs / (R·C): every MAC slot used
  double mapped = 0;    // M rows per (K-tile, N-tile) pass of the layer's im2col GEMM
  double memory = 0;    // tensor bytes (inputs + outputs + program) / measured stream bandwidth
  double weights = 0;   // weight rows into the array, one per cycle: K-tile rows × N-tiles
  double scalesim = 0;  // SCALE-Sim's weight-stationary formula: (2R + C + M - 2) × folds
  double Lower() const { return std::max({compute, mapped, memory, weights}); }
};

Bounds LayerBounds(const Shape& s, const Config& cfg, const Workload& w, double bw) {
  const int R = cfg.machine.r, C = cfg.machine.c;
  const double ntiles = (s.n + C - 1) / C;
  // The im2col view, whatever the lowering: windows take taps × ⌈Cin/R⌉ passes, which is more
  // when Cin is not a multiple of R (a conv2_x 3×3 layer: 9 against 5).
  const double ktiles = (s.k + R - 1) / R;
  Bounds b;
  b.compute = double(w.Macs()) / (double(R) * C);
  b.mapped = double(s.m) * ktiles * ntiles;
  b.memory = double(w.InputBytes() + w.OutputBytes() + w.ProgramBytes()) / bw;
  b.weights = double(s.k) * ntiles;
  b.scalesim = (2.0 * R + C + s.m - 2) * double((s.k + R - 1) / R) * ntiles;
  return b;
}

template <class V>
bool Bench(const std::string& name, const std::vector<Shape>& shapes, uint64_t seed,
           bench::CsvFile& csv, bool tpu_table = false) {
  const Config cfg = ConfigFromName(name);
  fmt::print("\n== {} ==\n", Describe(cfg));
  bool ok = true;
  double bw = 0;
  {
    AccelSim<V> sim(cfg);
    bw = StreamBandwidth(sim, 8.0);
  }
  std::fflush(stdout);
  const double peak = cfg.PeakMacsPerCycle();
  fmt::print(
      "  roofline: compute peak {:.0f} MACs/cycle; memory bound {:.2f} B/cycle x "
      "intensity\n\n",
      peak, bw);
  if (tpu_table) {
    fmt::print(
        "  bounds in cycles: compute = MACs/(R·C); mapped = M × ⌈K/R⌉ × ⌈N/C⌉ (a convolution's "
        "im2col GEMM);\n  memory = (inputs + outputs + program) / {:.1f} B/cycle; "
        "weights = K × N-tiles (a weight row a cycle); lower = the largest.\n  B/T: HBM bytes "
        "moved per tensor byte; SCALE-Sim: (2R + C + M − 2) × ⌈K/R⌉ × ⌈N/C⌉ (weight "
        "stationary).\n\n",
        bw);
    fmt::print(
        "  {:<32} {:>14} {:>12} {:>5} {:>10} {:>10} {:>10} {:>10} {:>10} {:>10} {:>7} {:>6} "
        "{:>6} {:>6} {:>6} {:>10} {:>5}\n",
        "layer", "MACs", "HBM bytes", "B/T", "cycles", "compute", "mapped", "memory", "weights",
        "lower", "of low", "util", "wstall", "istall", "idle", "SCALE-Sim", "check");
  } else {
    fmt::print(
        "  {:<34} {:>13} {:>12} {:>9} {:>11} {:>9} {:>9} {:>7} {:>7} {:>7} {:>7} {:>7} "
        "{:>6}\n",
        "workload", "MACs", "bytes", "MACs/B", "cycles", "MACs/cyc", "bound", "of bnd", "util",
        "wstall", "istall", "idle", "check");
  }
  uint64_t sim_cycles = 0, sim_macs = 0;
  double sim_seconds = 0;
  for (const Shape& s : shapes) {
    const Workload w = s.make(cfg, seed);
    AccelSim<V> sim(cfg);
    Load(sim, w);
    RunOptions ro;
    ro.max_cycles = 200'000'000;
    const Result r = Run(sim, w, ro);
    isa::Machine golden(cfg.machine);
    const isa::RunResult g = RunGolden(golden, w);
    Report rep;
    if (r.code == isa::ErrorCode::kOk && g.ok()) rep = Compare(sim, golden, w);
    std::string state = EndStateDiff(r, g);
    if (r.code == isa::ErrorCode::kOk && g.ok()) state += OnChipDiff(sim.ReadOnChip(), golden);
    if (!state.empty())
      fmt::print("    {}: end state differs from the golden model's:\n{}", s.name, state);
    const bool pass = r.ok() && g.ok() && rep.pass && state.empty();
    ok &= pass;
    const Perf& p = r.perf;
    const double bytes = double(p.hbm_read_bytes + p.hbm_write_bytes);
    const double intensity = double(p.macs) / bytes;
    const double attained = double(p.macs) / double(p.cycles);
    const double bound = std::min(peak, bw * intensity);
    const bool big = p.macs >= 10'000'000;
    if (tpu_table) {
      const Bounds b = LayerBounds(s, cfg, w, bw);
      const double tensor_bytes = double(w.InputBytes() + w.OutputBytes() + w.ProgramBytes());
      fmt::print(
          "  {:<32} {:>14L} {:>12L} {:>5.2f} {:>10L} {:>10.0f} {:>10.0f} {:>10.0f} {:>10.0f} "
          "{:>10.0f} {:>6.1f}% {:>5.1f}% {:>5.1f}% {:>5.1f}% {:>5.1f}% {:>10.0f} {:>5}{}\n",
          s.name, p.macs, uint64_t(bytes), bytes / tensor_bytes, p.cycles, b.compute, b.mapped,
          b.memory, b.weights, b.Lower(), 100.0 * b.Lower() / double(p.cycles),
          100.0 * attained / peak, 100.0 * double(p.weight_stall) / double(p.cycles),
          100.0 * double(p.input_stall) / double(p.cycles),
          100.0 * double(p.idle) / double(p.cycles), b.scalesim, pass ? "PASS" : "FAIL",
          w.description.find("host im2col") != std::string::npos ? "  (host im2col)" : "");
    } else {
      fmt::print(
          "  {:<34} {:>13L} {:>12L} {:>9.2f} {:>11L} {:>9.1f} {:>9.1f} {:>6.1f}% {:>6.1f}% "
          "{:>6.1f}% {:>6.1f}% {:>6.1f}% {:>6}{}\n",
          s.name, p.macs, uint64_t(bytes), intensity, p.cycles, attained, bound,
          100.0 * attained / bound, 100.0 * attained / peak,
          100.0 * double(p.weight_stall) / double(p.cycles),
          100.0 * double(p.input_stall) / double(p.cycles),
          100.0 * double(p.idle) / double(p.cycles), pass ? "PASS" : "FAIL",
          big ? (attained / bound >= 0.9 ? "" : "  < 90% of bound") : "  (< 1e7 MACs)");
    }
    if (csv.is_open()) {
      // Workload names hold no comma or quote (Shapes() above).
      csv.stream() << fmt::format("{},{},{},{},{:.4f},", name, s.name, peak,
                                  cfg.PeakBytesPerCycle(), bw);
      csv.stream() << fmt::format("{},{},{},{},{:.3f},{:.3f},{:.3f},{:.3f},{:.4f},", p.macs,
                                  p.hbm_read_bytes, p.hbm_write_bytes, p.cycles, attained, bound,
                                  100.0 * attained / bound, 100.0 * attained / peak, intensity);
      csv.stream() << fmt::format("{},{},{},{},{},{},{},{:.3f},{}\n", p.busy, p.weight_stall,
                                  p.input_stall, p.acc_hazard, p.store_stall, p.idle,
                                  p.instructions, r.wall_seconds, pass ? "PASS" : "FAIL");
      csv.stream().flush();
    }
    if (!pass) {
      fmt::print("    {} {} pc {}; golden {}; {}\n{}", s.name, isa::ErrorName(r.code), r.pc,
                 isa::ErrorName(g.code), r.violations, rep.Format());
    }
    std::fflush(stdout);
    sim_cycles += p.cycles;
    sim_macs += p.macs;
    sim_seconds += r.wall_seconds;
  }
  fmt::print(
      "\n  simulation speed ({}, one thread, runs only): {:.1f} k simulated cycles/s, "
      "{:.2f} M MACs/s\n",
      name, double(sim_cycles) / sim_seconds / 1e3, double(sim_macs) / sim_seconds / 1e6);
  return ok;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"tpu_accel_bench: the accelerator end to end, roofline per workload shape"};
  uint64_t seed = 20261122;
  bool quick = false, stack = true;
  app.add_option("--seed", seed, "seed of the random inputs");
  app.add_flag("--quick", quick, "skip the 1024^3 GEMM (about 4 minutes of simulation)");
  auto* stack_opt = app.add_flag("--stack,!--no-stack", stack, "also run the full 8-channel stack");
  std::vector<std::string> configs;
  app.add_option("--configs", configs,
                 "run only these configurations (default: 16x16_1ch, and 16x16_8ch unless "
                 "--no-stack; 128x128_1ch, the TPU's array on one channel, only when named)")
      ->delimiter(',')
      ->check(CLI::IsMember(
          {"dma", "16x16_1ch", "16x16_8ch", "128x128_1ch", "64x64_4ch", "128x128_8ch"}))
      ->excludes(stack_opt);
  std::string table = "sweep";
  app.add_option("--table", table,
                 "the workloads: sweep (a sweep of shapes, the default) or tpu (the TPU-class "
                 "table: GEMV 1x8192x8192, GEMMs 1024^3 and 4096x1024x1024, a dense layer, "
                 "ResNet-50's convolutions at batch 8 and its fc layer, with their lower bounds)")
      ->check(CLI::IsMember({"sweep", "tpu"}));
  std::string only;
  app.add_option("--only", only,
                 "run only the workloads whose name matches this regular expression (ECMAScript, "
                 "anywhere in the name, e.g. 'GEMM (1|16)x')");
  std::string csv_path, csv_append;
  app.add_option("--csv", csv_path, "also write the roofline rows to this CSV file");
  app.add_option("--csv-append", csv_append,
                 "append the rows to this CSV file (how the bench runs its per-engine variants)");
  CLI11_PARSE(app, argc, argv);
  std::setlocale(LC_NUMERIC, "en_US.UTF-8");
  const bool configs_given = !configs.empty();
  if (configs.empty()) {
    configs.push_back("dma");
    configs.push_back("16x16_1ch");
    if (stack) configs.push_back("16x16_8ch");
  }
  auto shapes = table == "tpu" ? TpuShapes() : Shapes(quick);
  if (!only.empty()) {
    std::regex re;
    try {
      re = std::regex(only, std::regex::ECMAScript);
    } catch (const std::regex_error& e) {
      fmt::print(stderr, "tpu_accel_bench: --only: bad regular expression '{}': {}\n", only,
                 e.what());
      return 2;
    }
    std::vector<Shape> kept;
    std::string names;
    for (const Shape& s : shapes) {
      if (std::regex_search(s.name, re)) kept.push_back(s);
      names += (names.empty() ? "" : "; ") + s.name;
    }
    if (kept.empty()) {
      fmt::print(stderr, "tpu_accel_bench: --only '{}' matches no workload ({})\n", only, names);
      return 2;
    }
    shapes = kept;
  }
  // --csv: one row per (configuration, workload); the configuration's roofline (compute peak,
  // measured stream bandwidth) is repeated on each of its rows.
  bench::CsvFile csv;
  if (!csv_append.empty()) {
    try {
      csv.Append(csv_append);
    } catch (const std::exception& e) {
      fmt::print(stderr, "tpu_accel_bench: {}\n", e.what());
      return 2;
    }
  } else if (!csv_path.empty()) {
    try {
      csv.Open(csv_path, "tpu_accel_bench", argc, argv);
    } catch (const std::exception& e) {
      fmt::print(stderr, "tpu_accel_bench: {}\n", e.what());
      return 2;
    }
    csv.stream() << fmt::format("# seed={}\n# quick={}\n# only={}\n", seed, int(quick), only);
    csv.stream()
        << "config,workload,peak_macs_per_cycle,port_bytes_per_cycle,stream_bytes_per_cycle,"
           "macs,read_bytes,write_bytes,cycles,macs_per_cycle,bound,of_bound_pct,util_pct,"
           "macs_per_byte,busy,weight_stall,input_stall,acc_hazard,store_stall,idle,"
           "instructions,seconds,check\n";
  }
  std::string header = fmt::format("tpu_accel_bench --seed {}{}", seed, quick ? " --quick" : "");
  if (table != "sweep") header += " --table " + table;
  if (configs_given) header += fmt::format(" --configs {}", fmt::join(configs, ","));
  if (!only.empty()) header += fmt::format(" --only '{}'", only);
  bool ok = true;
#ifdef TPU_BENCH_HIER
  for (const std::string& c : configs) {
    if (c != TPU_BENCH_HIER) {
      fmt::print(stderr, "tpu_accel_bench-{}: runs only --configs {}\n", TPU_BENCH_HIER,
                 TPU_BENCH_HIER);
      return 2;
    }
    ok &= Bench<TPU_BENCH_HIER_CLASS>(c, shapes, seed, csv, table == "tpu");
  }
  return ok ? 0 : 1;
#else
  fmt::print("{}\n", header);
  std::vector<std::string> pass_on = {"--seed", std::to_string(seed)};
  if (quick) pass_on.push_back("--quick");
  if (table != "sweep") pass_on.insert(pass_on.end(), {"--table", table});
  if (!only.empty()) pass_on.insert(pass_on.end(), {"--only", only});
  if (csv.is_open())
    pass_on.insert(pass_on.end(), {"--csv-append", csv_append.empty() ? csv_path : csv_append});
  for (const std::string& c : configs) {
    if (c == "dma") DmaTable(quick ? 8.0 : 32.0);  // printed only (the CSV is the roofline's)
    if (c == "16x16_1ch") ok &= Bench<Vaccel_16x16_1ch>(c, shapes, seed, csv, table == "tpu");
    if (c == "16x16_8ch") ok &= Bench<Vaccel_16x16_8ch>(c, shapes, seed, csv, table == "tpu");
    if (c == "128x128_1ch" || c == "64x64_4ch" || c == "128x128_8ch") {
      csv.stream().flush();
      ok &= RunVariant(c, pass_on);
    }
  }
#endif
  fmt::print("\n{}\n",
             ok ? "all runs bit-exact against the golden model" : "SOME RUNS FAILED (see above)");
  return ok ? 0 : 1;
}
