// SPDX-License-Identifier: Apache-2.0
// tpu_hbm_replay: replays a memory trace on the HBM subsystem RTL (full stack, 8 channels = 16
// pseudo-channels, 2.0 Gb/s timing, 32-entry queues) with the device model checking every
// command, the way DRAM simulators replay traces: lines `R 0x<addr>` / `W 0x<addr>` are 64-byte
// requests, replayed in trace order; each cycle the replay offers requests in order until one is
// refused (its port is busy) or 16 were accepted, each to the port its address maps to.
//
//   tpu_hbm_replay --trace FILE [--refresh allbank|perbank]
//   tpu_hbm_replay --gen seq|rand|seq21|rand21|onebank [--requests N] [--seed S] [--write-trace F]
//   tpu_hbm_replay --bench [--requests-scale X]     (the five classes, both refresh modes)
//
// Prints achieved bandwidth as % of peak, average and maximum read latency, row-hit rate, ACT
// and refresh counts, timing violations (must be 0), and the simulation speed. --csv FILE also
// writes the rows to a CSV file (`make report`, scripts/report.py).
#include <fmt/format.h>

#include <CLI/CLI.hpp>
#include <chrono>
#include <cstdint>
#include <ctime>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "Vhbm_stack.h"
#include "Vhbm_stack_pb.h"
#include "bench_util.h"
#include "tpu/tb/hbm_harness.h"
#include "tpu/tb/rng.h"

