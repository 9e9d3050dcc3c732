// SPDX-License-Identifier: Apache-2.0
#include "tpu/isa.h"

#include <fmt/format.h>

#include <cstring>
#include <type_traits>

namespace tpu::isa {
namespace {

template <class... Ts>
struct Overloaded : Ts... {
  using Ts::operator()...;
};
template <class... Ts>
Overloaded(Ts...) -> Overloaded<Ts...>;

// Little-endian field access.
uint64_t Get(const uint8_t* b, int off, int len) {
  uint64_t v = 0;
  for (int i = len - 1; i >= 0; --i) v = (v << 8) | b[off + i];
  return v;
}
void Put(uint8_t* b, int off, int len, uint64_t v) {
  for (int i = 0; i < len; ++i) b[off + i] = uint8_t(v >> (8 * i));
}

// The bytes each opcode names (beyond bytes 0 and 1); the rest must be zero.
struct Span {
  int off, len;
};

bool Reserved(const uint8_t* b, std::initializer_list<Span> named, std::string* msg) {
  bool used[kInstrBytes] = {};
  used[0] = used[1] = true;
  for (const auto& s : named) {
    for (int i = 0; i < s.len; ++i) used[s.off + i] = true;
  }
  for (int i = 0; i < kInstrBytes; ++i) {
    if (!used[i] && b[i] != 0) {
      *msg = fmt::format("reserved byte {} is 0x{:02X}, must be 0", i, b[i]);
      return true;
    }
  }
  return false;
}

CheckResult Field(const char* op, const char* field, uint64_t value, const std::string& rule) {
  return {ErrorCode::kField, fmt::format("{} {}={} {}", op, field, value, rule)};
}

// Checks alignment of the address and stride and that rows × bytes_per_row with the stride stay
// below hbm_bytes.
CheckResult CheckHbm(const char* op, uint64_t addr, uint32_t stride, uint16_t rows,
                     uint64_t row_bytes, uint64_t hbm_bytes) {
  if (addr % kHbmAlign != 0) {
    return {ErrorCode::kHbm,
            fmt::format("{} hbm_addr=0x{:X} is not a multiple of {}", op, addr, kHbmAlign)};
  }
  if (stride % kHbmAlign != 0) {
    return {ErrorCode::kHbm,
            fmt::format("{} hbm_stride={} is not a multiple of {}", op, stride, kHbmAlign)};
  }
  const uint64_t span = uint64_t(rows - 1) * stride + row_bytes;  // < 2^49, no overflow
  if (addr >= hbm_bytes || span > hbm_bytes - addr) {
    return {ErrorCode::kHbm,
            fmt::format("{} hbm_addr=0x{:X} rows={} hbm_stride={}: bytes up to 0x{:X} exceed "
                        "HbmBytes=0x{:X}",
                        op, addr, rows, stride, addr + span, hbm_bytes)};
  }
  return {};
}

// The window rules (ERR_WINDOW), in the order of docs/isa.md.
// hold or add (version 1.5) on a buffer other than the accumulators.
CheckResult HeldOrAddedOutsideAcc(const Load& l) {
  return Field(
      "LOAD", "buffer", l.buffer,
      fmt::format("cannot be {} (only the accumulators, buffer 2)", l.hold ? "held" : "added to"));
}

// LOAD into the vector memory (version 1.4): the rules of docs/isa.md in their order.
CheckResult CheckVmemLoad(const Load& l, const MachineConfig& cfg) {
  if (l.transpose) return Field("LOAD", "buffer", l.buffer, "cannot be transposed into (vmem)");
  if (l.hold || l.add) return HeldOrAddedOutsideAcc(l);
  if (l.format > kFmtBf16) return Field("LOAD", "format", l.format, "is not 0 or 1");
  if (l.rows < 1) return Field("LOAD", "rows", l.rows, "must be at least 1");
  if (l.elems < 1 || l.elems > cfg.c) {
    return Field("LOAD", "elems", l.elems, fmt::format("not in 1..{} (C for buffer 3)", cfg.c));
  }
  if (int(l.dst) + l.rows > cfg.vmem_depth) {
    return Field("LOAD", "dst", l.dst,
                 fmt::format("+ rows={} = {} exceeds VmemDepth={}", l.rows, int(l.dst) + l.rows,
                             cfg.vmem_depth));
  }
  const uint64_t size = l.format == kFmtBf16 ? 2 : 4;
  return CheckHbm("LOAD", l.hbm_addr, l.hbm_stride, l.rows, l.elems * size, cfg.hbm_bytes);
}

// The last row an operand of a VOP addresses: base + (m - 1)·outer + (n - 1)·inner.
uint64_t LastRow(uint16_t base, uint16_t inner, uint16_t outer, const Vop& v) {
  return uint64_t(base) + uint64_t(v.m - 1) * outer + uint64_t(v.n - 1) * inner;
}

CheckResult CheckVop(const Vop& v, const MachineConfig& cfg) {
  if (v.op >= kNumVectorOps) {
    return Field("VOP", "op", v.op, fmt::format("is not 0..{}", kNumVectorOps - 1));
  }
  if (v.b_vmem && v.b_scalar) return Field("VOP", "spaces", 3, "has b_vmem with b_scalar");
  if (v.n < 1) return Field("VOP", "n", v.n, "must be at least 1");
  if (v.m < 1) return Field("VOP", "m", v.m, "must be at least 1");
  const auto range = [&](const char* name, uint16_t base, uint16_t inner, uint16_t outer,
                         bool vmem) -> CheckResult {
    const uint64_t last = LastRow(base, inner, outer, v);
    const int depth = vmem ? cfg.vmem_depth : cfg.acc_depth;
    if (last >= uint64_t(depth)) {
      return Field("VOP", name, base,
                   fmt::format("reaches row {} (n={} m={}), past {}={}", last, v.n, v.m,
                               vmem ? "VmemDepth" : "AccDepth", depth));
    }
    return {};
  };
  if (CheckResult r = range("a", v.a, v.asi, v.aso, v.a_vmem); !r.ok()) return r;
  if (kVectorOps[v.op].reads_b && !v.b_scalar) {
    if (CheckResult r = range("b", v.b, v.bsi, v.bso, v.b_vmem); !r.ok()) return r;
  }
  return range("d", v.d, v.dsi, v.dso, true);
}

CheckResult CheckWindow(const Gemm& g, const MachineConfig& cfg) {
  const Window& w = g.win;
  auto bad = [](const char* field, uint64_t v, const std::string& rule) {
    return CheckResult{ErrorCode::kWindow, fmt::format("GEMM window {}={} {}", field, v, rule)};
  };
  if (w.stride < 1) return bad("stride", w.stride, "must be at least 1");
  if (w.width < 1) return bad("width", w.width, "must be at least 1");
  if (w.out_width < 1) return bad("out_width", w.out_width, "must be at least 1");
  if (w.band_rows < 1) return bad("band_rows", w.band_rows, "must be at least 1");
  if (w.out_col >= w.out_width) {
    return bad("out_col", w.out_col, fmt::format("is not below out_width={}", w.out_width));
  }
  const uint64_t end = g.act + uint64_t(w.band_rows) * w.width;
  if (end > uint64_t(cfg.act_depth)) {
    return bad("band_rows", w.band_rows,
               fmt::format("x width={} from act={} ends at row {}, beyond ActDepth={}", w.width,
                           g.act, end, cfg.act_depth));
  }
  return {};
}

}  // namespace

const char* ErrorName(ErrorCode e) {
  const auto i = static_cast<size_t>(e);
  return i < kErrorNames.size() ? kErrorNames[i] : "ERR_?";
}

const char* ModuleName(Module m) {
  switch (m) {
    case Module::kLoad: return "load";
    case Module::kCompute: return "compute";
    case Module::kStore: return "store";
    case Module::kAll: return "all";
    case Module::kCommand: return "command";
  }
  return "?";
}

uint8_t Deps::Bits() const {
  return uint8_t((pop_prev ? 1 : 0) | (pop_next ? 2 : 0) | (push_prev ? 4 : 0) |
                 (push_next ? 8 : 0));
}

Deps Deps::FromBits(uint8_t b) {
  Deps d;
  d.pop_prev = (b & 1) != 0;
  d.pop_next = (b & 2) != 0;
  d.push_prev = (b & 4) != 0;
  d.push_next = (b & 8) != 0;
  return d;
}

bool Header::operator==(const Header& o) const {
  return deps == o.deps && magic == o.magic && major == o.major && minor == o.minor && r == o.r &&
         c == o.c && count == o.count;
}
bool Load::operator==(const Load& o) const {
  return deps == o.deps && buffer == o.buffer && hbm_addr == o.hbm_addr &&
         hbm_stride == o.hbm_stride && dst == o.dst && rows == o.rows && elems == o.elems &&
         transpose == o.transpose && format == o.format && hold == o.hold && add == o.add;
}
bool Window::operator==(const Window& o) const {
  return stride == o.stride && dh == o.dh && dw == o.dw && band_row == o.band_row &&
         band_rows == o.band_rows && width == o.width && out_width == o.out_width &&
         out_row == o.out_row && out_col == o.out_col;
}
int64_t Window::RowOf(int m) const {
  const int64_t p = int64_t(out_col) + m;
  const int64_t oh = out_row + p / out_width, ow = p % out_width;
  const int64_t r = oh * stride + dh - band_row, iw = ow * stride + dw;
  if (r < 0 || r >= band_rows || iw < 0 || iw >= width) return -1;
  return r * width + iw;
}
bool Gemm::operator==(const Gemm& o) const {
  return deps == o.deps && act == o.act && wgt == o.wgt && acc == o.acc && rows == o.rows &&
         kv == o.kv && nv == o.nv && accumulate == o.accumulate && load_weights == o.load_weights &&
         window == o.window && win == o.win && broadcast == o.broadcast && init_row == o.init_row;
}
bool Store::operator==(const Store& o) const {
  return deps == o.deps && format == o.format && activation == o.activation &&
         hbm_addr == o.hbm_addr && hbm_stride == o.hbm_stride && acc == o.acc && rows == o.rows &&
         elems == o.elems && source == o.source && col == o.col;
}
bool Vop::operator==(const Vop& o) const {
  return deps == o.deps && op == o.op && a_vmem == o.a_vmem && b_vmem == o.b_vmem &&
         b_scalar == o.b_scalar && a == o.a && b == o.b && d == o.d && n == o.n && m == o.m &&
         asi == o.asi && aso == o.aso && bsi == o.bsi && bso == o.bso && dsi == o.dsi &&
         dso == o.dso && scalar == o.scalar;
}

Opcode OpcodeOf(const Instr& in) {
  return std::visit(
      Overloaded{
          [](const Header&) { return Opcode::kHeader; }, [](const Load&) { return Opcode::kLoad; },
          [](const Gemm&) { return Opcode::kGemm; }, [](const Store&) { return Opcode::kStore; },
          [](const End&) { return Opcode::kEnd; }, [](const Vop&) { return Opcode::kVop; }},
      in);
}

const Deps& DepsOf(const Instr& in) {
  return std::visit([](const auto& i) -> const Deps& { return i.deps; }, in);
}
Deps& DepsOf(Instr& in) {
  return std::visit([](auto& i) -> Deps& { return i.deps; }, in);
}

namespace {
Module LoadModule(uint8_t buffer, bool vector_unit) {
  if (buffer == kBufAcc) return Module::kCompute;
  return buffer == kBufVmem && vector_unit ? Module::kStore : Module::kLoad;
}
}  // namespace

Module ModuleOf(const Instr& in, bool vector_unit) {
  return std::visit(Overloaded{[](const Header&) { return Module::kCommand; },
                               [&](const Load& l) { return LoadModule(l.buffer, vector_unit); },
                               [](const Gemm&) { return Module::kCompute; },
                               [](const Store&) { return Module::kStore; },
                               [](const End&) { return Module::kAll; },
                               [](const Vop&) { return Module::kStore; }},
                    in);
}

std::optional<Module> ModuleOfBytes(const uint8_t* in, bool vector_unit) {
  switch (Opcode(in[kOpcodeByte])) {
    case Opcode::kHeader: return Module::kCommand;
    case Opcode::kLoad: return LoadModule(in[kLoadBufferByte], vector_unit);
    case Opcode::kGemm: return Module::kCompute;
    case Opcode::kStore: return Module::kStore;
    case Opcode::kEnd: return Module::kAll;
    case Opcode::kVop:
      if (vector_unit) return Module::kStore;
      break;
  }
  return std::nullopt;
}

Bytes Encode(const Instr& in) {
  Bytes b{};
  b[kOpcodeByte] = uint8_t(OpcodeOf(in));
  b[kFlagsByte] = DepsOf(in).Bits();
  uint8_t* p = b.data();
  std::visit(Overloaded{[&](const Header& h) {
                          for (int i = 0; i < 4; ++i) p[kHeaderMagicByte + i] = h.magic[i];
                          Put(p, kHeaderMajorByte, 2, h.major);
                          Put(p, kHeaderMinorByte, 2, h.minor);
                          Put(p, kHeaderRowsByte, 2, h.r);
                          Put(p, kHeaderColsByte, 2, h.c);
                          Put(p, kHeaderCountByte, 4, h.count);
                        },
                        [&](const Load& l) {
                          p[kLoadBufferByte] = l.buffer;
                          p[kLoadModeByte] = uint8_t((l.transpose ? 1 << kLoadTransposeBit : 0) |
                                                     (l.hold ? 1 << kLoadHoldBit : 0) |
                                                     (l.add ? 1 << kLoadAddBit : 0));
                          Put(p, kLoadHbmAddrByte, 8, l.hbm_addr);
                          Put(p, kLoadHbmStrideByte, 4, l.hbm_stride);
                          Put(p, kLoadDstByte, 2, l.dst);
                          Put(p, kLoadRowsByte, 2, l.rows);
                          Put(p, kLoadElemsByte, 2, l.elems);
                          p[kLoadFormatByte] = l.format;
                        },
                        [&](const Gemm& g) {
                          Put(p, kGemmActByte, 2, g.act);
                          Put(p, kGemmWgtByte, 2, g.wgt);
                          Put(p, kGemmAccByte, 2, g.acc);
                          Put(p, kGemmRowsByte, 2, g.rows);
                          Put(p, kGemmKvByte, 2, g.kv);
                          Put(p, kGemmNvByte, 2, g.nv);
                          p[kGemmModeByte] =
                              uint8_t((g.accumulate ? 1 << kGemmAccumulateBit : 0) |
                                      (g.load_weights ? 1 << kGemmLoadWeightsBit : 0) |
                                      (g.window ? 1 << kGemmWindowBit : 0) |
                                      (g.broadcast ? 1 << kGemmBroadcastBit : 0));
                          Put(p, kGemmInitRowByte, 2, g.init_row);
                          p[kGemmStrideByte] = g.win.stride;
                          p[kGemmDhByte] = uint8_t(g.win.dh);
                          p[kGemmDwByte] = uint8_t(g.win.dw);
                          Put(p, kGemmBandRowByte, 2, g.win.band_row);
                          Put(p, kGemmBandRowsByte, 2, g.win.band_rows);
                          Put(p, kGemmWidthByte, 2, g.win.width);
                          Put(p, kGemmOutWidthByte, 2, g.win.out_width);
                          Put(p, kGemmOutRowByte, 2, g.win.out_row);
                          Put(p, kGemmOutColByte, 2, g.win.out_col);
                        },
                        [&](const Store& s) {
                          p[kStoreFormatByte] = s.format;
                          p[kStoreActivationByte] = s.activation;
                          Put(p, kStoreHbmAddrByte, 8, s.hbm_addr);
                          Put(p, kStoreHbmStrideByte, 4, s.hbm_stride);
                          Put(p, kStoreAccByte, 2, s.acc);
                          Put(p, kStoreRowsByte, 2, s.rows);
                          Put(p, kStoreElemsByte, 2, s.elems);
                          p[kStoreSourceByte] = s.source;
                          Put(p, kStoreColByte, 2, s.col);
                        },
                        [&](const End&) {},
                        [&](const Vop& v) {
                          p[kVopOpByte] = v.op;
                          p[kVopSpacesByte] = uint8_t((v.a_vmem ? 1 << kVopAVmemBit : 0) |
                                                      (v.b_vmem ? 1 << kVopBVmemBit : 0) |
                                                      (v.b_scalar ? 1 << kVopBScalarBit : 0));
                          Put(p, kVopAByte, 2, v.a);
                          Put(p, kVopBByte, 2, v.b);
                          Put(p, kVopDByte, 2, v.d);
                          Put(p, kVopNByte, 2, v.n);
                          Put(p, kVopMByte, 2, v.m);
                          Put(p, kVopAsiByte, 2, v.asi);
                          Put(p, kVopAsoByte, 2, v.aso);
                          Put(p, kVopBsiByte, 2, v.bsi);
                          Put(p, kVopBsoByte, 2, v.bso);
                          Put(p, kVopDsiByte, 2, v.dsi);
                          Put(p, kVopDsoByte, 2, v.dso);
                          Put(p, kVopScalarByte, 4, v.scalar);
                        }},
             in);
  return b;
}

DecodeResult Decode(const uint8_t* b, bool vector_unit) {
  DecodeResult r;
  auto fail = [&](ErrorCode code, std::string msg) {
    r.code = code;
    r.message = std::move(msg);
    return r;
  };
  const uint8_t op = b[kOpcodeByte];
  const char* name = nullptr;
  switch (op) {
    case uint8_t(Opcode::kHeader): name = "HEADER"; break;
    case uint8_t(Opcode::kLoad): name = "LOAD"; break;
    case uint8_t(Opcode::kGemm): name = "GEMM"; break;
    case uint8_t(Opcode::kStore): name = "STORE"; break;
    case uint8_t(Opcode::kEnd): name = "END"; break;
    case uint8_t(Opcode::kVop):
      if (vector_unit) {
        name = "VOP";
        break;
      }
      return fail(
          ErrorCode::kOpcode,
          fmt::format("opcode=0x{:02X} (VOP) is unknown: this machine has no vector unit", op));
    default: return fail(ErrorCode::kOpcode, fmt::format("opcode=0x{:02X} is unknown", op));
  }
  std::string msg;
  if (b[kFlagsByte] & 0xF0) {
    return fail(ErrorCode::kReserved,
                fmt::format("{} reserved dependency-flag bits 4-7 set (flags=0x{:02X})", name,
                            b[kFlagsByte]));
  }
  const Deps deps = Deps::FromBits(b[kFlagsByte]);
  switch (Opcode(op)) {
    case Opcode::kHeader: {
      if (Reserved(b, {{4, 16}}, &msg)) break;
      Header h;
      h.deps = deps;
      for (int i = 0; i < 4; ++i) h.magic[i] = b[kHeaderMagicByte + i];
      h.major = uint16_t(Get(b, kHeaderMajorByte, 2));
      h.minor = uint16_t(Get(b, kHeaderMinorByte, 2));
      h.r = uint16_t(Get(b, kHeaderRowsByte, 2));
      h.c = uint16_t(Get(b, kHeaderColsByte, 2));
      h.count = uint32_t(Get(b, kHeaderCountByte, 4));
      r.instr = h;
      break;
    }
    case Opcode::kLoad: {
      // Byte 6 (format) exists only for the vector memory (buffer 3) of a vector unit.
      const bool vmem = vector_unit && b[kLoadBufferByte] == kBufVmem;
      if (Reserved(b, {{4, vmem ? 3 : 2}, {8, 18}}, &msg)) break;
      if (b[kLoadModeByte] &
          ~((1 << kLoadTransposeBit) | (1 << kLoadHoldBit) | (1 << kLoadAddBit))) {
        msg = fmt::format("reserved bits 3-7 of byte 5 set (0x{:02X})", b[kLoadModeByte]);
        break;
      }
      Load l;
      l.deps = deps;
      l.buffer = b[kLoadBufferByte];
      l.hbm_addr = Get(b, kLoadHbmAddrByte, 8);
      l.hbm_stride = uint32_t(Get(b, kLoadHbmStrideByte, 4));
      l.dst = uint16_t(Get(b, kLoadDstByte, 2));
      l.rows = uint16_t(Get(b, kLoadRowsByte, 2));
      l.elems = uint16_t(Get(b, kLoadElemsByte, 2));
      l.transpose = (b[kLoadModeByte] >> kLoadTransposeBit) & 1;
      l.hold = (b[kLoadModeByte] >> kLoadHoldBit) & 1;
      l.add = (b[kLoadModeByte] >> kLoadAddBit) & 1;
      l.format = b[kLoadFormatByte];
      r.instr = l;
      break;
    }
    case Opcode::kGemm: {
      if (Reserved(b, {{2, 30}}, &msg)) break;
      const uint8_t defined = (1 << kGemmAccumulateBit) | (1 << kGemmLoadWeightsBit) |
                              (1 << kGemmWindowBit) | (1 << kGemmBroadcastBit);
      if (b[kGemmModeByte] & ~defined) {
        msg = fmt::format("reserved bits 4-7 of byte 16 set (0x{:02X})", b[kGemmModeByte]);
        break;
      }
      const bool broadcast = (b[kGemmModeByte] >> kGemmBroadcastBit) & 1;
      const bool window = (b[kGemmModeByte] >> kGemmWindowBit) & 1;
      // Bytes of a mode bit that is clear must be 0, in byte order.
      for (int i = 0; i < kInstrBytes && msg.empty(); ++i) {
        if (b[i] == 0) continue;
        if (!broadcast && ((kGemmBroadcastBytes >> i) & 1)) {
          msg = fmt::format("reserved byte {} is 0x{:02X}: init_row, 0 without the broadcast bit",
                            i, b[i]);
        } else if (!window && ((kGemmWindowBytes >> i) & 1)) {
          msg = fmt::format(
              "reserved byte {} is 0x{:02X}: a window field, 0 without the window bit", i, b[i]);
        }
      }
      if (!msg.empty()) break;
      Gemm g;
      g.deps = deps;
      g.act = uint16_t(Get(b, kGemmActByte, 2));
      g.wgt = uint16_t(Get(b, kGemmWgtByte, 2));
      g.acc = uint16_t(Get(b, kGemmAccByte, 2));
      g.rows = uint16_t(Get(b, kGemmRowsByte, 2));
      g.kv = uint16_t(Get(b, kGemmKvByte, 2));
      g.nv = uint16_t(Get(b, kGemmNvByte, 2));
      g.accumulate = (b[kGemmModeByte] >> kGemmAccumulateBit) & 1;
      g.load_weights = (b[kGemmModeByte] >> kGemmLoadWeightsBit) & 1;
      g.window = window;
      g.broadcast = broadcast;
      g.init_row = uint16_t(Get(b, kGemmInitRowByte, 2));
      g.win.stride = b[kGemmStrideByte];
      g.win.dh = int8_t(b[kGemmDhByte]);
      g.win.dw = int8_t(b[kGemmDwByte]);
      g.win.band_row = uint16_t(Get(b, kGemmBandRowByte, 2));
      g.win.band_rows = uint16_t(Get(b, kGemmBandRowsByte, 2));
      g.win.width = uint16_t(Get(b, kGemmWidthByte, 2));
      g.win.out_width = uint16_t(Get(b, kGemmOutWidthByte, 2));
      g.win.out_row = uint16_t(Get(b, kGemmOutRowByte, 2));
      g.win.out_col = uint16_t(Get(b, kGemmOutColByte, 2));
      r.instr = g;
      break;
    }
    case Opcode::kStore: {
      if (Reserved(b, {{4, vector_unit ? 3 : 2}, {8, 20}}, &msg)) break;
      Store s;
      s.deps = deps;
      s.format = b[kStoreFormatByte];
      s.activation = b[kStoreActivationByte];
      s.hbm_addr = Get(b, kStoreHbmAddrByte, 8);
      s.hbm_stride = uint32_t(Get(b, kStoreHbmStrideByte, 4));
      s.acc = uint16_t(Get(b, kStoreAccByte, 2));
      s.rows = uint16_t(Get(b, kStoreRowsByte, 2));
      s.elems = uint16_t(Get(b, kStoreElemsByte, 2));
      s.source = b[kStoreSourceByte];
      s.col = uint16_t(Get(b, kStoreColByte, 2));
      r.instr = s;
      break;
    }
    case Opcode::kVop: {
      if (Reserved(b, {{4, 28}}, &msg)) break;
      const uint8_t defined = (1 << kVopAVmemBit) | (1 << kVopBVmemBit) | (1 << kVopBScalarBit);
      if (b[kVopSpacesByte] & ~defined) {
        msg = fmt::format("reserved bits 3-7 of byte 5 set (0x{:02X})", b[kVopSpacesByte]);
        break;
      }
      // As GEMM's mode bytes: the scalar's bytes are 0 without the b_scalar bit.
      const bool scalar = (b[kVopSpacesByte] >> kVopBScalarBit) & 1;
      for (int i = 0; i < kInstrBytes && !scalar && msg.empty(); ++i) {
        if (b[i] != 0 && ((kVopBScalarBytes >> i) & 1)) {
          msg = fmt::format("reserved byte {} is 0x{:02X}: scalar, 0 without the b_scalar bit", i,
                            b[i]);
        }
      }
      if (!msg.empty()) break;
      Vop v;
      v.deps = deps;
      v.op = b[kVopOpByte];
      v.a_vmem = (b[kVopSpacesByte] >> kVopAVmemBit) & 1;
      v.b_vmem = (b[kVopSpacesByte] >> kVopBVmemBit) & 1;
      v.b_scalar = scalar;
      v.a = uint16_t(Get(b, kVopAByte, 2));
      v.b = uint16_t(Get(b, kVopBByte, 2));
      v.d = uint16_t(Get(b, kVopDByte, 2));
      v.n = uint16_t(Get(b, kVopNByte, 2));
      v.m = uint16_t(Get(b, kVopMByte, 2));
      v.asi = uint16_t(Get(b, kVopAsiByte, 2));
      v.aso = uint16_t(Get(b, kVopAsoByte, 2));
      v.bsi = uint16_t(Get(b, kVopBsiByte, 2));
      v.bso = uint16_t(Get(b, kVopBsoByte, 2));
      v.dsi = uint16_t(Get(b, kVopDsiByte, 2));
      v.dso = uint16_t(Get(b, kVopDsoByte, 2));
      v.scalar = uint32_t(Get(b, kVopScalarByte, 4));
      r.instr = v;
      break;
    }
    case Opcode::kEnd: {
      if (Reserved(b, {}, &msg)) break;
      r.instr = End{deps};
      break;
    }
  }
  if (!msg.empty()) return fail(ErrorCode::kReserved, fmt::format("{} {}", name, msg));
  // Dependency flags legal for the module.
  const Module m = ModuleOf(r.instr, vector_unit);
  const bool prev = deps.pop_prev || deps.push_prev, next = deps.pop_next || deps.push_next;
  if ((m == Module::kCommand || m == Module::kAll) && deps.Bits() != 0) {
    return fail(ErrorCode::kReserved,
                fmt::format("{} dependency flags {} must be clear", name, FormatDeps(deps)));
  }
  if ((m == Module::kLoad && prev) || (m == Module::kStore && next)) {
    return fail(ErrorCode::kReserved,
                fmt::format("{} dependency flags {}: the {} module has no {} neighbour", name,
                            FormatDeps(deps), ModuleName(m), m == Module::kLoad ? "prev" : "next"));
  }
  return r;
}

void CheckContext::Advance(const Instr& in) {
  if (const auto* g = std::get_if<Gemm>(&in); g != nullptr && g->load_weights) {
    weights_loaded = true;
    weights_kv = g->kv;
    weights_nv = g->nv;
  }
}

CheckResult Check(const Instr& in, const MachineConfig& cfg, const CheckContext& ctx) {
  // HEADER only at pc 0; pc 0 only HEADER.
  if (ctx.pc == 0 && !std::holds_alternative<Header>(in)) {
    return {ErrorCode::kHeader, "no HEADER: instruction 0 is " + Disassemble(in)};
  }
  return std::visit(
      Overloaded{
          [&](const Header& h) -> CheckResult {
            if (ctx.pc != 0) {
              return {
                  ErrorCode::kHeader,
                  fmt::format("a second HEADER at instruction {} (only instruction 0)", ctx.pc)};
            }
            if (h.magic != kMagic) {
              return {ErrorCode::kHeader,
                      fmt::format("HEADER magic={:02X} {:02X} {:02X} {:02X}, want 54 50 55 31 "
                                  "(\"TPU1\")",
                                  h.magic[0], h.magic[1], h.magic[2], h.magic[3])};
            }
            if (h.major != kVersionMajor) {
              return {ErrorCode::kHeader,
                      fmt::format("HEADER major={} (version {}.{}), this machine runs major {}",
                                  h.major, h.major, h.minor, kVersionMajor)};
            }
            if (h.count != ctx.host_count) {
              return {ErrorCode::kHeader,
                      fmt::format("HEADER count={} but the host wrote a length of {}", h.count,
                                  ctx.host_count)};
            }
            if (h.r != cfg.r || h.c != cfg.c) {
              return {ErrorCode::kShape,
                      fmt::format("HEADER R={} C={}: the program is compiled for a {}x{} array, "
                                  "this machine has R={} C={}",
                                  h.r, h.c, h.r, h.c, cfg.r, cfg.c)};
            }
            return {};
          },
          [&](const Load& l) -> CheckResult {
            if (l.buffer == kBufVmem && cfg.vector_unit()) return CheckVmemLoad(l, cfg);
            int depth = 0, max_elems = 0;
            uint64_t size = 0;
            switch (l.buffer) {
              case kBufAct: depth = cfg.act_depth, max_elems = cfg.r, size = 2; break;
              case kBufWgt: depth = cfg.wgt_depth, max_elems = cfg.c, size = 2; break;
              case kBufAcc: depth = cfg.acc_depth, max_elems = cfg.c, size = 4; break;
              default:
                return Field("LOAD", "buffer", l.buffer,
                             cfg.vector_unit() ? "is not 0, 1, 2 or 3" : "is not 0, 1 or 2");
            }
            static const char* const kDepth[] = {"ActDepth", "WgtDepth", "AccDepth"};
            const char* const width_name = l.buffer == kBufAct ? "R" : "C";
            if (l.transpose && l.buffer == kBufAcc) {
              return Field("LOAD", "buffer", l.buffer, "cannot be transposed into (accumulators)");
            }
            if ((l.hold || l.add) && l.buffer != kBufAcc) return HeldOrAddedOutsideAcc(l);
            if (l.hold && l.add) return Field("LOAD", "mode", 6, "sets both hold and add");
            if (l.rows < 1) return Field("LOAD", "rows", l.rows, "must be at least 1");
            if (l.hold && l.rows != 1) return Field("LOAD", "rows", l.rows, "must be 1 (hold)");
            if (l.transpose && l.rows > max_elems) {
              return Field("LOAD", "rows", l.rows,
                           fmt::format("exceeds {}={} (a transposing LOAD into buffer {})",
                                       width_name, max_elems, l.buffer));
            }
            // Transposed, a source row becomes a buffer column: up to max(R, C) elements long
            // (the transposer is max(R, C) square).
            const int max_src = l.transpose ? std::max(cfg.r, cfg.c) : max_elems;
            if (l.elems < 1 || l.elems > max_src) {
              return Field("LOAD", "elems", l.elems,
                           l.transpose
                               ? fmt::format("not in 1..{} (max(R, C), transposed)", max_src)
                               : fmt::format("not in 1..{} ({} for buffer {})", max_elems,
                                             width_name, l.buffer));
            }
            const int span = l.transpose ? l.elems : l.rows;
            if (int(l.dst) + span > depth) {
              return Field("LOAD", "dst", l.dst,
                           fmt::format("+ {}={} = {} exceeds {}={}", l.transpose ? "elems" : "rows",
                                       span, int(l.dst) + span, kDepth[l.buffer], depth));
            }
            return CheckHbm("LOAD", l.hbm_addr, l.hbm_stride, l.rows, l.elems * size,
                            cfg.hbm_bytes);
          },
          [&](const Gemm& g) -> CheckResult {
            if (g.rows < 1) return Field("GEMM", "rows", g.rows, "must be at least 1");
            if (g.kv < 1 || g.kv > cfg.r) {
              return Field("GEMM", "kv", g.kv, fmt::format("not in 1..{} (R)", cfg.r));
            }
            if (g.nv < 1 || g.nv > cfg.c) {
              return Field("GEMM", "nv", g.nv, fmt::format("not in 1..{} (C)", cfg.c));
            }
            if (!g.window && int(g.act) + g.rows > cfg.act_depth) {
              return Field("GEMM", "act", g.act,
                           fmt::format("+ rows={} = {} exceeds ActDepth={}", g.rows,
                                       int(g.act) + g.rows, cfg.act_depth));
            }
            if (int(g.wgt) + g.kv > cfg.wgt_depth) {
              return Field("GEMM", "wgt", g.wgt,
                           fmt::format("+ kv={} = {} exceeds WgtDepth={}", g.kv, int(g.wgt) + g.kv,
                                       cfg.wgt_depth));
            }
            if (int(g.acc) + g.rows > cfg.acc_depth) {
              return Field("GEMM", "acc", g.acc,
                           fmt::format("+ rows={} = {} exceeds AccDepth={}", g.rows,
                                       int(g.acc) + g.rows, cfg.acc_depth));
            }
            if (!g.load_weights) {
              if (!ctx.weights_loaded) {
                return Field("GEMM", "load_weights", 0, "but no earlier GEMM loaded weights");
              }
              if (g.kv != ctx.weights_kv) {
                return Field("GEMM", "kv", g.kv,
                             fmt::format("reuses weights loaded with kv={} (load_weights=0)",
                                         ctx.weights_kv));
              }
              if (g.nv != ctx.weights_nv) {
                return Field("GEMM", "nv", g.nv,
                             fmt::format("reuses weights loaded with nv={} (load_weights=0)",
                                         ctx.weights_nv));
              }
            }
            if (g.broadcast) {
              if (g.accumulate) {
                return Field("GEMM", "broadcast", 1, "with accumulate=1 (one initial value only)");
              }
              if (g.init_row >= cfg.acc_depth) {
                return Field("GEMM", "init_row", g.init_row,
                             fmt::format("is past AccDepth={}", cfg.acc_depth));
              }
              if (g.init_row >= g.acc && int(g.init_row) < int(g.acc) + g.rows) {
                return Field("GEMM", "init_row", g.init_row,
                             fmt::format("is one of the GEMM's own rows acc={}..{}", g.acc,
                                         int(g.acc) + g.rows - 1));
              }
            }
            if (g.window) return CheckWindow(g, cfg);
            return {};
          },
          [&](const Store& s) -> CheckResult {
            if (s.format > kFmtBf16) return Field("STORE", "format", s.format, "is not 0 or 1");
            if (s.source > kSrcVmem) return Field("STORE", "source", s.source, "is not 0 or 1");
            const bool vmem = s.source == kSrcVmem;
            if (s.activation > kActRelu) {
              return Field("STORE", "activation", s.activation, "is not 0 or 1");
            }
            if (s.rows < 1) return Field("STORE", "rows", s.rows, "must be at least 1");
            if (s.elems < 1 || s.elems > cfg.c) {
              return Field("STORE", "elems", s.elems, fmt::format("not in 1..{} (C)", cfg.c));
            }
            const int size = s.format == kFmtBf16 ? 2 : 4;
            if (s.col * size % 32 != 0) {
              return Field("STORE", "col", s.col,
                           fmt::format("x {} bytes is not a multiple of 32", size));
            }
            if (int(s.col) + s.elems > cfg.c) {
              return Field("STORE", "col", s.col,
                           fmt::format("+ elems={} = {} exceeds C={}", s.elems,
                                       int(s.col) + s.elems, cfg.c));
            }
            const int depth = vmem ? cfg.vmem_depth : cfg.acc_depth;
            if (int(s.acc) + s.rows > depth) {
              return Field("STORE", "acc", s.acc,
                           fmt::format("+ rows={} = {} exceeds {}={}", s.rows, int(s.acc) + s.rows,
                                       vmem ? "VmemDepth" : "AccDepth", depth));
            }
            const uint64_t row_bytes = uint64_t(s.elems) * (s.format == kFmtBf16 ? 2 : 4);
            if (s.hbm_stride < row_bytes) {
              return Field(
                  "STORE", "hbm_stride", s.hbm_stride,
                  fmt::format("is below elems x size = {} bytes (rows would overlap)", row_bytes));
            }
            return CheckHbm("STORE", s.hbm_addr, s.hbm_stride, s.rows, row_bytes, cfg.hbm_bytes);
          },
          [&](const End&) -> CheckResult { return {}; },
          [&](const Vop& v) -> CheckResult { return CheckVop(v, cfg); }},
      in);
}

std::string FormatDeps(const Deps& d) {
  std::string s;
  auto add = [&](bool on, const char* n) {
    if (!on) return;
    s += s.empty() ? "[" : " ";
    s += n;
  };
  add(d.pop_prev, "pop_prev");
  add(d.pop_next, "pop_next");
  add(d.push_prev, "push_prev");
  add(d.push_next, "push_next");
  if (!s.empty()) s += "]";
  return s;
}

std::string Disassemble(const Instr& in) {
  std::string s = std::visit(
      Overloaded{
          [](const Header& h) {
            return fmt::format("HEADER magic={:02X}{:02X}{:02X}{:02X} v{}.{} R={} C={} count={}",
                               h.magic[0], h.magic[1], h.magic[2], h.magic[3], h.major, h.minor,
                               h.r, h.c, h.count);
          },
          [](const Load& l) {
            static const char* const kBuf[] = {"act", "wgt", "acc", "vmem"};
            const std::string buf = l.buffer <= 3 ? kBuf[l.buffer] : fmt::format("{}?", l.buffer);
            return fmt::format("LOAD {} dst={} rows={} elems={} hbm=0x{:X} stride={}{}{}", buf,
                               l.dst, l.rows, l.elems, l.hbm_addr, l.hbm_stride,
                               l.transpose ? " transpose"
                               : l.hold    ? " hold"
                               : l.add     ? " add"
                                           : "",
                               l.format == kFmtBf16 ? " bf16"
                               : l.format != 0      ? " format?"
                                                    : "");
          },
          [](const Gemm& g) {
            std::string s = fmt::format(
                "GEMM act={} wgt={} acc={} rows={} kv={} nv={}{}{}", g.act, g.wgt, g.acc, g.rows,
                g.kv, g.nv, g.accumulate ? " acc+" : "", g.load_weights ? " load_w" : "");
            if (g.broadcast) s += fmt::format(" from_row={}", g.init_row);
            if (g.window) {
              const Window& w = g.win;
              s += fmt::format(
                  " window stride={} dh={} dw={} band_row={} band_rows={} width={} out_width={} "
                  "out={},{}",
                  w.stride, w.dh, w.dw, w.band_row, w.band_rows, w.width, w.out_width, w.out_row,
                  w.out_col);
            }
            return s;
          },
          [](const Store& s) {
            const std::string fmt_name = s.format == kFmtFp32   ? "fp32"
                                         : s.format == kFmtBf16 ? "bf16"
                                                                : fmt::format("{}?", s.format);
            const std::string act = s.activation == kActNone ? ""
                                    : s.activation == kActRelu
                                        ? " relu"
                                        : fmt::format(" act{}?", s.activation);
            return fmt::format("STORE {}{} {}={} rows={} elems={}{} hbm=0x{:X} stride={}", fmt_name,
                               act, s.source == kSrcVmem ? "vmem" : "acc", s.acc, s.rows, s.elems,
                               s.col ? fmt::format(" col={}", s.col) : "", s.hbm_addr,
                               s.hbm_stride);
          },
          [](const End&) { return std::string("END"); },
          [](const Vop& v) {
            const std::string op =
                v.op < kNumVectorOps ? kVectorOps[v.op].name : fmt::format("op{}?", v.op);
            const auto sp = [](bool vmem) { return vmem ? "vmem" : "acc"; };
            std::string s = fmt::format("VOP {} d=vmem:{} a={}:{}", op, v.d, sp(v.a_vmem), v.a);
            if (v.b_scalar) {
              s += fmt::format(" b=scalar:0x{:08X}", v.scalar);
            } else {
              s += fmt::format(" b={}:{}", sp(v.b_vmem), v.b);
            }
            return s + fmt::format(" n={} m={} strides a={},{} b={},{} d={},{}", v.n, v.m, v.asi,
                                   v.aso, v.bsi, v.bso, v.dsi, v.dso);
          }},
      in);
  const std::string d = FormatDeps(DepsOf(in));
  if (!d.empty()) s += "  " + d;
  return s;
}

}  // namespace tpu::isa
