// SPDX-License-Identifier: Apache-2.0
#include "tpu/tb/accel_scoreboard.h"

#include <fmt/format.h>

#include <stdexcept>

#include "tpu/numerics.h"

namespace tpu::tb::accel {
namespace {

std::string Value(uint32_t x, int elem_bytes) {
  return elem_bytes == 2 ? num::FormatBf16(uint16_t(x)) : num::FormatFp32(x);
}

}  // namespace

std::string Mismatch::Format() const {
  return fmt::format("{}[{}]: got {}, want {}", tensor, where, Value(got, elem_bytes),
                     Value(want, elem_bytes));
}

uint64_t Report::Elements() const {
  uint64_t n = 0;
  for (const auto& t : tensors) n += t.elements;
  return n;
}

uint64_t Report::Mismatches() const {
  uint64_t n = 0;
  for (const auto& t : tensors) n += t.mismatches;
  return n;
}

std::string Report::Format() const {
  const uint64_t n = Elements(), bad = Mismatches();
  const size_t k = tensors.size();
  if (pass) {
    return fmt::format("PASS: {} of {} elements of {} tensor{} bit-exact against the golden model",
                       n, n, k, k == 1 ? "" : "s");
  }
  std::string s = fmt::format("FAIL: {} of {} elements differ from the golden model", bad, n);
  for (const auto& t : tensors) {
    if (t.mismatches != 0) {
      s += fmt::format("\n  {}: {} of {} elements differ", t.name, t.mismatches, t.elements);
    }
  }
  if (!first.empty())
    s += fmt::format("\n  first {} mismatch{}:", first.size(), first.size() == 1 ? "" : "es");
  for (const auto& m : first) s += "\n    " + m.Format();
  return s;
}

Report CompareData(const Workload& w, const std::vector<std::vector<uint32_t>>& got,
                   const std::vector<std::vector<uint32_t>>& want, size_t max_report) {
  if (got.size() != w.outputs.size() || want.size() != w.outputs.size()) {
    throw std::invalid_argument("CompareData: one data vector per output tensor expected");
  }
  Report r;
  for (size_t i = 0; i < w.outputs.size(); ++i) {
    const Tensor& t = w.outputs[i];
    TensorCheck c;
    c.name = t.name;
    c.elements = t.Elements();
    if (got[i].size() != c.elements || want[i].size() != c.elements) {
      throw std::invalid_argument(
          fmt::format("CompareData: tensor {} needs {} elements", t.name, c.elements));
    }
    for (uint64_t e = 0; e < c.elements; ++e) {
      if (got[i][e] == want[i][e]) continue;
      ++c.mismatches;
      if (r.first.size() < max_report) {
        r.first.push_back({t.name, t.Where(e), e, t.elem_bytes, got[i][e], want[i][e]});
      }
    }
    if (c.mismatches != 0) r.pass = false;
    r.tensors.push_back(c);
  }
  return r;
}

Report Compare(Sim& dut, const isa::Machine& golden, const Workload& w, size_t max_report) {
  std::vector<std::vector<uint32_t>> got, want;
  for (const auto& t : w.outputs) {
    got.push_back(ReadTensor(dut, t));
    want.push_back(ReadTensor(golden, t));
  }
  return CompareData(w, got, want, max_report);
}

std::string EndStateDiff(const Result& dut, const isa::RunResult& golden) {
  std::string out;
  const auto diff = [&out](const char* what, uint64_t got, uint64_t want) {
    if (got != want) out += fmt::format("{}: machine {}, golden model {}\n", what, got, want);
  };
  diff("error code", uint64_t(dut.code), uint64_t(golden.code));
  diff("error pc", dut.pc, golden.pc);
  const uint32_t status = isa::reg::kStatusDone | (golden.ok() ? 0u : isa::reg::kStatusError);
  if (dut.status != status) {
    out += fmt::format("STATUS: machine 0x{:X}, golden model 0x{:X} (busy 1, done 2, error 4)\n",
                       dut.status, status);
  }
  if (!golden.ok() || dut.code != golden.code) return out;
  if (golden.unwritten_bytes_read != 0) {
    out += fmt::format(
        "the program's LOADs read {} bytes of HBM never written (the first at 0x{:X}, by the "
        "LOAD at pc {}): the golden model reads them as 0, a device model as its background, so "
        "results computed from them cannot be compared; write every byte a LOAD reads\n",
        golden.unwritten_bytes_read, golden.first_unwritten, golden.first_unwritten_pc);
  }
  const isa::Counters& k = golden.counters;
  static const char* const kQueues[4] = {"load->compute", "compute->load", "compute->store",
                                         "store->compute"};
  for (size_t q = 0; q < 4; ++q) {
    diff(fmt::format("tokens left in {}", kQueues[q]).c_str(), dut.tokens[q], k.tokens[q]);
  }
  const Perf& p = dut.perf;
  diff("instructions", p.instructions, k.instructions);
  static const char* const kModules[3] = {"load", "compute", "store"};
  for (size_t m = 0; m < 3; ++m) {
    diff(fmt::format("{} module's instructions (END included)", kModules[m]).c_str(),
         p.module_instructions[m], k.per_module[m] + 1);
  }
  diff("useful MACs", p.macs, k.macs);
  if (p.cycles != 0) {  // a clocked back end: its DMA counts beats, its array busy rows
    diff("array busy cycles (rows issued)", p.busy, k.rows);
    // The fetch reads ahead: instructions after END (up to the program's length) may be read
    // and dropped, as many as the fetch had asked for when END arrived.
    const uint64_t junk = 32 * (k.program_length - k.instructions);
    if (p.hbm_read_bytes < k.dma_read_bytes || p.hbm_read_bytes > k.dma_read_bytes + junk) {
      out +=
          fmt::format("DMA bytes read (LOADs and program): machine {}, golden model {}{}\n",
                      p.hbm_read_bytes, k.dma_read_bytes,
                      junk ? fmt::format(" .. {} (with the {} bytes after END the fetch may read)",
                                         k.dma_read_bytes + junk, junk)
                           : "");
    }
    diff("DMA bytes written", p.hbm_write_bytes, k.dma_write_bytes);
    diff("stall classes summed (must equal the cycles)",
         p.busy + p.weight_stall + p.input_stall + p.acc_hazard + p.store_stall + p.idle, p.cycles);
  }
  return out;
}

std::string OnChipDiff(const OnChip& dut, const isa::Machine& golden, size_t max_report) {
  const isa::MachineConfig& m = golden.config();
  std::string out;
  size_t reported = 0;
  // One part: rows x cols elements, compared where `defined` says the golden model's is.
  const auto part = [&](const char* what, const auto& got, int rows, int cols, auto defined,
                        auto want, int hex_digits) {
    if (got.empty()) return;
    if (got.size() != size_t(rows) * size_t(cols)) {
      out += fmt::format("{}: the machine's has {} elements, the golden model's {} x {}\n", what,
                         got.size(), rows, cols);
      return;
    }
    uint64_t bad = 0;
    for (int r = 0; r < rows; ++r) {
      for (int c = 0; c < cols; ++c) {
        if (!defined(r, c)) continue;
        const uint64_t g = got[size_t(r) * cols + c], w = want(r, c);
        if (g == w) continue;
        if (++bad, reported < max_report) {
          ++reported;
          out += fmt::format("{}[row {}, col {}]: machine 0x{:0{}X}, golden model 0x{:0{}X}\n",
                             what, r, c, g, hex_digits, w, hex_digits);
        }
      }
    }
    if (bad > 0) out += fmt::format("{}: {} elements differ\n", what, bad);
  };
  part(
      "activation buffer", dut.act, m.act_depth, m.r,
      [&](int r, int c) { return golden.ActDefined(r, c); },
      [&](int r, int c) { return golden.Act(r, c); }, 4);
  part(
      "weight buffer", dut.wgt, m.wgt_depth, m.c,
      [&](int r, int c) { return golden.WgtDefined(r, c); },
      [&](int r, int c) { return golden.Wgt(r, c); }, 4);
  part(
      "accumulators", dut.acc, m.acc_depth, m.c,
      [&](int r, int c) { return golden.AccDefined(r, c); },
      [&](int r, int c) { return golden.Acc(r, c); }, 8);
  if (golden.WeightsLoaded()) {
    part(
        "array weights", dut.w, m.r, m.c, [&](int k, int n) { return golden.WDefined(k, n); },
        [&](int r, int c) { return golden.W(r, c); }, 4);
  }
  return out;
}

}  // namespace tpu::tb::accel