namespace {

using namespace tpu;
using tb::hbm::AddressMap;
using tb::hbm::AxiTxn;
using Clock = std::chrono::steady_clock;

struct Req {
  bool write;
  uint64_t addr;
};

struct Result {
  std::string name, refresh;
  uint64_t requests = 0, cycles = 0;
  double pct_peak = 0;  // of the stack's peak (one channel's for onebank)
  double avg_lat = 0;
  uint64_t max_lat = 0;
  double hit_rate = 0;
  uint64_t act = 0, refab = 0, refpb = 0, violations = 0;
  double seconds = 0;
  double refused_rd_pct = 0, refused_wr_pct = 0;  // cycles the replay stalled on a read/write
  uint64_t mode_switches = 0;  // read <-> write-drain switches, all pseudo-channels
  double write_mode_pct = 0;   // share of PC-cycles in write-drain mode
};

AddressMap StackMap() {
  return {8, 16, 5, 0};
}

std::vector<Req> Generate(const std::string& cls, uint64_t n, uint64_t seed) {
  const AddressMap m = StackMap();
  tb::Rng rng(seed);
  std::vector<Req> v;
  v.reserve(n);
  const uint64_t gib = uint64_t{1} << 30;
  for (uint64_t i = 0; i < n; ++i) {
    Req r{false, 0};
    if (cls == "seq" || cls == "seq21") {
      r.addr = (i * 64) % (uint64_t{64} << 20);
      r.write = cls == "seq21" && i % 3 == 2;
    } else if (cls == "rand" || cls == "rand21") {
      r.addr = (rng.Next() % gib) & ~uint64_t{63};
      r.write = cls == "rand21" && i % 3 == 2;
    } else if (cls == "onebank") {
      // A new row of bank 0 of port 0 every request.
      r.addr = m.Global(0, m.Encode(0, static_cast<uint32_t>(i % (1u << m.row_bits)), 0));
    } else {
      throw CLI::ValidationError(
          "--gen", "unknown traffic class '" + cls + "' (seq, rand, seq21, rand21, onebank)");
    }
    v.push_back(r);
  }
  return v;
}

std::vector<Req> ReadTrace(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw std::runtime_error(fmt::format("cannot open trace '{}'", path));
  std::vector<Req> v;
  std::string line;
  uint64_t no = 0;
  const uint64_t cap = StackMap().total_bytes();
  while (std::getline(in, line)) {
    ++no;
    if (line.empty() || line[0] == '#') continue;
    std::istringstream ls(line);
    std::string op, addr;
    if (!(ls >> op >> addr) || (op != "R" && op != "W")) {
      throw std::runtime_error(
          fmt::format("{}:{}: expected `R 0x<addr>` or `W 0x<addr>`, got "
                      "'{}'",
                      path, no, line));
    }
    uint64_t a = 0;
    try {
      size_t used = 0;
      a = std::stoull(addr, &used, 0);
      if (used != addr.size()) throw std::invalid_argument("trailing characters");
    } catch (const std::exception&) {
      throw std::runtime_error(fmt::format("{}:{}: bad address '{}'", path, no, addr));
    }
    if (a >= cap) {
      throw std::runtime_error(
          fmt::format("{}:{}: address {:#x} beyond the stack's {} GiB", path, no, a, cap >> 30));
    }
    v.push_back({op == "W", a & ~uint64_t{63}});
  }
  return v;
}

template <class V>
Result Replay(const std::vector<Req>& reqs, const std::string& name, const std::string& refresh,
              bool one_channel_peak) {
  using H = tb::hbm::HbmHarness<V>;
  typename H::Options o;
  o.map = StackMap();
  o.timing = hbm::Timing::Preset2000();
  o.max_cycles = uint64_t{1} << 40;
  H h(fmt::format("hbm stack ({} refresh)", refresh), o);
  const AddressMap& m = o.map;
  const std::vector<uint8_t> data(64, 0x5A);
  const auto t0 = Clock::now();
  size_t next = 0;
  uint64_t last_progress = 0;
  uint64_t last_mode = 0, switches = 0, wmode_cycles = 0, refused_rd = 0, refused_wr = 0;
  while (next < reqs.size()) {
    int accepted = 0;
    while (next < reqs.size() && accepted < 16) {
      const Req& r = reqs[next];
      const int port = m.Port(r.addr);
      if (r.write ? !h.CanAcceptWrite(port) : !h.CanAcceptRead(port)) {
        ++(r.write ? refused_wr : refused_rd);
        break;
      }
      auto t = std::make_unique<AxiTxn>();
      t->write = r.write;
      t->port = port;
      t->addr = m.Local(r.addr);
      t->len = 1;
      if (r.write) {
        t->data = data;
        t->strb = {~0u, ~0u};
      }
      h.Submit(std::move(t));
      ++next;
      ++accepted;
    }
    if (accepted > 0) last_progress = h.cycle();
    {
      const uint64_t mode = tb::GetBits(h.dut().wr_mode_o, 0, m.ports());
      switches += static_cast<uint64_t>(__builtin_popcountll(mode ^ last_mode));
      wmode_cycles += static_cast<uint64_t>(__builtin_popcountll(mode));
      last_mode = mode;
    }
    if (h.cycle() - last_progress > 100'000) {
      throw tb::WatchdogError(fmt::format("replay stuck at request {}: {}", next, h.StuckReport()));
    }
    h.Step();
  }
  h.Quiesce();
  const uint64_t cycles = h.cycle() - 64;  // Quiesce's settling cycles moved nothing
  Result r;
  r.name = name;
  r.refresh = refresh;
  r.requests = reqs.size();
  r.cycles = cycles;
  const double peak = (one_channel_peak ? 1 : m.channels) * 32.0;
  r.pct_peak =
      100.0 * 64.0 * static_cast<double>(reqs.size()) / (peak * static_cast<double>(cycles));
  uint64_t reads = 0, lat = 0;
  for (int p = 0; p < m.ports(); ++p) {
    reads += h.stats(p).reads;
    lat += h.stats(p).read_latency_sum;
    r.max_lat = std::max(r.max_lat, h.stats(p).read_latency_max);
  }
  r.avg_lat = reads ? static_cast<double>(lat) / static_cast<double>(reads) : 0;
  uint64_t cols = 0;
  for (int c = 0; c < m.channels; ++c) {
    for (int pc = 0; pc < 2; ++pc) {
      const auto& st = h.device(c).stats(pc);
      r.act += st.act;
      r.refab += st.refab;
      r.refpb += st.refpb;
      cols += st.rd + st.wr;
    }
  }
  // A 64-byte request is two bursts of one row: it hit if it needed no ACT. (A request can need
  // two when its row is closed between its bursts, so ACTs can exceed requests: then 0%.)
  const double served = static_cast<double>(cols) / 2.0;
  r.hit_rate = served > 0 ? std::max(0.0, 100.0 * (1.0 - static_cast<double>(r.act) / served)) : 0;
  r.mode_switches = switches;
  r.refused_rd_pct = 100.0 * static_cast<double>(refused_rd) / static_cast<double>(cycles);
  r.refused_wr_pct = 100.0 * static_cast<double>(refused_wr) / static_cast<double>(cycles);
  r.write_mode_pct =
      100.0 * static_cast<double>(wmode_cycles) / (static_cast<double>(cycles) * m.ports());
  r.violations = h.ViolationCount();
  if (r.violations) fmt::print("{}", h.Violations());
  r.seconds = std::chrono::duration<double>(Clock::now() - t0).count();
  return r;
}

Result Run(const std::vector<Req>& reqs, const std::string& name, const std::string& refresh) {
  const bool one = name == "onebank";
  if (refresh == "perbank") return Replay<Vhbm_stack_pb>(reqs, name, refresh, one);
  return Replay<Vhbm_stack>(reqs, name, refresh, one);
}

void PrintHeader() {
  fmt::print(
      "| traffic | refresh | requests | cycles | bandwidth | avg read lat | max read lat | "
      "row hits | ACTs | REFab | REFpb | mode switches | write mode | refused R / W | violations | "
      "sim speed |\n");
  fmt::print("|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n");
}
void PrintRow(const Result& r) {
  fmt::print(
      "| {} | {} | {} | {} | {:.1f}%{} | {:.1f} | {} | {:.1f}% | {} | {} | {} | {} | "
      "{:.1f}% | {:.0f}% / {:.0f}% | {} | {:.0f} cycles/s |\n",
      r.name, r.refresh, r.requests, r.cycles, r.pct_peak, r.name == "onebank" ? " of 1 ch" : "",
      r.avg_lat, r.max_lat, r.hit_rate, r.act, r.refab, r.refpb, r.mode_switches, r.write_mode_pct,
      r.refused_rd_pct, r.refused_wr_pct, r.violations, static_cast<double>(r.cycles) / r.seconds);
  std::fflush(stdout);
}

// --csv: the rows of the table, with the run's metadata in '#' lines as key=value.
class Csv {
 public:
  void Open(const std::string& path, int argc, char** argv) {
    f_.Open(path, "tpu_hbm_replay", argc, argv);
  }
  void Meta(const std::string& key, const std::string& value) { f_.Meta(key, value); }
  void Header() {
    f_.Line(
        "traffic,refresh,requests,cycles,pct_peak,peak_channels,avg_read_latency,"
        "max_read_latency,row_hit_pct,act,refab,refpb,mode_switches,write_mode_pct,"
        "refused_rd_pct,refused_wr_pct,violations,seconds");
  }
  void Row(const Result& r) {
    // A trace file's name becomes the traffic column: keep the CSV's columns intact.
    f_.Line(fmt::format(
        "{},{},{},{},{:.3f},{},{:.2f},{},{:.2f},{},{},{},{},{:.2f},{:.2f},{:.2f},{},{:.3f}",
        bench::CsvField(r.name), r.refresh, r.requests, r.cycles, r.pct_peak,
        r.name == "onebank" ? 1 : 8, r.avg_lat, r.max_lat, r.hit_rate, r.act, r.refab, r.refpb,
        r.mode_switches, r.write_mode_pct, r.refused_rd_pct, r.refused_wr_pct, r.violations,
        r.seconds));
  }

