// SPDX-License-Identifier: Apache-2.0
// host::Link: several compiled programs as one (tpu/host.h, "Linking").
#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <limits>
#include <stdexcept>
#include <variant>

#include "tpu/host.h"

namespace tpu::host {
namespace {

[[noreturn]] void Bad(const std::string& msg) {
  throw std::invalid_argument("Link: " + msg);
}

}  // namespace

bool Bindable(const TiledMatrix& a, const TiledMatrix& b) {
  if (a.rows != b.rows || a.cols != b.cols || a.elem_bytes != b.elem_bytes ||
      a.Tiles() != b.Tiles()) {
    return false;
  }
  for (int t = 0; t < a.Tiles(); ++t) {
    if (a.TileCols(t) != b.TileCols(t)) return false;
  }
  return true;
}

bool BindableGrouped(const TiledMatrix& from, const TiledMatrix& to, int group) {
  if (group == 1) return Bindable(from, to);
  if (group < 1 || uint64_t(from.rows) * uint64_t(group) != uint64_t(to.rows) ||
      from.cols != int64_t(to.cols) * group || from.elem_bytes != to.elem_bytes) {
    return false;
  }
  for (int t = 0; t < from.Tiles(); ++t) {
    const int c0 = t * from.tile % to.cols;
    if (c0 % to.tile != 0 || c0 + from.TileCols(t) > to.cols ||
        from.TileCols(t) > to.TileCols(c0 / to.tile)) {
      return false;
    }
  }
  return true;
}

bool Placeable(const TiledMatrix& from, const TiledMatrix& to, int col0) {
  if (from.rows != to.rows || from.elem_bytes != to.elem_bytes || col0 < 0 ||
      col0 + from.cols > to.cols) {
    return false;
  }
  // A tile across to's tile boundaries is stored in parts (STORE's col, version 1.6), each from
  // a multiple of 32 bytes.
  const bool aligned_tiles = (uint64_t(to.tile) * to.elem_bytes) % kAlign == 0;
  for (int t = 0; t < from.Tiles(); ++t) {
    const int c = col0 + t * from.tile, within = c % to.tile;
    if ((uint64_t(within) * to.elem_bytes) % kAlign != 0 ||
        (within + from.TileCols(t) > to.tile && !aligned_tiles)) {
      return false;
    }
  }
  return true;
}

namespace {

std::string Text(const TiledMatrix& m) {
  return fmt::format("{}x{} ({}-byte elements, tiles of {}, pitch {}) at {:#x}", m.rows, m.cols,
                     m.elem_bytes, m.tile, m.Pitch(), m.base);
}

int InstrModule(const isa::Instr& in) {
  const isa::Module m = isa::ModuleOf(in);
  return m == isa::Module::kLoad      ? 0
         : m == isa::Module::kCompute ? 1
         : m == isa::Module::kStore   ? 2
                                      : -1;
}

// Token queues: 0 load→compute, 1 compute→load, 2 compute→store, 3 store→compute.
std::array<int64_t, 4> Balance(const std::vector<isa::Instr>& instrs) {
  std::array<int64_t, 4> q{};
  for (const auto& in : instrs) {
    const int mod = InstrModule(in);
    if (mod < 0) continue;
    const isa::Deps& d = isa::DepsOf(in);
    if (mod == 0) {
      q[0] += d.push_next;
      q[1] -= d.pop_next;
    } else if (mod == 1) {
      q[0] -= d.pop_prev;
      q[1] += d.push_prev;
      q[2] += d.push_next;
      q[3] -= d.pop_next;
    } else {
      q[2] -= d.pop_prev;
      q[3] += d.push_prev;
    }
  }
  return q;
}

}  // namespace

Compiled Link(const isa::MachineConfig& cfg, const std::vector<LinkPart>& parts) {
  if (parts.empty()) Bad("no programs");
  Compiled r;
  r.cfg = cfg;
  uint64_t split_stores = 0;  // STOREs of placed outputs across a tile boundary: the extra parts
  uint64_t data_end = 0;
  for (const auto& p : parts) data_end = std::max(data_end, p.prog.addr);
  // The body, then HEADER and END around it once its length is known.
  std::vector<isa::Instr> body;
  std::vector<size_t> dataless;  // barrier LOADs (and the parts' own): pointed at the HEADER
  for (size_t pi = 0; pi < parts.size(); ++pi) {
    const LinkPart& part = parts[pi];
    const auto& ins = part.prog.instrs;
    if (ins.size() < 2 || !std::holds_alternative<isa::Header>(ins.front()) ||
        !std::holds_alternative<isa::End>(ins.back())) {
      Bad(fmt::format("part {} is not a program (HEADER ... END)", pi));
    }
    if (part.prog.cfg.r != cfg.r || part.prog.cfg.c != cfg.c) {
      Bad(fmt::format("part {} is compiled for a {}x{} array, not {}x{}", pi, part.prog.cfg.r,
                      part.prog.cfg.c, cfg.r, cfg.c));
    }
    const std::vector<isa::Instr> mid(ins.begin() + 1, ins.end() - 1);
    const auto q = Balance(mid);
    for (int k = 0; k < 4; ++k) {
      if (q[size_t(k)] != 0) {
        static const char* kNames[] = {"load→compute", "compute→load", "compute→store",
                                       "store→compute"};
        Bad(fmt::format("part {} leaves {} tokens in its {} queue", pi, q[size_t(k)], kNames[k]));
      }
    }
    for (const auto& b : part.binds) {
      if (!BindableGrouped(b.from, b.to, b.group)) {
        Bad(fmt::format("part {}: input {} bound to output {} of another layout", pi, Text(b.from),
                        Text(b.to)));
      }
    }
    for (const auto& pl : part.places) {
      if (!Placeable(pl.from, pl.to, pl.col0)) {
        Bad(fmt::format("part {}: output {} cannot be placed at column {} of {}", pi, Text(pl.from),
                        pl.col0, Text(pl.to)));
      }
    }
    bool uses_lc = false;
    for (const auto& in : mid) uses_lc = uses_lc || InstrModule(in) == 0 || InstrModule(in) == 1;
    if (pi > 0 && uses_lc) {
      // The barrier (tpu/host.h): the last store-module instruction so far pushes store→compute.
      size_t last = body.size();
      while (last > 0 && InstrModule(body[last - 1]) != 2) --last;
      if (last == 0) Bad(fmt::format("part {} follows parts that store nothing", pi));
      isa::Deps& d = isa::DepsOf(body[last - 1]);
      if (d.push_prev) Bad(fmt::format("part {} ends with a STORE that pushes a token", pi - 1));
      d.push_prev = true;
      bool has_load = false;
      for (const auto& in : mid) has_load = has_load || InstrModule(in) == 0;
      isa::Load bl;
      bl.buffer = isa::kBufAcc;
      bl.rows = 1;
      bl.elems = 1;
      bl.deps.pop_next = true;
      bl.deps.push_prev = has_load;
      dataless.push_back(body.size());
      body.push_back(bl);
      ++r.stats.acc_loads;
      ++r.stats.barriers;
    }
    bool first_load = pi > 0 && uses_lc;
    for (isa::Instr in : mid) {
      const int mod = InstrModule(in);
      if (auto* l = std::get_if<isa::Load>(&in)) {
        if (l->hbm_addr == part.prog.addr && l->buffer == isa::kBufAcc) {
          dataless.push_back(body.size());  // the part's own barrier LOAD
        } else {
          for (const auto& b : part.binds) {
            if (l->hbm_addr < b.from.base || l->hbm_addr >= b.from.base + b.from.Bytes()) continue;
            const uint64_t off = l->hbm_addr - b.from.base, pf = b.from.Pitch();
            // The LOAD reads every step-th row of the input (a strided 1×1 convolution's pixels:
            // step > 1), or one row (step 0: one row, or stride 0).
            const uint64_t step = l->rows > 1 ? l->hbm_stride / pf : 0;
            if (l->rows > 1 && l->hbm_stride % pf != 0) {
              Bad(fmt::format(
                  "part {}: a LOAD reads input {} with stride {}, not a multiple of its pitch", pi,
                  Text(b.from), l->hbm_stride));
            }
            if (b.group > 1) {
              // Row r of tile t is pixel (r, hw) of the value, channels c0 .. of tile tp.
              const uint64_t idx = off / pf;
              const int t = int(idx / uint64_t(b.from.rows)), r = int(idx % uint64_t(b.from.rows));
              const int col = t * b.from.tile, hw = col / b.to.cols, c0 = col % b.to.cols;
              if (off % pf != 0 ||
                  r + (l->rows > 1 ? l->rows - 1 : 0) * step + 1 > uint64_t(b.from.rows)) {
                Bad(fmt::format("part {}: a LOAD reads input {} across its tiles", pi,
                                Text(b.from)));
              }
              l->hbm_addr = b.to.RowAddr(c0 / b.to.tile, r * b.group + hw);
              if (step > 0) l->hbm_stride = uint32_t(step * b.to.Pitch() * uint64_t(b.group));
              break;
            }
            // The same rows and tiles: row i of `from` is row i of `to`, whatever its tile.
            l->hbm_addr = b.to.base + off / pf * b.to.Pitch() + off % pf;
            if (step > 0) l->hbm_stride = uint32_t(step * b.to.Pitch());
            break;
          }
        }
        if (first_load && mod == 0) {
          if (l->deps.pop_next) Bad(fmt::format("part {}'s first LOAD already pops", pi));
          l->deps.pop_next = true;
          first_load = false;
        }
      } else if (auto* s = std::get_if<isa::Store>(&in)) {
        for (const auto& b : part.binds) {
          if (s->hbm_addr >= b.from.base && s->hbm_addr < b.from.base + b.from.Bytes()) {
            Bad(fmt::format("part {} writes its bound input {}", pi, Text(b.from)));
          }
        }
        for (const auto& pl : part.places) {
          if (s->hbm_addr < pl.from.base || s->hbm_addr >= pl.from.base + pl.from.Bytes()) continue;
          // Row r of tile t goes to row r of the tile holding column col0 + t·tile.
          const uint64_t off = s->hbm_addr - pl.from.base, pf = pl.from.Pitch();
          if (off % pf != 0 || (s->rows > 1 && s->hbm_stride != pf)) {
            Bad(fmt::format("part {}: a STORE writes output {} other than row by row", pi,
                            Text(pl.from)));
          }
          const int t = int(off / pf / uint64_t(pl.from.rows));
          const int r = int(off / pf % uint64_t(pl.from.rows));
          if (r + s->rows > pl.from.rows) {
            Bad(fmt::format("part {}: a STORE crosses a tile of output {}", pi, Text(pl.from)));
          }
          if (s->hbm_stride == pf) s->hbm_stride = uint32_t(pl.to.Pitch());
          // Its elements from column c of `to`: in parts, one per tile of `to` they reach (the
          // first pops the STORE's token, the last pushes it; STOREs complete in order).
          const isa::Store whole = *s;
          int c = pl.col0 + t * pl.from.tile, done = 0;
          while (done < whole.elems) {
            const int n = std::min(int(whole.elems) - done, pl.to.tile - c % pl.to.tile);
            isa::Store part = whole;
            part.hbm_addr = pl.to.RowAddr(c / pl.to.tile, r) +
                            uint64_t(c % pl.to.tile) * uint64_t(pl.to.elem_bytes);
            part.col = uint16_t(whole.col + done);
            part.elems = uint16_t(n);
            part.deps.pop_prev = whole.deps.pop_prev && done == 0;
            part.deps.push_prev = whole.deps.push_prev && done + n == whole.elems;
            done += n;
            c += n;
            if (done < whole.elems) {
              body.push_back(part);
              ++split_stores;
            } else {
              *s = part;
            }
          }
          break;
        }
      }
      body.push_back(in);
    }
    const Stats& s = part.prog.stats;
    r.stats.macs += s.macs;
    r.stats.gemms += s.gemms;
    r.stats.loads += s.loads;
    r.stats.acc_loads += s.acc_loads;
    r.stats.barriers += s.barriers;
    r.stats.stores += s.stores;
    r.stats.vector_loads += s.vector_loads;
    r.stats.vops += s.vops;
    r.stats.blocks += s.blocks;
    r.stats.bytes_written += s.bytes_written;
  }
  r.stats.stores += split_stores;
  const uint64_t count = body.size() + 2;
  if (count > std::numeric_limits<uint32_t>::max()) {
    Bad(fmt::format("{} instructions exceed the 32-bit count", count));
  }
  isa::Header h;
  h.r = uint16_t(cfg.r);
  h.c = uint16_t(cfg.c);
  h.count = uint32_t(count);
  r.addr = RoundUp32(data_end);
  r.instrs.reserve(count);
  r.instrs.push_back(h);
  for (size_t i : dataless) std::get<isa::Load>(body[i]).hbm_addr = r.addr;
  r.instrs.insert(r.instrs.end(), body.begin(), body.end());
  r.instrs.push_back(isa::End{});
  r.hbm_end = r.addr + count * isa::kInstrBytes;
  if (r.hbm_end > cfg.hbm_bytes) {
    Bad(fmt::format("the program ({} instructions at {:#x}) reaches {:#x}, beyond HbmBytes = {:#x}",
                    count, r.addr, r.hbm_end, cfg.hbm_bytes));
  }
  return r;
}

}  // namespace tpu::host