 private:
  bench::CsvFile f_;
};

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"Replays a 64-byte-request memory trace on the HBM subsystem RTL (full stack)"};
  std::string trace, gen, write_trace, refresh = "allbank";
  uint64_t requests = 0;
  uint64_t seed = 0;
  bool bench = false;
  double scale = 1.0;
  app.add_option("--trace", trace, "trace file: lines `R 0x<addr>` or `W 0x<addr>`")
      ->check(CLI::ExistingFile);
  app.add_option("--gen", gen, "generate a class: seq, rand, seq21, rand21, onebank");
  app.add_option("--requests", requests, "requests to generate (default: the class's size)");
  app.add_option("--seed", seed, "seed of the random classes (default: fresh, printed)");
  app.add_option("--write-trace", write_trace, "also write the generated trace to this file");
  app.add_option("--refresh", refresh, "allbank (REFab) or perbank (REFpb)")
      ->check(CLI::IsMember({"allbank", "perbank"}));
  app.add_flag("--bench", bench, "the five classes with both refresh modes (make bench)");
  app.add_option("--requests-scale", scale, "scale the classes' sizes (--bench)")
      ->check(CLI::PositiveNumber);
  std::string csv_path;
  app.add_option("--csv", csv_path, "also write the table's rows to this CSV file");
  CLI11_PARSE(app, argc, argv);
  try {
    if (seed == 0) seed = tb::ChooseSeed();
    Csv csv;
    if (!csv_path.empty()) {
      csv.Open(csv_path, argc, argv);
      csv.Meta("seed", std::to_string(seed));
      csv.Meta("requests_scale", fmt::format("{}", scale));
    }
    auto size_of = [&](const std::string& cls) -> uint64_t {
      uint64_t n = cls == "seq" || cls == "seq21" ? (uint64_t{64} << 20) / 64
                   : cls == "onebank"             ? 20'000
                                                  : uint64_t{1} << 20;
      return std::max<uint64_t>(1000, static_cast<uint64_t>(static_cast<double>(n) * scale));
    };
    if (bench) {
      fmt::print(
          "HBM2 full stack (8 channels, 16 pseudo-channels), 2.0 Gb/s preset, 16 + 16 queue "
          "entries "
          "per PC (32 + 32 per channel), FR-FCFS, adaptive page, address map RoCoBaBg; seed {}\n",
          seed);
      PrintHeader();
      csv.Header();
      uint64_t violations = 0;  // any: the bench fails, so make bench-hbm stamps no table
      for (const char* cls : {"seq", "rand", "seq21", "rand21", "onebank"}) {
        const auto reqs = Generate(cls, size_of(cls), seed);
        for (const char* mode : {"allbank", "perbank"}) {
          const Result r = Run(reqs, cls, mode);
          PrintRow(r);
          csv.Row(r);
          violations += r.violations;
        }
      }
      if (violations) fmt::print(stderr, "tpu_hbm_replay: {} timing violations\n", violations);
      return violations == 0 ? 0 : 1;
    }
    std::vector<Req> reqs;
    std::string name;
    if (!trace.empty()) {
      reqs = ReadTrace(trace);
      name = trace;
    } else if (!gen.empty()) {
      reqs = Generate(gen, requests ? requests : size_of(gen), seed);
      name = gen;
      fmt::print("seed {}\n", seed);
    } else {
      throw CLI::ValidationError("give --trace FILE, --gen CLASS or --bench");
    }
    if (reqs.empty()) throw std::runtime_error("the trace has no requests");
    if (!write_trace.empty()) {
      std::ofstream out(write_trace);
      for (const Req& r : reqs) out << (r.write ? "W " : "R ") << fmt::format("{:#x}\n", r.addr);
    }
    PrintHeader();
    csv.Header();
    const Result r = Run(reqs, name, refresh);
    PrintRow(r);
    csv.Row(r);
    return r.violations == 0 ? 0 : 1;
  } catch (const std::exception& e) {
    fmt::print(stderr, "tpu_hbm_replay: {}\n", e.what());
    return 2;
  }
}
