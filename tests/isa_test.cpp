// SPDX-License-Identifier: Apache-2.0
// The instruction set (models/src/isa.cpp) and its instruction-level model
// (models/src/isa_model.cpp): encodings round-trip, every error code comes from a minimal program
// at the right pc with a message naming the field, and hand-tiled GEMM programs match the golden
// GEMM bit for bit on several array shapes.
#include "tpu/isa.h"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <vector>

#include "test_support.h"
#include "tpu/gemm.h"
#include "tpu/host.h"
#include "tpu/isa_model.h"

namespace tpu {
namespace {

using isa::Bytes;
using isa::Deps;
using isa::ErrorCode;
using isa::Instr;
using isa::Machine;
using isa::MachineConfig;
using isa::RunResult;

isa::Header Hdr(const MachineConfig& c, uint32_t count) {
  isa::Header h;
  h.r = uint16_t(c.r);
  h.c = uint16_t(c.c);
  h.count = count;
  return h;
}

class IsaTest : public ::testing::Test {
 protected:
  static MachineConfig SmallConfig() {
    MachineConfig c;
    c.r = 4;
    c.c = 4;
    c.act_depth = 16;
    c.wgt_depth = 16;
    c.acc_depth = 32;
    c.hbm_bytes = 1 << 20;
    return c;
  }

  // Header (count filled in) + body + END.
  static std::vector<Instr> Program(const MachineConfig& c, std::vector<Instr> body,
                                    bool end = true) {
    std::vector<Instr> p{Hdr(c, 0)};
    for (auto& i : body) p.push_back(std::move(i));
    if (end) p.push_back(isa::End{});
    std::get<isa::Header>(p[0]).count = uint32_t(p.size());
    return p;
  }

  static RunResult RunProgram(Machine& m, const std::vector<Instr>& p, uint64_t addr = 0x8000) {
    m.WriteProgram(addr, p);
    return m.Run(addr, uint32_t(p.size()));
  }

  static void ExpectError(const RunResult& r, ErrorCode code, uint32_t pc,
                          const std::vector<std::string>& words) {
    EXPECT_EQ(isa::ErrorName(r.code), std::string(isa::ErrorName(code))) << r.message;
    EXPECT_EQ(r.pc, pc) << r.message;
    for (const auto& w : words) {
      EXPECT_NE(r.message.find(w), std::string::npos)
          << "message '" << r.message << "' does not name '" << w << "'";
    }
  }

  static Deps D(bool pop_prev, bool pop_next, bool push_prev, bool push_next) {
    Deps d;
    d.pop_prev = pop_prev;
    d.pop_next = pop_next;
    d.push_prev = push_prev;
    d.push_next = push_next;
    return d;
  }

  static isa::Load LoadAct(uint64_t addr, uint16_t rows, uint16_t elems, Deps d = {}) {
    isa::Load l;
    l.deps = d;
    l.buffer = isa::kBufAct;
    l.hbm_addr = addr;
    l.hbm_stride = 32;
    l.rows = rows;
    l.elems = elems;
    return l;
  }

  static isa::Gemm G(uint16_t rows, uint16_t kv, uint16_t nv, bool load_w, Deps d = {}) {
    isa::Gemm g;
    g.deps = d;
    g.rows = rows;
    g.kv = kv;
    g.nv = nv;
    g.load_weights = load_w;
    return g;
  }

  static isa::Store St(uint64_t addr, uint16_t rows, uint16_t elems, Deps d = {}) {
    isa::Store s;
    s.deps = d;
    s.hbm_addr = addr;
    s.hbm_stride = 32;
    s.rows = rows;
    s.elems = elems;
    return s;
  }
};

// ---------------------------------------------------------------------------------------------
// Encoding

// Flags legal for the module that runs an instruction.
Deps RandomDeps(tb::Rng& rng, isa::Module m) {
  Deps d = Deps::FromBits(uint8_t(rng.Next() & 0xF));
  if (m == isa::Module::kLoad) d.pop_prev = d.push_prev = false;
  if (m == isa::Module::kStore) d.pop_next = d.push_next = false;
  if (m == isa::Module::kAll || m == isa::Module::kCommand) d = Deps{};
  return d;
}

TEST_F(IsaTest, EncodeDecodeRoundTripsEveryKind) {
  tb::Rng rng(test::TestSeed());
  const uint64_t n = test::Scaled(2000);
  for (uint64_t i = 0; i < n; ++i) {
    Instr in;
    switch (i % 5) {
      case 0: {
        isa::Header h;
        for (auto& b : h.magic) b = uint8_t(rng.Next());
        h.major = rng.U16(), h.minor = rng.U16(), h.r = rng.U16(), h.c = rng.U16();
        h.count = rng.U32();
        in = h;
        break;
      }
      case 1: {
        isa::Load l;
        l.buffer = uint8_t(rng.Next());
        l.hbm_addr = rng.Next(), l.hbm_stride = rng.U32();
        l.dst = rng.U16(), l.rows = rng.U16(), l.elems = rng.U16();
        l.transpose = rng.Bit(), l.hold = rng.Bit(), l.add = rng.Bit();
        in = l;
        break;
      }
      case 2: {
        isa::Gemm g;
        g.act = rng.U16(), g.wgt = rng.U16(), g.acc = rng.U16();
        g.rows = rng.U16(), g.kv = rng.U16(), g.nv = rng.U16();
        g.accumulate = rng.Bit(), g.load_weights = rng.Bit(), g.window = rng.Bit();
        if (g.window) {
          isa::Window& w = g.win;
          w.stride = uint8_t(rng.Next()), w.dh = int8_t(rng.Next()), w.dw = int8_t(rng.Next());
          w.band_row = rng.U16(), w.band_rows = rng.U16(), w.width = rng.U16();
          w.out_width = rng.U16(), w.out_row = rng.U16(), w.out_col = rng.U16();
        }
        g.broadcast = rng.Bit();
        if (g.broadcast) g.init_row = rng.U16();
        in = g;
        break;
      }
      case 3: {
        isa::Store s;
        s.format = uint8_t(rng.Next()), s.activation = uint8_t(rng.Next());
        s.hbm_addr = rng.Next(), s.hbm_stride = rng.U32();
        s.acc = rng.U16(), s.rows = rng.U16(), s.elems = rng.U16(), s.col = rng.U16();
        in = s;
        break;
      }
      default: in = isa::End{};
    }
    isa::DepsOf(in) = RandomDeps(rng, isa::ModuleOf(in));
    const Bytes b = isa::Encode(in);
    const auto d = isa::Decode(b.data());
    ASSERT_TRUE(d.ok()) << "vector " << i << ": " << isa::Disassemble(in) << ": " << d.message;
    ASSERT_TRUE(d.instr == in) << "vector " << i << ": " << isa::Disassemble(in) << " decoded as "
                               << isa::Disassemble(d.instr);
    ASSERT_EQ(isa::Encode(d.instr), b) << "vector " << i;
  }
}

TEST_F(IsaTest, EncodingIsTheDocumentedLayout) {
  isa::Load l;
  l.deps = D(false, true, false, true);
  l.buffer = isa::kBufWgt;
  l.hbm_addr = 0x0102030405060720ull;
  l.hbm_stride = 0x0A0B0C20;
  l.dst = 0x1122;
  l.rows = 0x3344;
  l.elems = 0x5566;
  const Bytes want = {0x02, 0x0A, 0,    0,    0x01, 0,    0,    0,    0x20, 0x07, 0x06,
                      0x05, 0x04, 0x03, 0x02, 0x01, 0x20, 0x0C, 0x0B, 0x0A, 0x22, 0x11,
                      0x44, 0x33, 0x66, 0x55, 0,    0,    0,    0,    0,    0};
  EXPECT_EQ(isa::Encode(l), want);
  isa::Load lt = l;
  lt.transpose = true;
  Bytes want_t = want;
  want_t[5] = 0x01;
  EXPECT_EQ(isa::Encode(lt), want_t);
  EXPECT_EQ(isa::Disassemble(lt),
            "LOAD wgt dst=4386 rows=13124 elems=21862 hbm=0x102030405060720 stride=168496160 "
            "transpose  [pop_next push_next]");
  // Version 1.5: hold is bit 1 of byte 5, add bit 2.
  isa::Load lh = l, la = l;
  lh.hold = true, la.add = true;
  Bytes want_h2 = want, want_a = want;
  want_h2[5] = 0x02, want_a[5] = 0x04;
  EXPECT_EQ(isa::Encode(lh), want_h2);
  EXPECT_EQ(isa::Encode(la), want_a);
  EXPECT_NE(isa::Disassemble(lh).find(" hold "), std::string::npos) << isa::Disassemble(lh);
  EXPECT_NE(isa::Disassemble(la).find(" add "), std::string::npos) << isa::Disassemble(la);
  isa::Header h;
  h.r = 16, h.c = 8, h.count = 0x01020304;
  const Bytes want_h = {0x01, 0,    0,    0, 0x54, 0x50, 0x55, 0x31, 1, 0, 6, 0, 16, 0, 8, 0,
                        0x04, 0x03, 0x02, 1, 0,    0,    0,    0,    0, 0, 0, 0, 0,  0, 0, 0};
  EXPECT_EQ(isa::Encode(h), want_h);
  isa::Gemm g = G(64, 16, 16, true, D(true, false, false, true));
  g.wgt = 16;
  g.accumulate = true;
  const Bytes eg = isa::Encode(g);
  EXPECT_EQ(eg[0], 0x03);
  EXPECT_EQ(eg[1], 0x09);
  EXPECT_EQ(eg[6], 16);
  EXPECT_EQ(eg[10], 64);
  EXPECT_EQ(eg[16], 0x03);
  EXPECT_EQ(isa::Disassemble(g),
            "GEMM act=0 wgt=16 acc=0 rows=64 kv=16 nv=16 acc+ load_w  [pop_prev push_next]");
  isa::Gemm gw = G(70, 16, 8, false);
  gw.window = true;
  gw.win.stride = 2, gw.win.dh = -1, gw.win.dw = 2, gw.win.band_row = 0x0102;
  gw.win.band_rows = 0x0304, gw.win.width = 0x0506, gw.win.out_width = 0x0708;
  gw.win.out_row = 0x090A, gw.win.out_col = 0x0B0C;
  const Bytes ew = isa::Encode(gw);
  const Bytes want_w = {0x03, 0,    0,    0,    0,    0,    0,    0,    0,    0,    70,
                        0,    16,   0,    8,    0,    0x04, 2,    0xFF, 2,    0x02, 0x01,
                        0x04, 0x03, 0x06, 0x05, 0x08, 0x07, 0x0A, 0x09, 0x0C, 0x0B};
  EXPECT_EQ(ew, want_w);
  EXPECT_EQ(isa::Disassemble(gw),
            "GEMM act=0 wgt=0 acc=0 rows=70 kv=16 nv=8 window stride=2 dh=-1 dw=2 band_row=258 "
            "band_rows=772 width=1286 out_width=1800 out=2314,2828");
  isa::Gemm gb = G(5, 16, 8, true);
  gb.acc = 0x10, gb.broadcast = true, gb.init_row = 0x0102;
  const Bytes eb = isa::Encode(gb);
  EXPECT_EQ(eb[2], 0x02);
  EXPECT_EQ(eb[3], 0x01);
  EXPECT_EQ(eb[8], 0x10);
  EXPECT_EQ(eb[16], 0x0A);  // load_weights | broadcast
  EXPECT_EQ(isa::Decode(eb.data()).instr, Instr(gb));
  EXPECT_EQ(isa::Disassemble(gb), "GEMM act=0 wgt=0 acc=16 rows=5 kv=16 nv=8 load_w from_row=258");
  EXPECT_EQ(isa::Disassemble(isa::End{}), "END");
  isa::Store s = St(0x40, 3, 4);
  s.format = isa::kFmtBf16;
  s.activation = isa::kActRelu;
  EXPECT_EQ(isa::Disassemble(s), "STORE bf16 relu acc=0 rows=3 elems=4 hbm=0x40 stride=32");
  EXPECT_EQ(isa::ModuleOf(l), isa::Module::kLoad);
  l.buffer = isa::kBufAcc;
  EXPECT_EQ(isa::ModuleOf(l), isa::Module::kCompute);
  EXPECT_EQ(isa::ModuleOf(g), isa::Module::kCompute);
  EXPECT_EQ(isa::ModuleOf(s), isa::Module::kStore);
  EXPECT_EQ(isa::ModuleOf(isa::End{}), isa::Module::kAll);
  // The module from the bytes alone agrees, and a LOAD's buffer byte decides it even where the
  // rest does not decode (a reserved byte set); an unknown opcode has none.
  for (const Instr& in : {Instr(isa::Header{}), Instr(l), Instr(g), Instr(s), Instr(isa::End{})})
    EXPECT_EQ(isa::ModuleOfBytes(isa::Encode(in).data()), isa::ModuleOf(in))
        << isa::Disassemble(in);
  l.buffer = isa::kBufWgt;
  isa::Bytes lb = isa::Encode(l);
  lb[31] = 0xFF;
  EXPECT_EQ(isa::ModuleOfBytes(lb.data()), isa::Module::kLoad);
  lb[isa::kLoadBufferByte] = isa::kBufAcc;
  EXPECT_EQ(isa::ModuleOfBytes(lb.data()), isa::Module::kCompute);
  lb[isa::kLoadBufferByte] = isa::kBufVmem;  // the vector memory: store, or load without a unit
  EXPECT_EQ(isa::ModuleOfBytes(lb.data()), isa::Module::kStore);
  EXPECT_EQ(isa::ModuleOfBytes(lb.data(), false), isa::Module::kLoad);
  lb[isa::kOpcodeByte] = 0x06;  // VOP
  EXPECT_EQ(isa::ModuleOfBytes(lb.data()), isa::Module::kStore);
  EXPECT_EQ(isa::ModuleOfBytes(lb.data(), false), std::nullopt);
  for (const uint8_t op : {0x00, 0x07, 0x0E, 0xFF}) {
    lb[isa::kOpcodeByte] = op;
    EXPECT_EQ(isa::ModuleOfBytes(lb.data()), std::nullopt) << int(op);
  }
}

TEST_F(IsaTest, DecodeRefusesUnknownOpcodesAndReservedBits) {
  for (int op : {0x00, 0x07, 0x80, 0xFF}) {
    Bytes b{};
    b[0] = uint8_t(op);
    const auto d = isa::Decode(b.data());
    EXPECT_EQ(d.code, ErrorCode::kOpcode) << op;
    EXPECT_NE(d.message.find("opcode"), std::string::npos) << d.message;
  }
  {  // VOP on a machine without the vector unit is an unknown opcode, as in version 1.3.
    Bytes b{};
    b[0] = 0x06;
    const auto d = isa::Decode(b.data(), false);
    EXPECT_EQ(d.code, ErrorCode::kOpcode);
    EXPECT_NE(d.message.find("no vector unit"), std::string::npos) << d.message;
  }
  // Every byte a kind does not name, one at a time, on a machine without the vector unit (as
  // version 1.3: byte 6 of LOAD and STORE reserved).
  const Instr kinds[] = {isa::Header{}, isa::Load{}, isa::Gemm{}, isa::Store{}, isa::End{}};
  const std::vector<int> reserved[] = {
      {2, 3, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29, 30, 31},
      {2, 3, 6, 7, 26, 27, 28, 29, 30, 31},
      {2, 3, 17, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29, 30, 31},
      {2, 3, 6, 7, 28, 29, 30, 31},  // (col, bytes 26-27: version 1.6)
      {2,  3,  4,  5,  6,  7,  8,  9,  10, 11, 12, 13, 14, 15, 16,
       17, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29, 30, 31}};
  for (int k = 0; k < 5; ++k) {
    for (int byte : reserved[k]) {
      Bytes b = isa::Encode(kinds[k]);
      b[size_t(byte)] = 0x40;
      const auto d = isa::Decode(b.data(), false);
      EXPECT_EQ(d.code, ErrorCode::kReserved) << "kind " << k << " byte " << byte;
      EXPECT_NE(d.message.find(fmt::format("reserved byte {}", byte)), std::string::npos)
          << d.message;
    }
    Bytes b = isa::Encode(kinds[k]);
    b[1] = 0x10;  // flag bits 4-7
    EXPECT_EQ(isa::Decode(b.data()).code, ErrorCode::kReserved);
  }
  // LOAD's mode byte: bit 0 transpose (version 1.3), bits 1 hold and 2 add (version 1.5), bits
  // 3-7 reserved.
  for (uint8_t v : {0x08, 0x80, 0x41}) {
    Bytes l = isa::Encode(isa::Load{});
    l[5] = v;
    const auto dl = isa::Decode(l.data());
    EXPECT_EQ(dl.code, ErrorCode::kReserved) << int(v);
    EXPECT_NE(dl.message.find("byte 5"), std::string::npos) << dl.message;
  }
  {
    Bytes l = isa::Encode(isa::Load{});
    l[5] = 0x01;
    const auto dl = isa::Decode(l.data());
    ASSERT_TRUE(dl.ok()) << dl.message;
    EXPECT_TRUE(std::get<isa::Load>(dl.instr).transpose);
  }
  for (uint8_t v : {0x02, 0x04}) {
    Bytes l = isa::Encode(isa::Load{});
    l[5] = v;
    const auto dl = isa::Decode(l.data());
    ASSERT_TRUE(dl.ok()) << dl.message;
    EXPECT_EQ(std::get<isa::Load>(dl.instr).hold, v == 0x02);
    EXPECT_EQ(std::get<isa::Load>(dl.instr).add, v == 0x04);
  }
  Bytes g = isa::Encode(isa::Gemm{});
  g[16] = 0x10;
  auto d = isa::Decode(g.data());
  EXPECT_EQ(d.code, ErrorCode::kReserved);
  EXPECT_NE(d.message.find("byte 16"), std::string::npos) << d.message;
  // A mode's bytes are legal only with its bit: init_row with broadcast, not window fields.
  g = isa::Encode(isa::Gemm{});
  g[16] = 0x08, g[3] = 0x01;
  EXPECT_TRUE(isa::Decode(g.data()).ok());
  g[20] = 0x01;
  d = isa::Decode(g.data());
  EXPECT_EQ(d.code, ErrorCode::kReserved);
  EXPECT_NE(d.message.find("a window field"), std::string::npos) << d.message;
  g = isa::Encode(isa::Gemm{});
  g[2] = 0x01;
  d = isa::Decode(g.data());
  EXPECT_EQ(d.code, ErrorCode::kReserved);
  EXPECT_NE(d.message.find("init_row"), std::string::npos) << d.message;
}

TEST_F(IsaTest, DecodeRefusesFlagsTheModuleCannotUse) {
  struct Case {
    Instr in;
    Deps d;
  };
  isa::Load act = LoadAct(0, 1, 1), acc = LoadAct(0, 1, 1);
  acc.buffer = isa::kBufAcc;
  const Case bad[] = {
      {act, D(true, false, false, false)},         {act, D(false, false, true, false)},
      {St(0, 1, 1), D(false, true, false, false)}, {St(0, 1, 1), D(false, false, false, true)},
      {isa::End{}, D(true, false, false, false)},  {isa::Header{}, D(false, false, false, true)}};
  for (const auto& c : bad) {
    Instr in = c.in;
    isa::DepsOf(in) = c.d;
    const auto d = isa::Decode(isa::Encode(in).data());
    EXPECT_EQ(d.code, ErrorCode::kReserved) << isa::Disassemble(in);
    EXPECT_NE(d.message.find("dependency flags"), std::string::npos) << d.message;
  }
  Instr ok = acc;  // LOAD to the accumulators runs in compute: every flag is legal
  isa::DepsOf(ok) = D(true, true, true, true);
  EXPECT_TRUE(isa::Decode(isa::Encode(ok).data()).ok());
}

// ---------------------------------------------------------------------------------------------
// Errors from whole programs

TEST_F(IsaTest, OpcodeAndReservedErrorsStopAtTheirPc) {
  const auto cfg = SmallConfig();
  Machine m(cfg);
  auto p = Program(cfg, {LoadAct(0, 1, 1), isa::End{}, isa::End{}});
  m.WriteProgram(0, p);
  const uint8_t bad_op = 0x07;
  m.WriteHbm(2 * 32, &bad_op, 1);  // instruction 2 becomes opcode 0x07
  ExpectError(m.Run(0, uint32_t(p.size())), ErrorCode::kOpcode, 2, {"opcode=0x07"});

  isa::Gemm g = G(1, 1, 1, true);
  auto p2 = Program(cfg, {LoadAct(0, 1, 1), g});
  m.WriteProgram(0x1000, p2);
  const uint8_t one = 1;
  m.WriteHbm(0x1000 + 2 * 32 + 20, &one, 1);
  ExpectError(m.Run(0x1000, uint32_t(p2.size())), ErrorCode::kReserved, 2,
              {"GEMM", "reserved byte 20"});

  // push_prev in the load module: the encoder writes it, the decoder refuses it.
  ExpectError(RunProgram(m, Program(cfg, {LoadAct(0, 1, 1, D(false, false, true, false))})),
              ErrorCode::kReserved, 1, {"LOAD", "push_prev", "load module"});
}

TEST_F(IsaTest, HeaderErrors) {
  const auto cfg = SmallConfig();
  Machine m(cfg);
  // No header at all.
  ExpectError(RunProgram(m, {isa::End{}}), ErrorCode::kHeader, 0, {"no HEADER"});
  ExpectError(m.Run(0, 0), ErrorCode::kHeader, 0, {"length of 0"});
  auto p = Program(cfg, {});
  std::get<isa::Header>(p[0]).magic[3] = 0x32;
  ExpectError(RunProgram(m, p), ErrorCode::kHeader, 0, {"magic"});
  p = Program(cfg, {});
  std::get<isa::Header>(p[0]).major = 2;
  ExpectError(RunProgram(m, p), ErrorCode::kHeader, 0, {"major=2"});
  p = Program(cfg, {});
  m.WriteProgram(0, p);
  ExpectError(m.Run(0, 3), ErrorCode::kHeader, 0, {"count=2", "length of 3"});
  // A second HEADER.
  ExpectError(RunProgram(m, Program(cfg, {LoadAct(0, 1, 1), Hdr(cfg, 4)})), ErrorCode::kHeader, 2,
              {"second HEADER"});
  // A newer minor version is accepted.
  p = Program(cfg, {});
  std::get<isa::Header>(p[0]).minor = 7;
  EXPECT_TRUE(RunProgram(m, p).ok());
  // Shape.
  p = Program(cfg, {});
  std::get<isa::Header>(p[0]).c = 8;
  ExpectError(RunProgram(m, p), ErrorCode::kShape, 0, {"R=4 C=8", "C=4"});
}

TEST_F(IsaTest, FieldErrorsNameFieldValueAndLimit) {
  const auto cfg = SmallConfig();  // R=C=4, depths 16/16/32
  Machine m(cfg);
  struct Case {
    Instr in;
    std::vector<std::string> words;
  };
  isa::Load l0 = LoadAct(0, 0, 1), l1 = LoadAct(0, 1, 5), l2 = LoadAct(0, 4, 4), l3 = l2;
  l2.dst = 13;
  l3.buffer = 3;
  isa::Load lw = LoadAct(0, 1, 5);
  lw.buffer = isa::kBufWgt;
  isa::Gemm g1 = G(1, 5, 1, true), g2 = G(1, 1, 0, true), g3 = G(10, 1, 1, true);
  g3.act = 7;
  isa::Gemm g4 = G(1, 4, 1, true);
  g4.wgt = 13;
  isa::Gemm g5 = G(14, 1, 1, true);
  g5.acc = 20;
  isa::Gemm g6 = G(2, 1, 1, true), g7 = G(2, 1, 1, true), g8 = G(2, 1, 1, true);
  g6.broadcast = true, g6.accumulate = true, g6.init_row = 5;
  g7.broadcast = true, g7.init_row = 32;
  g8.broadcast = true, g8.acc = 4, g8.init_row = 5;
  isa::Store s1 = St(0, 1, 1), s2 = St(0, 1, 5), s3 = St(0, 1, 4), s4 = St(0, 3, 1);
  s1.format = 2;
  s3.hbm_stride = 0;  // fp32 x 4 = 16 bytes per row
  s4.acc = 30;
  isa::Store s5 = St(0, 1, 1);
  s5.activation = 9;
  // STORE's col (version 1.6): a multiple of 32 bytes, col + elems within C.
  isa::Store s6 = St(0, 1, 1), s7 = St(0, 1, 1);
  s6.col = 4;  // 16 bytes of fp32
  s7.col = 8;
  // Transposing LOADs (version 1.3): not into the accumulators; rows up to the buffer's width,
  // elems up to max(R, C), dst + elems inside the buffer.
  auto tr = [](isa::Load l) {
    l.transpose = true;
    return l;
  };
  isa::Load t_acc = tr(LoadAct(0, 1, 1)), t_rows = tr(LoadAct(0, 5, 1)),
            t_elems = tr(LoadAct(0, 1, 5)), t_dst = tr(LoadAct(0, 1, 4)),
            t_wrows = tr(LoadAct(0, 5, 1));
  t_acc.buffer = isa::kBufAcc;
  t_dst.dst = 13;
  t_wrows.buffer = isa::kBufWgt;
  // Residual adds (version 1.5): hold and add into the accumulators only, not both; hold 1 row.
  isa::Load h_act = LoadAct(0, 1, 1), a_wgt = LoadAct(0, 1, 1), h_add = LoadAct(0, 1, 1),
            h_rows = LoadAct(0, 2, 1);
  h_act.hold = true;
  a_wgt.buffer = isa::kBufWgt, a_wgt.add = true;
  h_add.buffer = isa::kBufAcc, h_add.hold = h_add.add = true;
  h_rows.buffer = isa::kBufAcc, h_rows.hold = true;
  const Case cases[] = {
      {h_act, {"LOAD", "buffer=0", "held", "accumulators"}},
      {a_wgt, {"LOAD", "buffer=1", "added to", "accumulators"}},
      {h_add, {"LOAD", "hold and add"}},
      {h_rows, {"LOAD", "rows=2", "must be 1 (hold)"}},
      {t_acc, {"LOAD", "buffer=2", "transposed"}},
      {t_rows, {"LOAD", "rows=5", "R=4"}},
      {t_wrows, {"LOAD", "rows=5", "C=4"}},
      {t_elems, {"LOAD", "elems=5", "1..4", "max(R, C)"}},
      {t_dst, {"LOAD", "dst=13", "elems=4", "ActDepth=16"}},
      {l0, {"LOAD", "rows=0"}},
      {l1, {"LOAD", "elems=5", "1..4"}},
      {l2, {"LOAD", "dst=13", "rows=4", "ActDepth=16"}},
      {l3, {"LOAD", "buffer=3"}},
      {lw, {"LOAD", "elems=5", "1..4"}},
      {g1, {"GEMM", "kv=5", "1..4"}},
      {g2, {"GEMM", "nv=0"}},
      {g3, {"GEMM", "act=7", "rows=10", "ActDepth=16"}},
      {g4, {"GEMM", "wgt=13", "kv=4", "WgtDepth=16"}},
      {g5, {"GEMM", "acc=20", "rows=14", "AccDepth=32"}},
      {G(1, 1, 1, false), {"GEMM", "load_weights=0", "no earlier GEMM"}},
      {g6, {"GEMM", "broadcast=1", "accumulate=1"}},
      {g7, {"GEMM", "init_row=32", "AccDepth=32"}},
      {g8, {"GEMM", "init_row=5", "own rows", "acc=4..5"}},
      {s1, {"STORE", "format=2"}},
      {s5, {"STORE", "activation=9"}},
      {s2, {"STORE", "elems=5", "1..4"}},
      {s3, {"STORE", "hbm_stride=0", "16 bytes"}},
      {s4, {"STORE", "acc=30", "rows=3", "AccDepth=32"}},
      {s6, {"STORE", "col=4", "x 4 bytes", "multiple of 32"}},
      {s7, {"STORE", "col=8", "elems=1", "exceeds C=4"}},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(isa::Disassemble(c.in));
    // After an innocent instruction, so that the pc is 2.
    ExpectError(RunProgram(m, Program(cfg, {LoadAct(0, 1, 1), c.in})), ErrorCode::kField, 2,
                c.words);
  }
}

TEST_F(IsaTest, WindowErrorsNameTheRuleAtTheirPc) {
  const auto cfg = SmallConfig();  // ActDepth 16
  Machine m(cfg);
  auto win = [](uint8_t stride, uint16_t band_rows, uint16_t width, uint16_t out_width,
                uint16_t out_col, uint16_t act = 0) {
    isa::Gemm g = G(3, 2, 2, true);
    g.act = act;
    g.window = true;
    g.win.stride = stride, g.win.band_rows = band_rows, g.win.width = width;
    g.win.out_width = out_width, g.win.out_col = out_col;
    return g;
  };
  struct Case {
    isa::Gemm g;
    std::vector<std::string> words;
  };
  const Case cases[] = {
      {win(0, 2, 2, 2, 0), {"GEMM window", "stride=0"}},
      {win(1, 2, 0, 2, 0), {"width=0"}},
      {win(1, 2, 2, 0, 0), {"out_width=0"}},
      {win(1, 0, 2, 2, 0), {"band_rows=0"}},
      {win(1, 2, 2, 2, 2), {"out_col=2", "out_width=2"}},
      {win(1, 3, 5, 2, 0, 2), {"band_rows=3", "width=5", "act=2", "17", "ActDepth=16"}},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(isa::Disassemble(c.g));
    ExpectError(RunProgram(m, Program(cfg, {LoadAct(0, 1, 1), c.g})), ErrorCode::kWindow, 2,
                c.words);
  }
  // The band exactly filling the buffer is legal; rows beyond it are not limited by ActDepth
  // (a row counts output pixels); field rules come first.
  isa::Gemm ok = win(1, 4, 4, 3, 2);
  ok.rows = 20;  // > ActDepth, <= AccDepth
  EXPECT_TRUE(RunProgram(m, Program(cfg, {ok})).ok());
  isa::Gemm both = win(0, 2, 2, 2, 0);
  both.kv = 5;
  ExpectError(RunProgram(m, Program(cfg, {both})), ErrorCode::kField, 1, {"kv=5"});
}

// A window GEMM computes what a GEMM on the im2col rows of the same taps computes: random
// images, bands, strides, offsets (padding, dilation) and starting pixels; the A rows for the
// golden GEMM are built here from the definition, not through isa::Window.
TEST_F(IsaTest, WindowGemmMatchesGemmOnItsIm2colRows) {
  tb::Rng rng(test::TestSeed());
  MachineConfig cfg = SmallConfig();
  cfg.act_depth = 256;
  cfg.acc_depth = 256;
  Machine m(cfg);
  for (int it = 0; it < 200; ++it) {
    const int height = rng.Range(1, 6), width = rng.Range(1, 7), cin = rng.Range(1, cfg.r);
    const int nv = rng.Range(1, cfg.c);
    isa::Gemm g = G(uint16_t(rng.Range(1, 40)), uint16_t(cin), uint16_t(nv), true);
    g.window = true;
    isa::Window& w = g.win;
    w.stride = uint8_t(rng.Range(1, 3));
    w.dh = int8_t(rng.Range(-2, 3)), w.dw = int8_t(rng.Range(-2, 3));
    w.band_row = uint16_t(rng.Range(0, height - 1));
    w.band_rows = uint16_t(rng.Range(1, height - w.band_row));
    w.width = uint16_t(width);
    w.out_width = uint16_t(rng.Range(1, 5));
    w.out_row = uint16_t(rng.Range(0, 3));
    w.out_col = uint16_t(rng.Range(0, w.out_width - 1));
    g.act = uint16_t(rng.Range(0, 20));
    SCOPED_TRACE(fmt::format("iteration {}: {}", it, isa::Disassemble(g)));
    // The band's pixels, one per 32-byte row, and the weights.
    const int pixels = w.band_rows * width;
    std::vector<uint16_t> x(size_t(pixels) * cin), b(size_t(cin) * nv);
    for (auto& v : x) v = uint16_t(0x3C00 + rng.Range(0, 0x3FF));  // small positive, no specials
    for (auto& v : b) v = uint16_t(rng.Range(0, 1) ? 0x3F80 + rng.Range(0, 0x7F) : 0xBF80);
    for (int p = 0; p < pixels; ++p) m.WriteHbm(uint64_t(p) * 32, &x[size_t(p) * cin], cin * 2);
    for (int k = 0; k < cin; ++k)
      m.WriteHbm(0x10000 + uint64_t(k) * 32, &b[size_t(k) * nv], nv * 2);
    isa::Load lx = LoadAct(0, uint16_t(pixels), uint16_t(cin), D(false, false, false, true));
    lx.dst = g.act;
    isa::Load lw = LoadAct(0x10000, uint16_t(cin), uint16_t(nv));
    lw.buffer = isa::kBufWgt;
    g.deps = D(true, false, false, true);
    isa::Store st = St(0x20000, g.rows, uint16_t(nv), D(true, false, false, false));
    ASSERT_TRUE(RunProgram(m, Program(cfg, {lx, lw, g, st})).ok());
    // The im2col rows, from the definition.
    std::vector<uint16_t> a(size_t(g.rows) * cin, 0);
    for (int r = 0; r < g.rows; ++r) {
      const int pix = w.out_col + r, oh = w.out_row + pix / w.out_width, ow = pix % w.out_width;
      const int ih = oh * w.stride + w.dh, iw = ow * w.stride + w.dw;
      if (ih < w.band_row || ih >= w.band_row + w.band_rows || iw < 0 || iw >= width) continue;
      for (int k = 0; k < cin; ++k) {
        a[size_t(r) * cin + k] = x[(size_t(ih - w.band_row) * width + iw) * cin + k];
      }
    }
    const auto want = gemm::Gemm({g.rows, cin, nv}, a, b, {}, cfg.mode);
    for (int r = 0; r < g.rows; ++r) {
      std::vector<uint32_t> row(static_cast<size_t>(nv));
      m.ReadHbm(0x20000 + uint64_t(r) * 32, row.data(), nv * 4);
      for (int n = 0; n < nv; ++n) {
        ASSERT_EQ(row[size_t(n)], want[size_t(r) * nv + n]) << "row " << r << " col " << n;
      }
    }
  }
}

TEST_F(IsaTest, WeightReuseMustMatchTheLoadedTile) {
  const auto cfg = SmallConfig();
  Machine m(cfg);
  const Deps pop = D(true, false, false, false), push = D(false, false, false, true);
  auto body = [&](isa::Gemm second) {
    return Program(cfg, {LoadAct(0, 2, 3, push), G(2, 3, 2, true, pop), second});
  };
  EXPECT_TRUE(RunProgram(m, body(G(2, 3, 2, false))).ok());
  ExpectError(RunProgram(m, body(G(2, 2, 2, false))), ErrorCode::kField, 3,
              {"GEMM", "kv=2", "kv=3"});
  ExpectError(RunProgram(m, body(G(2, 3, 4, false))), ErrorCode::kField, 3,
              {"GEMM", "nv=4", "nv=2"});
  // A new load resets what may be reused.
  auto p = body(G(1, 2, 4, true));
  p.insert(p.end() - 1, G(1, 2, 4, false));
  std::get<isa::Header>(p[0]).count = uint32_t(p.size());
  EXPECT_TRUE(RunProgram(m, p).ok());
}

TEST_F(IsaTest, ReusedWeightsAreTheArraysNotTheBuffers) {
  const auto cfg = SmallConfig();
  Machine m(cfg);
  const uint16_t one = 0x3F80, two = 0x4000, three = 0x4040;
  m.WriteHbm(0x100, &one, 2);
  m.WriteHbm(0x200, &two, 2);
  m.WriteHbm(0x300, &three, 2);
  isa::Load act = LoadAct(0x100, 1, 1), w2 = LoadAct(0x200, 1, 1, D(false, false, false, true)),
            w3 = LoadAct(0x300, 1, 1, D(false, true, false, true));
  w2.buffer = w3.buffer = isa::kBufWgt;
  isa::Gemm g0 = G(1, 1, 1, true, D(true, false, true, false)),
            g1 = G(1, 1, 1, false, D(true, 0, 0, 0)), g2 = G(1, 1, 1, true);
  g1.acc = 1;
  g2.acc = 2;
  // 1·2 with the weights loaded; the buffer then holds 3, but the reuse still multiplies by 2.
  const auto r = RunProgram(m, Program(cfg, {act, w2, g0, w3, g1, g2}));
  ASSERT_TRUE(r.ok()) << r.message;
  EXPECT_EQ(m.Acc(0, 0), 0x40000000u);
  EXPECT_EQ(m.Acc(1, 0), 0x40000000u);
  EXPECT_EQ(m.Acc(2, 0), 0x40400000u);
  EXPECT_EQ(m.Acc(0, 1), 0u);  // columns >= nv are not written
  EXPECT_EQ(r.counters.macs, 3u);
  EXPECT_EQ(r.counters.per_module[0], 3u);
  EXPECT_EQ(r.counters.per_module[1], 3u);
  EXPECT_EQ(r.counters.hbm_bytes_read, 6u);
}

// What the machine's registers show at the end of a run, predicted by the model: the tokens left
// in each queue (pushes - pops), the DMA's bytes (whole 32-byte beats per row, an accumulator
// LOAD of stride 0 reading its row once, the program fetch), the rows the array issues.
TEST_F(IsaTest, EndStateTokensLeftDmaBeatsAndRows) {
  const auto cfg = SmallConfig();
  Machine m(cfg);
  const Deps push_next = D(false, false, false, true);
  isa::Load a = LoadAct(0x100, 3, 4, push_next), b = LoadAct(0x100, 1, 2, push_next);
  isa::Load bias = LoadAct(0x200, 5, 2);
  bias.buffer = isa::kBufAcc;
  bias.dst = 8;
  bias.hbm_stride = 0;
  isa::Gemm g = G(3, 2, 2, true, D(true, false, true, true));    // L->C -1, C->L +1, C->S +1
  isa::Gemm h = G(2, 2, 2, false, D(false, false, true, true));  // C->L +1, C->S +1
  h.acc = 4;
  isa::Store st;
  st.deps = D(true, false, true, false);  // C->S -1, S->C +1
  st.hbm_addr = 0x1000;
  st.hbm_stride = 64;
  st.rows = 2;
  st.elems = 3;  // 12 bytes: one beat a row
  const auto p = Program(cfg, {a, b, bias, g, h, st});
  const auto r = RunProgram(m, p);
  ASSERT_TRUE(r.ok()) << r.message;
  const std::array<uint32_t, 4> tokens{1, 2, 1, 1};  // L->C, C->L, C->S, S->C
  EXPECT_EQ(r.counters.tokens, tokens);
  EXPECT_EQ(r.counters.rows, 5u);
  EXPECT_EQ(r.counters.per_module, (std::array<uint64_t, 3>{2, 3, 1}));
  EXPECT_EQ(r.counters.dma_read_bytes, 32u * p.size() + 32u * (3 + 1 + 1));
  EXPECT_EQ(r.counters.hbm_bytes_read, 8u * 3 + 4u * 1 + 8u * 5);
  EXPECT_EQ(r.counters.dma_write_bytes, 32u * 2);
  EXPECT_EQ(r.counters.hbm_bytes_written, 12u * 2);
}

TEST_F(IsaTest, HbmErrors) {
  auto cfg = SmallConfig();
  cfg.hbm_bytes = 0x10000;
  Machine m(cfg);
  isa::Load a = LoadAct(0x100 + 2, 1, 1), b = LoadAct(0x100, 2, 1), c = LoadAct(0x10000, 1, 1);
  b.hbm_stride = 48;
  isa::Load d = LoadAct(0xFFE0, 1, 4);
  d.buffer = isa::kBufAcc;  // 16 bytes: fits
  isa::Load e = LoadAct(0xFFC0, 2, 4);
  e.buffer = isa::kBufAcc;  // second row 0xFFE0 + 16: fits
  isa::Load f = LoadAct(0xFFC0, 3, 1);
  f.hbm_stride = 32;
  isa::Load huge = LoadAct(~uint64_t(0) - 31, 1, 1);
  isa::Store s = St(0xFFE0, 1, 4), s2 = St(0xFFE0, 1, 4);
  s2.format = isa::kFmtBf16;
  isa::Store s3 = St(0xFFC0, 2, 4);
  s3.hbm_stride = 64;
  ExpectError(RunProgram(m, Program(cfg, {a})), ErrorCode::kHbm, 1, {"hbm_addr=0x102"});
  ExpectError(RunProgram(m, Program(cfg, {b})), ErrorCode::kHbm, 1, {"hbm_stride=48"});
  ExpectError(RunProgram(m, Program(cfg, {c})), ErrorCode::kHbm, 1,
              {"hbm_addr=0x10000", "HbmBytes=0x10000"});
  ExpectError(RunProgram(m, Program(cfg, {f})), ErrorCode::kHbm, 1, {"rows=3", "0x10002"});
  ExpectError(RunProgram(m, Program(cfg, {huge})), ErrorCode::kHbm, 1, {"HbmBytes"});
  ExpectError(RunProgram(m, Program(cfg, {s3})), ErrorCode::kHbm, 1, {"STORE", "HbmBytes"});
  EXPECT_TRUE(RunProgram(m, Program(cfg, {d, e, s, s2})).ok());
  // The program itself: misaligned or out of HBM.
  auto p = Program(cfg, {});
  m.WriteProgram(0x200, p);
  ExpectError(m.Run(0x210, 2), ErrorCode::kHbm, 0, {"program fetch"});
  m.WriteProgram(0xFFE0, {Hdr(cfg, 2)});
  ExpectError(m.Run(0xFFE0, 2), ErrorCode::kHbm, 1, {"program fetch", "HbmBytes"});
}

TEST_F(IsaTest, NoEndAndTheFirstEndEndsTheProgram) {
  const auto cfg = SmallConfig();
  Machine m(cfg);
  ExpectError(RunProgram(m, Program(cfg, {LoadAct(0, 1, 1)}, false)), ErrorCode::kNoEnd, 2,
              {"no END"});
  // Bytes after the first END are not fetched.
  auto p = Program(cfg, {isa::End{}, LoadAct(0, 0, 0)});
  m.WriteProgram(0, p);
  const uint8_t junk = 0xEE;
  m.WriteHbm(2 * 32, &junk, 1);
  const auto r = m.Run(0, uint32_t(p.size()));
  EXPECT_TRUE(r.ok()) << r.message;
  EXPECT_EQ(r.pc, 1u);
  EXPECT_EQ(r.counters.instructions, 2u);
}

TEST_F(IsaTest, TheLowestFailingPcIsReported) {
  const auto cfg = SmallConfig();
  Machine m(cfg);
  isa::Store bad_store = St(0, 0, 1);
  // A field error in the store module after one in the load module: the load's pc.
  ExpectError(RunProgram(m, Program(cfg, {LoadAct(0, 1, 1), LoadAct(0, 0, 1), bad_store})),
              ErrorCode::kField, 2, {"LOAD", "rows=0"});
  // Check errors come before token errors even at a higher pc: a GEMM waits forever at pc 1,
  // the STORE at pc 2 is malformed.
  ExpectError(
      RunProgram(m, Program(cfg, {G(1, 1, 1, true, D(true, false, false, false)), bad_store})),
      ErrorCode::kField, 2, {"STORE", "rows=0"});
}

TEST_F(IsaTest, DeadlockIsFoundAtTheLowestBlockedInstruction) {
  const auto cfg = SmallConfig();
  Machine m(cfg);
  // A pop with no matching push.
  ExpectError(RunProgram(m, Program(cfg, {LoadAct(0, 1, 1), G(1, 1, 1, true, D(true, 0, 0, 0))})),
              ErrorCode::kDeadlock, 2, {"GEMM", "load->compute", "compute at 2"});
  // Circular wait: load waits for compute, compute for store, store for compute.
  ExpectError(RunProgram(m, Program(cfg, {St(0, 1, 1, D(true, false, true, false)),
                                          LoadAct(0, 1, 1, D(false, true, false, false)),
                                          G(1, 1, 1, true, D(false, true, false, true))})),
              ErrorCode::kDeadlock, 1, {"STORE", "compute->store"});
  // A push arriving after a wait in the same module cannot help it.
  ExpectError(RunProgram(m, Program(cfg, {G(1, 1, 1, true, D(false, true, false, false)),
                                          St(0, 1, 1, D(true, false, true, false)),
                                          G(1, 1, 1, false, D(false, false, false, true))})),
              ErrorCode::kDeadlock, 1, {"GEMM", "store->compute"});
  // The same tokens in an order that works; leftover tokens at END are allowed.
  const auto r = RunProgram(m, Program(cfg, {G(1, 1, 1, true, D(false, false, false, true)),
                                             St(0, 1, 1, D(true, false, true, false)),
                                             G(1, 1, 1, false, D(false, true, false, false)),
                                             LoadAct(0, 1, 1, D(false, false, false, true))}));
  EXPECT_TRUE(r.ok()) << r.message;
}

TEST_F(IsaTest, DispatchQueueDeadlock) {
  // QueueDepth + 1 GEMMs popping load->compute, then the LOADs that push their tokens: fine for
  // independent module streams, but the dispatcher fills the compute queue with QueueDepth GEMMs
  // that cannot start, blocks on the next GEMM and never dispatches the LOADs.
  auto cfg = SmallConfig();
  const int q = 4;
  std::vector<Instr> body;
  for (int i = 0; i <= q; ++i) body.push_back(G(1, 1, 1, true, D(true, false, false, false)));
  for (int i = 0; i <= q; ++i) body.push_back(LoadAct(0, 1, 1, D(false, false, false, true)));
  const auto prog = Program(cfg, body);
  for (const int depth : {q + 1, q + 2, 32, 65535}) {
    cfg.queue_depth = depth;
    Machine m(cfg);
    const auto r = RunProgram(m, prog);
    EXPECT_TRUE(r.ok()) << "QueueDepth=" << depth << ": " << r.message;
  }
  for (const int depth : {1, q}) {
    cfg.queue_depth = depth;
    Machine m(cfg);
    SCOPED_TRACE(fmt::format("QueueDepth={}", depth));
    // The lowest blocked pc is the first GEMM; the dispatcher waits on the full compute queue
    // with the GEMM at pc depth + 1.
    ExpectError(RunProgram(m, prog), ErrorCode::kDeadlock, 1,
                {"GEMM", "load->compute", "dispatcher", "compute queue is full",
                 fmt::format("QueueDepth={}", depth), fmt::format("at pc {}", depth + 1),
                 "load at " + std::to_string(q + 2) + " (not dispatched)"});
  }
  // The same work with each LOAD before the GEMM it feeds runs even with one-entry queues.
  std::vector<Instr> ordered;
  for (int i = 0; i <= q; ++i) {
    ordered.push_back(LoadAct(0, 1, 1, D(false, false, false, true)));
    ordered.push_back(G(1, 1, 1, true, D(true, false, false, false)));
  }
  cfg.queue_depth = 1;
  Machine m(cfg);
  const auto r = RunProgram(m, Program(cfg, ordered));
  EXPECT_TRUE(r.ok()) << r.message;
  // A dispatch deadlock in the store module, below a lower-pc head blocked on a token: the pc
  // is the lowest blocked head (the STORE), the dispatcher waits on the full store queue.
  cfg.queue_depth = 2;
  Machine m2(cfg);
  ExpectError(
      RunProgram(m2, Program(cfg, {St(0, 1, 1, D(true, false, false, false)), St(0, 1, 1),
                                   St(0, 1, 1), G(1, 1, 1, true, D(false, false, false, true))})),
      ErrorCode::kDeadlock, 1, {"STORE", "compute->store", "store queue is full", "at pc 3"});
}

TEST_F(IsaTest, QueueDepthMustFitSixteenBits) {
  for (const int depth : {0, -1, 65536}) {
    auto cfg = SmallConfig();
    cfg.queue_depth = depth;
    EXPECT_THROW(Machine{cfg}, std::invalid_argument) << depth;
  }
}

TEST_F(IsaTest, TokenOverflowBeyond255) {
  const auto cfg = SmallConfig();
  Machine m(cfg);
  const Deps push = D(false, false, false, true), pop = D(true, false, false, false);
  // 255 tokens never popped are allowed; the 256th push overflows.
  std::vector<Instr> body(255, LoadAct(0, 1, 1, push));
  EXPECT_TRUE(RunProgram(m, Program(cfg, body)).ok());
  body.push_back(LoadAct(0, 1, 1, push));
  body.push_back(LoadAct(0, 1, 1, push));
  ExpectError(RunProgram(m, Program(cfg, body)), ErrorCode::kTokenOverflow, 256,
              {"push #256", "load->compute", "at most 255"});
  // 300 pushes and 300 pops, but nothing stops load from running 256 ahead: overflow too.
  std::vector<Instr> racy;
  for (int i = 0; i < 300; ++i) {
    racy.push_back(LoadAct(0, 1, 1, push));
    racy.push_back(G(1, 1, 1, true, pop));
  }
  ExpectError(RunProgram(m, Program(cfg, racy)), ErrorCode::kTokenOverflow, 2 * 255 + 1,
              {"push #256"});
  // With a token back from compute every 100 GEMMs, load stays at most 100 ahead: fine.
  std::vector<Instr> paced;
  for (int i = 0; i < 300; ++i) {
    paced.push_back(LoadAct(0, 1, 1, D(false, i >= 100 && i % 100 == 0, false, true)));
    paced.push_back(G(1, 1, 1, true, D(true, false, i % 100 == 99 && i < 200, false)));
  }
  const auto r = RunProgram(m, Program(cfg, paced));
  EXPECT_TRUE(r.ok()) << r.message;
  // An overflow is reported before a deadlock later in the program.
  body = std::vector<Instr>(256, LoadAct(0, 1, 1, push));
  body.push_back(St(0, 1, 1, D(true, false, false, false)));
  ExpectError(RunProgram(m, Program(cfg, body)), ErrorCode::kTokenOverflow, 256, {"push #256"});
}

// ---------------------------------------------------------------------------------------------
// Semantics of single instructions

TEST_F(IsaTest, SparseHbmImage) {
  auto cfg = SmallConfig();
  cfg.hbm_bytes = uint64_t(1) << 40;
  Machine m(cfg);
  EXPECT_EQ(m.HbmPages(), 0u);
  const auto z = m.ReadHbm((uint64_t(1) << 40) - 100, 100);
  EXPECT_EQ(z, std::vector<uint8_t>(100, 0));
  std::vector<uint8_t> data(5000);
  for (size_t i = 0; i < data.size(); ++i) data[i] = uint8_t(i * 7 + 1);
  m.WriteHbm(0x123456789Aull, data.data(), data.size());
  EXPECT_EQ(m.HbmPages(), 2u);  // 5000 bytes from page offset 0x89A: two 4 KB pages
  EXPECT_EQ(m.ReadHbm(0x123456789Aull, data.size()), data);
  EXPECT_EQ(m.ReadHbm(0x1234567899ull, 1)[0], 0);
  EXPECT_THROW(m.WriteHbm((uint64_t(1) << 40) - 1, data.data(), 2), std::out_of_range);
  EXPECT_THROW(m.ReadHbm(~uint64_t(0), 2), std::out_of_range);
  EXPECT_THROW(Machine(MachineConfig{0, 4}), std::invalid_argument);
}

// A transposing LOAD (version 1.3) on a non-square machine: HBM row i, element e lands in buffer
// row dst + e, element i; elements at or beyond rows become +0 (over what was there); each HBM
// row is read once.
// The LOADs' bytes that nothing wrote are counted (a device model's background is not the
// model's zeros, so a program reading them cannot be compared): partly written pages, pages never
// written, and bytes a STORE of an earlier program wrote count as written.
TEST_F(IsaTest, LoadsOfBytesNeverWrittenAreCounted) {
  const auto cfg = SmallConfig();
  Machine m(cfg);
  const uint16_t v[3] = {0x3F80, 0x4000, 0x4040};
  m.WriteHbm(0x1000, v, sizeof(v));  // 6 bytes
  isa::Load full = LoadAct(0x1000, 1, 3), part = LoadAct(0x1000, 2, 4);
  part.hbm_stride = 0x1000;  // row 0: 0x1000..7 (0x1006..7 unwritten), row 1: 0x2000..7 (none)
  auto r = RunProgram(m, Program(cfg, {full, part}));
  ASSERT_TRUE(r.ok()) << r.message;
  EXPECT_EQ(r.unwritten_bytes_read, 10u);
  EXPECT_EQ(r.first_unwritten, 0x1006u);
  EXPECT_EQ(r.first_unwritten_pc, 2u);
  EXPECT_EQ(m.Act(0, 2), 0x4040);
  EXPECT_EQ(m.Act(0, 3), 0);
  // A STORE's bytes count as written for the next program.
  isa::Gemm g;
  g.rows = 1, g.kv = uint16_t(cfg.r), g.nv = uint16_t(cfg.c), g.load_weights = true;
  g.deps.pop_prev = g.deps.push_next = true;
  isa::Store st;
  st.hbm_addr = 0x3000, st.hbm_stride = 32, st.rows = 1, st.elems = uint16_t(cfg.c);
  st.deps.pop_prev = true;
  ASSERT_TRUE(
      RunProgram(m, Program(cfg, {LoadAct(0x1000, 1, 3, D(false, false, false, true)), g, st}))
          .ok());
  r = RunProgram(m, Program(cfg, {LoadAct(0x3000, 1, uint16_t(std::min(cfg.r, 2 * cfg.c)))}));
  ASSERT_TRUE(r.ok()) << r.message;
  EXPECT_EQ(r.unwritten_bytes_read, 0u);
}

// What the on-chip comparison (accel::OnChipDiff) relies on: the elements each LOAD and GEMM
// defined (whole buffer rows, the accumulators' columns below nv only, nothing computed from an
// element never written), and the loaded weight tile padded with +0 beyond kv and nv, forgotten
// at the next Run.
TEST_F(IsaTest, DefinedElementsAndTheLoadedWeightTile) {
  const auto cfg = SmallConfig();
  ASSERT_GE(cfg.r, 3);
  ASSERT_GE(cfg.c, 3);
  Machine m(cfg);
  std::vector<uint16_t> v(512, 0x3F80);  // 1.0
  m.WriteHbm(0x1000, v.data(), v.size() * 2);
  isa::Load act = LoadAct(0x1000, 2, 1),
            wgt = LoadAct(0x1000, uint16_t(cfg.r), 1, D(false, false, false, true));
  act.dst = 1;
  wgt.buffer = isa::kBufWgt;
  isa::Gemm g;
  g.rows = 2, g.act = 1, g.acc = 3, g.kv = 2, g.nv = 2, g.load_weights = true;
  g.deps.pop_prev = true;
  ASSERT_TRUE(RunProgram(m, Program(cfg, {act, wgt, g})).ok());
  for (int col = 0; col < cfg.r; ++col) {
    EXPECT_FALSE(m.ActDefined(0, col));
    EXPECT_TRUE(m.ActDefined(1, col)) << col;  // the whole row, elems = 1
    EXPECT_TRUE(m.ActDefined(2, col)) << col;
    EXPECT_FALSE(m.ActDefined(3, col));
  }
  for (int col = 0; col < cfg.c; ++col) {
    EXPECT_TRUE(m.WgtDefined(cfg.r - 1, col));
    EXPECT_EQ(m.AccDefined(3, col), col < 2) << col;
    EXPECT_EQ(m.AccDefined(4, col), col < 2) << col;
    EXPECT_FALSE(m.AccDefined(2, col));
  }
  ASSERT_TRUE(m.WeightsLoaded());
  for (int k = 0; k < cfg.r; ++k) {
    for (int n = 0; n < cfg.c; ++n) {
      EXPECT_EQ(m.W(k, n), k < 2 && n < 1 ? 0x3F80 : 0) << k << ", " << n;
    }
  }
  for (int k = 0; k < cfg.r; ++k) {
    for (int n = 0; n < cfg.c; ++n) EXPECT_TRUE(m.WDefined(k, n)) << k << ", " << n;
  }
  // A run without a weight-loading GEMM: no tile; what was defined stays defined.
  ASSERT_TRUE(RunProgram(m, Program(cfg, {act})).ok());
  EXPECT_FALSE(m.WeightsLoaded());
  EXPECT_TRUE(m.AccDefined(3, 0));
  // A GEMM reading an activation row never written (row 0) defines nothing; one whose weight
  // tile comes from rows never written (wgt rows 8..) leaves those weights undefined.
  isa::Gemm g0 = g;
  g0.act = 0, g0.rows = 1, g0.acc = 6, g0.deps = {};
  isa::Gemm gw = g;
  gw.wgt = 8, gw.acc = 7, gw.rows = 1, gw.deps = {};
  ASSERT_TRUE(RunProgram(m, Program(cfg, {g0, gw})).ok());
  EXPECT_FALSE(m.AccDefined(6, 0));
  EXPECT_FALSE(m.AccDefined(7, 0));
  EXPECT_FALSE(m.WDefined(0, 0));
  EXPECT_TRUE(m.WDefined(0, 2)) << "padding beyond nv is +0 whatever the buffer holds";
}

TEST_F(IsaTest, TransposingLoadWritesHbmRowsAsBufferColumns) {
  MachineConfig cfg = SmallConfig();
  cfg.r = 3, cfg.c = 5;  // act rows of 3, weight rows of 5, transposer side 5
  Machine m(cfg);
  std::vector<uint16_t> src(5 * 16);  // 5 rows of 16 elements (32-byte stride)
  for (size_t i = 0; i < src.size(); ++i) src[i] = uint16_t(0x3F80 + i);
  m.WriteHbm(0x400, src.data(), src.size() * 2);
  std::vector<uint8_t> ones(256, 0xFF);
  m.WriteHbm(0x100, ones.data(), ones.size());
  isa::Load fill_a = LoadAct(0x100, 8, 3), fill_w = LoadAct(0x100, 8, 5);
  fill_w.buffer = isa::kBufWgt;
  isa::Load ta = LoadAct(0x400, 2, 5), tw = LoadAct(0x400, 4, 5);
  ta.transpose = tw.transpose = true;
  ta.dst = 1;
  tw.buffer = isa::kBufWgt;
  tw.dst = 2;
  const auto r = RunProgram(m, Program(cfg, {fill_a, fill_w, ta, tw}));
  ASSERT_TRUE(r.ok()) << r.message;
  for (int e = 0; e < 5; ++e) {
    for (int i = 0; i < 3; ++i) {
      EXPECT_EQ(m.Act(1 + e, i), i < 2 ? src[size_t(i) * 16 + e] : 0) << e << "," << i;
    }
    for (int i = 0; i < 5; ++i) {
      EXPECT_EQ(m.Wgt(2 + e, i), i < 4 ? src[size_t(i) * 16 + e] : 0) << e << "," << i;
    }
  }
  EXPECT_EQ(m.Act(0, 0), 0xFFFF);  // rows outside dst .. dst + elems - 1 keep their values
  EXPECT_EQ(m.Act(6, 2), 0xFFFF);
  EXPECT_EQ(m.Wgt(1, 4), 0xFFFF);
  EXPECT_EQ(m.Wgt(7, 0), 0xFFFF);
  EXPECT_EQ(r.counters.hbm_bytes_read, 8u * 6 + 8u * 10 + 2u * 10 + 4u * 10);
  EXPECT_EQ(r.unwritten_bytes_read, 0u);
}

uint32_t F32(float f) {
  uint32_t u;
  std::memcpy(&u, &f, 4);
  return u;
}

// Version 1.5: a LOAD with hold keeps its row (not written to the accumulators); a LOAD with add
// writes each row read plus the held row, the vector unit's add (fma32(x, 1, held), RNE; FTZ in
// FTZ mode); elements at or beyond elems are +0; the held row is +0 when a run starts.
TEST_F(IsaTest, HoldAndAddLoadsAddTheHeldRowToEveryRow) {
  for (num::Mode mode : {num::Mode::kIeee, num::Mode::kFtz}) {
    SCOPED_TRACE(mode == num::Mode::kFtz ? "FTZ" : "IEEE");
    auto cfg = SmallConfig();  // C = 4
    cfg.mode = mode;
    Machine m(cfg);
    const uint32_t sub = 0x00000003, tiny = 0x00400000;  // subnormals
    const uint32_t held[4] = {F32(1.5f), F32(-2.0f), sub, F32(7.0f)};
    // Rows: an exact sum, one that rounds (1 + 2^-24 + 1.5 -> ties to even), a cancellation to
    // +0 (x + -x), subnormal + subnormal, infinities and NaN.
    const uint32_t rows[3][4] = {
        {F32(2.25f), F32(2.0f), tiny, F32(1.0f)},
        {0x3F800001, F32(-1.0f), sub, 0x7F800000},
        {F32(-1.5f), 0xFFC00000, 0x80000003, F32(-7.0f)},
    };
    m.WriteHbm(0x100, held, sizeof(held));
    for (int i = 0; i < 3; ++i) m.WriteHbm(0x200 + 32 * uint64_t(i), rows[i], sizeof(rows[i]));
    isa::Load h, a;
    h.buffer = a.buffer = isa::kBufAcc;
    h.hold = true, h.hbm_addr = 0x100, h.rows = 1, h.elems = 4;
    a.add = true, a.hbm_addr = 0x200, a.hbm_stride = 32, a.rows = 3, a.elems = 3, a.dst = 5;
    const auto r = RunProgram(m, Program(cfg, {h, a}));
    ASSERT_TRUE(r.ok()) << r.message;
    for (int i = 0; i < 3; ++i) {
      for (int e = 0; e < 4; ++e) {
        const uint32_t want =
            e < 3 ? isa::ApplyVectorOp(isa::VectorOp::kAdd, rows[i][e], held[e], 0, mode) : 0;
        EXPECT_EQ(m.Acc(5 + i, e), want) << i << "," << e;
      }
    }
    EXPECT_EQ(m.Acc(5, 0), F32(3.75f));
    EXPECT_EQ(m.Acc(5, 1), 0u);  // 2 + -2 = +0
    EXPECT_EQ(m.Acc(5, 2), mode == num::Mode::kFtz ? 0u : tiny + sub);
    // hold writes no accumulator row; the next run starts from a +0 held row.
    EXPECT_EQ(r.counters.hbm_bytes_read, 16u + 3 * 12u);
    a.dst = 0;
    const auto r2 = RunProgram(m, Program(cfg, {a}));
    ASSERT_TRUE(r2.ok()) << r2.message;
    EXPECT_EQ(m.Acc(0, 0), F32(2.25f));
    EXPECT_EQ(m.Acc(1, 0), 0x3F800001u);
    EXPECT_EQ(m.Acc(1, 1), F32(-1.0f));
  }
}

// STORE's col (version 1.6): elements col .. col + elems - 1 of each row, from byte 0 at
// hbm_addr, fp32 and bf16 (with relu); the bytes around are untouched.
TEST_F(IsaTest, StoreColumnStoresPartOfEachRow) {
  auto cfg = SmallConfig();
  cfg.r = cfg.c = 32;
  Machine m(cfg);
  std::vector<uint32_t> rows(2 * 32);
  for (size_t i = 0; i < rows.size(); ++i) rows[i] = F32(float(i) - 40.0f);
  m.WriteHbm(0x1000, rows.data(), rows.size() * 4);
  isa::Load l;
  l.buffer = isa::kBufAcc;
  l.hbm_addr = 0x1000, l.hbm_stride = 128, l.rows = 2, l.elems = 32, l.dst = 3;
  std::vector<uint8_t> ff(1024, 0xEE);
  m.WriteHbm(0x4000, ff.data(), ff.size());
  isa::Store f = St(0x4000, 2, 5), b = St(0x4200, 2, 16);
  f.acc = b.acc = 3, f.col = 24, f.hbm_stride = 64;
  b.col = 16, b.format = isa::kFmtBf16, b.activation = isa::kActRelu, b.hbm_stride = 64;
  EXPECT_EQ(isa::Disassemble(f), "STORE fp32 acc=3 rows=2 elems=5 col=24 hbm=0x4000 stride=64");
  l.deps.push_next = true;  // compute -> store: the rows are there
  f.deps.pop_prev = true;
  const auto r = RunProgram(m, Program(cfg, {l, f, b}));
  ASSERT_TRUE(r.ok()) << r.message;
  for (int i = 0; i < 2; ++i) {
    const auto fo = m.ReadHbm(0x4000 + 64 * uint64_t(i), 64);
    const auto bo = m.ReadHbm(0x4200 + 64 * uint64_t(i), 34);
    for (int e = 0; e < 16; ++e) {
      if (e < 5) {
        uint32_t got;
        std::memcpy(&got, &fo[size_t(4 * e)], 4);
        EXPECT_EQ(got, rows[size_t(i * 32 + 24 + e)]) << i << "," << e;
      }
      const uint32_t y = rows[size_t(i * 32 + 16 + e)];
      const uint16_t want = num::StoreBf16(y, true, cfg.mode);
      EXPECT_EQ(uint16_t(bo[size_t(2 * e)] | bo[size_t(2 * e + 1)] << 8), want) << i << "," << e;
    }
    EXPECT_EQ(fo[20], 0xEE);  // past elems
    EXPECT_EQ(bo[32], 0xEE);
  }
}

TEST_F(IsaTest, LoadFillsTheRestOfARowWithZerosAndStride0RepeatsARow) {
  const auto cfg = SmallConfig();
  Machine m(cfg);
  std::vector<uint8_t> ones(64, 0xFF);
  m.WriteHbm(0x100, ones.data(), ones.size());
  const uint16_t v[4] = {0x3F80, 0x4000, 0x4040, 0x4080};
  m.WriteHbm(0x200, v, sizeof(v));
  isa::Load full = LoadAct(0x100, 2, 4), part = LoadAct(0x200, 2, 2);
  part.hbm_stride = 0;
  ASSERT_TRUE(RunProgram(m, Program(cfg, {full})).ok());
  EXPECT_EQ(m.Act(1, 3), 0xFFFF);
  const auto r = RunProgram(m, Program(cfg, {part}));
  ASSERT_TRUE(r.ok()) << r.message;
  for (int row = 0; row < 2; ++row) {
    EXPECT_EQ(m.Act(row, 0), 0x3F80);
    EXPECT_EQ(m.Act(row, 1), 0x4000);
    EXPECT_EQ(m.Act(row, 2), 0);
    EXPECT_EQ(m.Act(row, 3), 0);
  }
  EXPECT_EQ(m.Act(2, 0), 0);
  EXPECT_EQ(r.counters.hbm_bytes_read, 8u);
  EXPECT_EQ(r.counters.per_module[0], 1u);
}

// ---------------------------------------------------------------------------------------------
// Whole GEMMs, tiled by hand

uint64_t Round32(uint64_t x) {
  return (x + 31) / 32 * 32;
}

// kBiasRow: the bias in accumulator row M, the first K-tile's GEMMs broadcast it (version 1.2).
enum class Init { kNone, kC0, kBias, kBiasRow };

struct GemmCase {
  MachineConfig cfg;
  gemm::Shape s;
  Init init = Init::kNone;
  bool bf16 = false;
  bool relu = false;
};

// bf16 values mostly in a moderate range, sometimes special (zeros, subnormals, inf, NaN).
uint16_t RandBf16(tb::Rng& rng) {
  const uint16_t sign = rng.Bit() ? 0x8000 : 0;
  switch (rng.Range(0, 39)) {
    case 0: return sign;
    case 1: return uint16_t(sign | rng.Range(1, 0x7F));  // subnormal
    case 2: return uint16_t(sign | 0x7F80);
    case 3: return 0x7FC1;
    default: return uint16_t(sign | (rng.Range(118, 136) << 7) | rng.Range(0, 0x7F));
  }
}
uint32_t RandFp32(tb::Rng& rng) {
  const uint32_t sign = rng.Bit() ? 0x80000000u : 0;
  switch (rng.Range(0, 39)) {
    case 0: return sign;
    case 1: return sign | (rng.U32() & 0x7FFFFFu);
    default: return sign | (uint32_t(rng.Range(118, 136)) << 23) | (rng.U32() & 0x7FFFFFu);
  }
}

// Where RunGemmCase puts a case in HBM: A by K-tiles (row m of tile kt = A[m][k0 .. k0+kv-1]),
// B by (kt, nt) tiles, C0 and the output by N-tiles, the bias by N-tiles of one row; every row
// 32-byte aligned (pa, pb, pc, po: the row pitches of A, B, C0 and the output).
struct GemmLayout {
  uint64_t pa, pb, pc, po;
  uint64_t base_a, base_b, base_c0, base_bias, base_o, base_prog;
};

GemmLayout LayOut(const GemmCase& gc) {
  const int M = gc.s.m, K = gc.s.k, N = gc.s.n, R = gc.cfg.r, C = gc.cfg.c;
  const int KT = (K + R - 1) / R, NT = (N + C - 1) / C;
  GemmLayout l;
  l.pa = Round32(R * 2);
  l.pb = Round32(C * 2);
  l.pc = Round32(C * 4);
  l.po = Round32(uint64_t(C) * (gc.bf16 ? 2 : 4));
  l.base_a = 0x100000;
  l.base_b = l.base_a + Round32(KT * M * l.pa) + 0x1000;
  l.base_c0 = l.base_b + Round32(uint64_t(KT) * NT * R * l.pb) + 0x1000;
  l.base_bias = l.base_c0 + uint64_t(NT) * M * l.pc + 0x1000;
  l.base_o = l.base_bias + NT * l.pc + 0x1000;
  l.base_prog = l.base_o + uint64_t(NT) * M * l.po + 0x1000;
  return l;
}

struct GemmOperands {
  const std::vector<uint16_t>& a;     // M x K bf16
  const std::vector<uint16_t>& b;     // K x N bf16
  const std::vector<uint32_t>& c0;    // M x N fp32 (Init::kC0)
  const std::vector<uint32_t>& bias;  // N fp32 (the bias inits), else empty
};

// Writes a case's operands into HBM at `l`.
void WriteOperands(Machine& mach, const GemmCase& gc, const GemmLayout& l, const GemmOperands& d) {
  const int M = gc.s.m, K = gc.s.k, N = gc.s.n, R = gc.cfg.r, C = gc.cfg.c;
  const int KT = (K + R - 1) / R, NT = (N + C - 1) / C;
  for (int kt = 0; kt < KT; ++kt) {
    const int k0 = kt * R, kv = std::min(R, K - k0);
    for (int m = 0; m < M; ++m) {
      mach.WriteHbm(l.base_a + (uint64_t(kt) * M + m) * l.pa, &d.a[size_t(m) * K + k0], kv * 2);
    }
    for (int nt = 0; nt < NT; ++nt) {
      const int n0 = nt * C, nv = std::min(C, N - n0);
      for (int k = 0; k < kv; ++k) {
        mach.WriteHbm(l.base_b + ((uint64_t(kt) * NT + nt) * R + k) * l.pb,
                      &d.b[size_t(k0 + k) * N + n0], nv * 2);
      }
    }
  }
  for (int nt = 0; nt < NT; ++nt) {
    const int n0 = nt * C, nv = std::min(C, N - n0);
    if (gc.init == Init::kC0) {
      for (int m = 0; m < M; ++m) {
        mach.WriteHbm(l.base_c0 + (uint64_t(nt) * M + m) * l.pc, &d.c0[size_t(m) * N + n0], nv * 4);
      }
    }
    if (!d.bias.empty()) mach.WriteHbm(l.base_bias + nt * l.pc, &d.bias[size_t(n0)], nv * 4);
  }
}

// Builds the program and data, runs them on the model and compares with tpu::gemm::Gemm.
void RunGemmCase(const GemmCase& gc, tb::Rng& rng) {
  const auto& cfg = gc.cfg;
  const int M = gc.s.m, K = gc.s.k, N = gc.s.n, R = cfg.r, C = cfg.c;
  SCOPED_TRACE(fmt::format(
      "{}x{}x{} on R={} C={} ActDepth={} WgtDepth={} AccDepth={} mode={} "
      "init={} {}{}",
      M, K, N, R, C, cfg.act_depth, cfg.wgt_depth, cfg.acc_depth, num::ModeName(cfg.mode),
      int(gc.init), gc.bf16 ? "bf16" : "fp32", gc.relu ? " relu" : ""));
  const bool bias_row = gc.init == Init::kBiasRow;
  ASSERT_LE(M + (bias_row ? 1 : 0), cfg.acc_depth);
  const int KT = (K + R - 1) / R, NT = (N + C - 1) / C;
  const int MB = (M + cfg.act_depth - 1) / cfg.act_depth;
  std::vector<uint16_t> a(size_t(M) * K), b(size_t(K) * N);
  for (auto& x : a) x = RandBf16(rng);
  for (auto& x : b) x = RandBf16(rng);
  std::vector<uint32_t> c0, bias;
  if (gc.init == Init::kC0) {
    c0.resize(size_t(M) * N);
    for (auto& x : c0) x = RandFp32(rng);
  } else if (gc.init == Init::kBias || bias_row) {
    bias.resize(size_t(N));
    for (auto& x : bias) x = RandFp32(rng);
    for (int m = 0; m < M; ++m) c0.insert(c0.end(), bias.begin(), bias.end());
  }

  Machine mach(cfg);
  const GemmLayout lay = LayOut(gc);
  const auto [pa, pb, pc, po, base_a, base_b, base_c0, base_bias, base_o, base_prog] = lay;
  WriteOperands(mach, gc, lay, {a, b, c0, bias});
  const int osize = gc.bf16 ? 2 : 4;

  // The program (see the token scheme in the comments).
  std::vector<Instr> prog{isa::Header{}};
  const int total = NT * KT * MB;
  int g = 0, reused = 0;
  for (int nt = 0; nt < NT; ++nt) {
    const int n0 = nt * C, nv = std::min(C, N - n0);
    bool acc_wait = nt > 0;  // the previous N-tile's STORE must have read the accumulators
    if (gc.init != Init::kNone) {
      isa::Load l;
      l.buffer = isa::kBufAcc;
      l.hbm_addr = gc.init == Init::kC0 ? base_c0 + uint64_t(nt) * M * pc : base_bias + nt * pc;
      l.hbm_stride = gc.init == Init::kC0 ? uint32_t(pc) : 0;  // 0: the bias on every row
      l.rows = uint16_t(bias_row ? 1 : M);
      l.dst = uint16_t(bias_row ? M : 0);
      l.elems = uint16_t(nv);
      l.deps.pop_next = acc_wait;
      acc_wait = false;
      prog.push_back(l);
    }
    for (int kt = 0; kt < KT; ++kt) {
      const int k0 = kt * R, kv = std::min(R, K - k0);
      for (int mb = 0; mb < MB; ++mb, ++g) {
        const int m0 = mb * cfg.act_depth, rows = std::min(cfg.act_depth, M - m0);
        // Load module: wait until GEMM g-1 has read the buffers, load, signal GEMM g.
        std::vector<isa::Load> loads;
        if (mb == 0) {
          isa::Load w;
          w.buffer = isa::kBufWgt;
          w.hbm_addr = base_b + (uint64_t(kt) * NT + nt) * R * pb;
          w.hbm_stride = uint32_t(pb);
          w.rows = uint16_t(kv);
          w.elems = uint16_t(nv);
          loads.push_back(w);
        }
        isa::Load x;
        x.buffer = isa::kBufAct;
        x.hbm_addr = base_a + (uint64_t(kt) * M + m0) * pa;
        x.hbm_stride = uint32_t(pa);
        x.rows = uint16_t(rows);
        x.elems = uint16_t(kv);
        loads.push_back(x);
        loads.front().deps.pop_next = g > 0;
        loads.back().deps.push_next = true;
        prog.insert(prog.end(), loads.begin(), loads.end());
        // Compute: one GEMM per M-block; the first of a K-tile loads the weights.
        isa::Gemm gm;
        gm.acc = uint16_t(m0);
        gm.rows = uint16_t(rows);
        gm.kv = uint16_t(kv);
        gm.nv = uint16_t(nv);
        gm.accumulate = kt > 0 || (gc.init != Init::kNone && !bias_row);
        gm.broadcast = kt == 0 && bias_row;
        gm.init_row = gm.broadcast ? uint16_t(M) : 0;
        gm.load_weights = mb == 0;
        reused += mb > 0;
        gm.deps.pop_prev = true;
        gm.deps.pop_next = acc_wait;
        acc_wait = false;
        gm.deps.push_prev = g < total - 1;
        gm.deps.push_next = kt == KT - 1 && mb == MB - 1;
        prog.push_back(gm);
      }
    }
    isa::Store st;
    st.format = gc.bf16 ? isa::kFmtBf16 : isa::kFmtFp32;
    st.activation = gc.relu ? isa::kActRelu : isa::kActNone;
    st.hbm_addr = base_o + uint64_t(nt) * M * po;
    st.hbm_stride = uint32_t(po);
    st.rows = uint16_t(M);
    st.elems = uint16_t(nv);
    st.deps.pop_prev = true;
    st.deps.push_prev = nt < NT - 1;
    prog.push_back(st);
  }
  prog.push_back(isa::End{});
  prog[0] = Hdr(cfg, uint32_t(prog.size()));
  if (MB > 1) {
    EXPECT_GT(reused, 0);
  }
  mach.WriteProgram(base_prog, prog);
  const RunResult r = mach.Run(base_prog, uint32_t(prog.size()));
  ASSERT_TRUE(r.ok()) << isa::ErrorName(r.code) << " at " << r.pc << ": " << r.message;
  EXPECT_EQ(r.counters.macs, uint64_t(M) * K * N);
  EXPECT_EQ(r.counters.hbm_bytes_written, uint64_t(M) * N * osize);
  EXPECT_EQ(r.counters.per_module[1], uint64_t(total) + (gc.init != Init::kNone ? NT : 0));
  EXPECT_EQ(r.counters.per_module[2], uint64_t(NT));

  const std::vector<uint32_t> want = gemm::Gemm(gc.s, a, b, c0, cfg.mode);
  int bad = 0;
  for (int nt = 0; nt < NT; ++nt) {
    const int n0 = nt * C, nv = std::min(C, N - n0);
    for (int m = 0; m < M; ++m) {
      const auto row = mach.ReadHbm(base_o + (uint64_t(nt) * M + m) * po, uint64_t(nv) * osize);
      for (int j = 0; j < nv; ++j) {
        const uint32_t acc = want[size_t(m) * N + n0 + j];
        if (gc.bf16) {
          const uint16_t e = num::StoreBf16(acc, gc.relu, cfg.mode);
          const uint16_t got = uint16_t(row[2 * j] | row[2 * j + 1] << 8);
          if (got != e && bad++ < 5) {
            ADD_FAILURE() << fmt::format("C[{}][{}]: expected {}, got {}", m, n0 + j,
                                         num::FormatBf16(e), num::FormatBf16(got));
          }
        } else {
          const uint32_t e = gc.relu ? num::Relu(acc) : acc;
          uint32_t got = 0;
          for (int i = 3; i >= 0; --i) got = got << 8 | row[4 * j + i];
          if (got != e && bad++ < 5) {
            ADD_FAILURE() << fmt::format("C[{}][{}]: expected {}, got {}", m, n0 + j,
                                         num::FormatFp32(e), num::FormatFp32(got));
          }
        }
      }
    }
  }
  EXPECT_EQ(bad, 0) << "mismatching elements";
}

MachineConfig Cfg(int r, int c, int act, int wgt, int acc, num::Mode mode = num::Mode::kIeee) {
  MachineConfig m;
  m.r = r, m.c = c, m.act_depth = act, m.wgt_depth = wgt, m.acc_depth = acc;
  m.hbm_bytes = uint64_t(1) << 32;
  m.mode = mode;
  return m;
}

TEST_F(IsaTest, HandTiledGemmMatchesGoldenGemm) {
  tb::Rng rng(test::TestSeed());
  const MachineConfig cfgs[] = {Cfg(4, 4, 16, 4, 128),    Cfg(1, 2, 3, 1, 128),
                                Cfg(3, 5, 7, 3, 128),     Cfg(16, 16, 64, 16, 128),
                                Cfg(8, 16, 100, 8, 128),  Cfg(16, 4, 5, 16, 128, num::Mode::kFtz),
                                Cfg(32, 32, 128, 32, 128)};
  const gemm::Shape shapes[] = {{1, 1, 1}, {17, 19, 23}, {64, 64, 64}, {5, 33, 1}, {100, 7, 30}};
  for (const auto& cfg : cfgs) {
    for (const auto& s : shapes) {
      RunGemmCase({cfg, s, Init::kNone, false, false}, rng);
    }
  }
}

TEST_F(IsaTest, InitialCBiasReluAndBf16Stores) {
  tb::Rng rng(test::TestSeed());
  for (const auto mode : {num::Mode::kIeee, num::Mode::kFtz}) {
    for (const Init init : {Init::kNone, Init::kC0, Init::kBias, Init::kBiasRow}) {
      for (const bool bf16 : {false, true}) {
        for (const bool relu : {false, true}) {
          RunGemmCase({Cfg(4, 3, 6, 4, 64, mode), {13, 9, 7}, init, bf16, relu}, rng);
          RunGemmCase({Cfg(16, 16, 32, 16, 64, mode), {40, 20, 33}, init, bf16, relu}, rng);
        }
      }
    }
  }
}

TEST_F(IsaTest, RandomTiledGemms) {
  tb::Rng rng(test::TestSeed());
  const uint64_t n = test::Scaled(60);
  for (uint64_t i = 0; i < n; ++i) {
    GemmCase gc;
    const int m = rng.Range(1, 70);
    gc.init = Init(rng.Range(0, 3));
    // The accumulators exactly full is legal, except that a bias row needs one more.
    const int acc_min = m + (gc.init == Init::kBiasRow ? 1 : 0);
    gc.cfg = Cfg(rng.Range(1, 20), rng.Range(1, 20), rng.Range(1, 40), rng.Range(1, 20),
                 rng.Range(acc_min, m + 20), rng.Bit() ? num::Mode::kFtz : num::Mode::kIeee);
    gc.cfg.wgt_depth = std::max(gc.cfg.wgt_depth, gc.cfg.r);
    gc.s = {m, rng.Range(1, 60), rng.Range(1, 60)};
    gc.bf16 = rng.Bit();
    gc.relu = rng.Bit();
    SCOPED_TRACE(fmt::format("random case {}", i));
    RunGemmCase(gc, rng);
    if (HasFatalFailure()) return;
  }
}

TEST_F(IsaTest, HostCompiledGemmRunsAtQueueDepth1To4) {
  // The host library's programs pop only tokens pushed earlier in program order, so they run at
  // every QueueDepth, whether compiled for the machine's depth (D <= QueueDepth) or for the
  // default 32 (D up to 32), with the same results bit for bit.
  tb::Rng rng(test::TestSeed());
  const int M = 8, K = 16, N = 64;
  std::vector<uint16_t> a(size_t(M) * K), b(size_t(K) * N);
  for (auto& x : a) x = RandBf16(rng);
  for (auto& x : b) x = RandBf16(rng);
  const auto want = gemm::Gemm({M, K, N}, a, b, {}, num::Mode::kIeee);
  auto roomy = Cfg(4, 4, 64, 64, 64);  // 16 weight slots, D = 5 (4 N-tiles per block)
  const auto p32 = host::CompileGemm(roomy, M, K, N, host::Init::kOverwrite);
  ASSERT_EQ(host::PlanLayer(roomy, M, K, N, p32.a.tile, p32.out.tile).depth, 5);
  for (int depth = 1; depth <= 4; ++depth) {
    auto cfg = roomy;
    cfg.queue_depth = depth;
    const auto pq = host::CompileGemm(cfg, M, K, N, host::Init::kOverwrite);
    EXPECT_EQ(host::PlanLayer(cfg, M, K, N, pq.a.tile, pq.out.tile).depth, depth);
    for (const auto* p : {&p32, &pq}) {
      SCOPED_TRACE(
          fmt::format("QueueDepth={}, compiled for QueueDepth={}", depth, p->prog.cfg.queue_depth));
      Machine m(cfg);
      host::WriteMatrix(m, p->a, a);
      host::WriteWeights(m, p->b, b);
      const auto r = host::Run(m, p->prog);
      ASSERT_TRUE(r.ok()) << isa::ErrorName(r.code) << " at " << r.pc << ": " << r.message;
      EXPECT_EQ(r.counters.macs, uint64_t(M) * K * N);
      EXPECT_EQ(host::ReadMatrixFp32(m, p->out), want);
    }
  }
}

// ---------------------------------------------------------------------------------------------
// The vector unit (version 1.4): VOP, LOAD into the vector memory, STORE from it.

MachineConfig VectorConfig() {
  MachineConfig c;
  c.r = 4;
  c.c = 4;
  c.act_depth = 16;
  c.wgt_depth = 16;
  c.acc_depth = 32;
  c.vmem_depth = 24;
  c.hbm_bytes = 1 << 20;
  return c;
}

isa::Vop V(isa::VectorOp op, uint16_t a, uint16_t d, uint16_t n = 1, uint16_t m = 1) {
  isa::Vop v;
  v.op = uint8_t(op);
  v.a = a, v.d = d, v.n = n, v.m = m;
  v.asi = 1, v.dsi = 1, v.aso = n, v.dso = n;
  return v;
}

isa::Load LoadVmem(uint64_t addr, uint16_t dst, uint16_t rows, uint16_t elems, uint8_t format) {
  isa::Load l;
  l.buffer = isa::kBufVmem;
  l.format = format;
  l.hbm_addr = addr;
  l.hbm_stride = 32;
  l.dst = dst;
  l.rows = rows;
  l.elems = elems;
  return l;
}

TEST_F(IsaTest, VopEncodingRoundTripsAndItsReservedBytes) {
  isa::Vop v = V(isa::VectorOp::kLeakyRelu, 0x0102, 0x0304, 0x0506, 0x0708);
  v.deps = D(true, false, true, false);
  v.a_vmem = true, v.b_scalar = true, v.scalar = 0x3DCCCCCD;
  v.b = 0x090A, v.asi = 0x0B0C, v.aso = 0x0D0E, v.bsi = 0x0F10, v.bso = 0x1112;
  v.dsi = 0x1314, v.dso = 0x1516;
  const Bytes want = {0x06, 0x05, 0,    0,    12,   0x05, 0x02, 0x01, 0x0A, 0x09, 0x04,
                      0x03, 0x06, 0x05, 0x08, 0x07, 0x0C, 0x0B, 0x0E, 0x0D, 0x10, 0x0F,
                      0x12, 0x11, 0x14, 0x13, 0x16, 0x15, 0xCD, 0xCC, 0xCC, 0x3D};
  EXPECT_EQ(isa::Encode(v), want);
  const auto d = isa::Decode(want.data());
  ASSERT_TRUE(d.ok()) << d.message;
  EXPECT_EQ(d.instr, Instr(v));
  EXPECT_EQ(isa::Disassemble(v),
            "VOP leaky_relu d=vmem:772 a=vmem:258 b=scalar:0x3DCCCCCD n=1286 m=1800 strides "
            "a=2828,3342 b=3856,4370 d=4884,5398  [pop_prev push_prev]");
  EXPECT_EQ(isa::ModuleOf(Instr(v)), isa::Module::kStore);
  // Bytes 2-3; spaces bits 3-7; the scalar without b_scalar; next flags (the store module).
  Bytes b = isa::Encode(V(isa::VectorOp::kAdd, 0, 0));
  for (int byte : {2, 3, 28, 29, 30, 31}) {
    Bytes x = b;
    x[size_t(byte)] = 1;
    const auto dx = isa::Decode(x.data());
    EXPECT_EQ(dx.code, ErrorCode::kReserved) << byte;
    EXPECT_NE(dx.message.find(fmt::format("byte {}", byte)), std::string::npos) << dx.message;
  }
  b[5] = 0x08;
  EXPECT_EQ(isa::Decode(b.data()).code, ErrorCode::kReserved);
  b[5] = 0;
  b[1] = 0x08;  // push_next
  EXPECT_EQ(isa::Decode(b.data()).code, ErrorCode::kReserved);
  // LOAD's byte 6 exists for the vector memory only; STORE's with the unit only.
  Bytes l = isa::Encode(LoadVmem(0, 0, 1, 1, isa::kFmtBf16));
  EXPECT_TRUE(isa::Decode(l.data()).ok());
  EXPECT_EQ(isa::Decode(l.data(), false).code, ErrorCode::kReserved);
  l[isa::kLoadBufferByte] = isa::kBufAcc;
  EXPECT_EQ(isa::Decode(l.data()).code, ErrorCode::kReserved);
  isa::Store st = St(0, 1, 1);
  st.source = isa::kSrcVmem;
  const Bytes sb = isa::Encode(st);
  EXPECT_EQ(sb[6], 1);
  EXPECT_TRUE(isa::Decode(sb.data()).ok());
  EXPECT_EQ(isa::Decode(sb.data(), false).code, ErrorCode::kReserved);
}

TEST_F(IsaTest, VectorUnitErrors) {
  // Without the unit: VOP is an unknown opcode, buffer 3 an undefined buffer.
  Machine plain(SmallConfig());
  ExpectError(RunProgram(plain, Program(SmallConfig(), {V(isa::VectorOp::kCopy, 0, 0)})),
              ErrorCode::kOpcode, 1, {"VOP", "no vector unit"});
  ExpectError(RunProgram(plain, Program(SmallConfig(), {LoadVmem(0, 0, 1, 1, 0)})),
              ErrorCode::kField, 1, {"buffer=3", "0, 1 or 2"});
  const MachineConfig cfg = VectorConfig();
  Machine m(cfg);
  struct Case {
    Instr in;
    std::vector<std::string> words;
  };
  isa::Vop bad_op = V(isa::VectorOp::kCopy, 0, 0);
  bad_op.op = isa::kNumVectorOps;
  isa::Vop both = V(isa::VectorOp::kAdd, 0, 0);
  both.b_vmem = both.b_scalar = true;
  isa::Vop past_a = V(isa::VectorOp::kCopy, 30, 0, 2, 2);  // acc rows 30 .. 33
  isa::Vop past_b = V(isa::VectorOp::kAdd, 0, 0, 4, 1);
  past_b.b = 21, past_b.b_vmem = true, past_b.bsi = 1;  // vmem rows 21 .. 24
  isa::Vop past_d = V(isa::VectorOp::kExp, 0, 20, 1, 3);
  past_d.dso = 2;  // vmem rows 20, 22, 24
  isa::Vop unary_b = V(isa::VectorOp::kExp, 0, 0);
  unary_b.b = 60000;  // exp reads no B: its rows are not checked
  isa::Load ltr = LoadVmem(0, 0, 1, 1, 0);
  ltr.transpose = true;
  isa::Store sv = St(0, 2, 1);
  sv.source = isa::kSrcVmem, sv.acc = 23;
  const Case cases[] = {
      {bad_op,
       {fmt::format("op={}", isa::kNumVectorOps), fmt::format("0..{}", isa::kNumVectorOps - 1)}},
      {both, {"b_vmem", "b_scalar"}},
      {V(isa::VectorOp::kCopy, 0, 0, 0, 1), {"n=0"}},
      {V(isa::VectorOp::kCopy, 0, 0, 1, 0), {"m=0"}},
      {past_a, {"a=30", "row 33", "AccDepth=32"}},
      {past_b, {"b=21", "row 24", "VmemDepth=24"}},
      {past_d, {"d=20", "row 24", "VmemDepth=24"}},
      {LoadVmem(0, 0, 1, 1, 2), {"format=2"}},
      {ltr, {"buffer=3", "transposed"}},
      {LoadVmem(0, 0, 1, 5, 0), {"elems=5", "1..4"}},
      {LoadVmem(0, 20, 5, 1, 0), {"dst=20", "VmemDepth=24"}},
      {sv, {"acc=23", "VmemDepth=24"}},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(isa::Disassemble(c.in));
    ExpectError(RunProgram(m, Program(cfg, {c.in})), ErrorCode::kField, 1, c.words);
  }
  EXPECT_TRUE(RunProgram(m, Program(cfg, {unary_b})).ok());
  isa::Vop scalar_b = V(isa::VectorOp::kLeakyRelu, 0, 0);
  scalar_b.b_scalar = true, scalar_b.b = 60000, scalar_b.scalar = 0x3DCCCCCD;
  EXPECT_TRUE(RunProgram(m, Program(cfg, {scalar_b})).ok());  // the scalar: no B rows
}

// A conv layer's epilogue on the vector unit, checked element by element against the contract's
// operations: accumulators (a GEMM's rows) plus a bias row loaded in bf16 (stride 0: one row for
// every pixel), a residual from HBM, relu, a 2x2 max pool by strided rows, a global sum across rows
// (D's stride 0, accumulating in order), then STORE from the vector memory.
TEST_F(IsaTest, VopsComputeTheContractsOperationsInOrder) {
  MachineConfig cfg = VectorConfig();
  cfg.vmem_depth = 48;  // results 0 .. 20, the residual 24 .. 39, the bias 47
  Machine m(cfg);
  tb::Rng rng(test::TestSeed());
  // Accumulators: 16 rows (a 4x4 image of 4 channels) from a GEMM of random bf16 data.
  std::vector<uint16_t> x(16 * 4), w(4 * 4);
  for (auto& v : x) v = RandBf16(rng);
  for (auto& v : w) v = RandBf16(rng);
  for (int i = 0; i < 16; ++i) m.WriteHbm(0x1000 + 32 * i, &x[size_t(i) * 4], 8);
  for (int k = 0; k < 4; ++k) m.WriteHbm(0x2000 + 32 * k, &w[size_t(k) * 4], 8);
  std::vector<uint16_t> bias(4), res(16 * 4);
  for (auto& v : bias) v = RandBf16(rng);
  for (auto& v : res) v = RandBf16(rng);
  m.WriteHbm(0x3000, bias.data(), 8);
  for (int i = 0; i < 16; ++i) m.WriteHbm(0x4000 + 32 * i, &res[size_t(i) * 4], 8);
  isa::Load lx = LoadAct(0x1000, 16, 4), lw = LoadAct(0x2000, 4, 4);
  lw.buffer = isa::kBufWgt;
  isa::Gemm g = G(16, 4, 4, true, D(true, false, false, true));
  lx.deps = D(false, false, false, true);
  isa::Load lb = LoadVmem(0x3000, 47, 1, 4, isa::kFmtBf16);
  lb.deps = D(true, false, false, false);  // after the GEMM (the compute -> store token)
  isa::Load lr = LoadVmem(0x4000, 24, 16, 4, isa::kFmtBf16);
  using Op = isa::VectorOp;
  isa::Vop add_bias = V(Op::kAdd, 0, 0, 16);  // acc + bias row (B stride 0)
  add_bias.b = 47, add_bias.b_vmem = true;
  isa::Vop add_res = V(Op::kAdd, 0, 0, 16);  // + residual, in place
  add_res.a_vmem = true, add_res.b = 24, add_res.b_vmem = true, add_res.bsi = 1;
  isa::Vop relu = V(Op::kRelu, 0, 0, 16);
  relu.a_vmem = true;
  // 2x2 max pool, stride 2: output (oh, ow) at row 16 + 2*oh + ow; tap (kh, kw) reads
  // 8*oh + 2*ow + 4*kh + kw: first max of taps (0,0) and (0,1), then the (1, *) taps into it.
  isa::Vop pool0 = V(Op::kMax, 0, 16, 2, 2);
  pool0.a_vmem = true, pool0.asi = 2, pool0.aso = 8, pool0.b = 1, pool0.b_vmem = true;
  pool0.bsi = 2, pool0.bso = 8, pool0.dsi = 1, pool0.dso = 2;
  isa::Vop pool1 = pool0;
  pool1.a = 4, pool1.b = 16, pool1.bsi = 1, pool1.bso = 2;
  isa::Vop pool2 = pool1;
  pool2.a = 5;
  isa::Vop sum = V(Op::kAdd, 16, 20, 3, 1);  // row 20 = 16 + 17 + 18 + 19, in order
  sum.a = 17, sum.a_vmem = true, sum.b = 20, sum.b_vmem = true, sum.dsi = 0, sum.bsi = 0;
  isa::Vop first = V(Op::kCopy, 16, 20);
  first.a_vmem = true;
  isa::Store out = St(0x5000, 5, 4);
  out.source = isa::kSrcVmem, out.acc = 16;
  const auto r = RunProgram(m, Program(cfg, {lx, lw, g, lb, lr, add_bias, add_res, relu, pool0,
                                             pool1, pool2, first, sum, out}));
  ASSERT_TRUE(r.ok()) << r.message;
  EXPECT_EQ(r.counters.per_module[2], 11u);  // 2 LOADs, 8 VOPs, the STORE
  // The same computation, element by element, with the contract's operations.
  const num::Mode mode = cfg.mode;
  std::vector<uint32_t> acc(16 * 4, 0u), v(24 * 4, 0u);
  for (int i = 0; i < 16; ++i) {
    for (int n = 0; n < 4; ++n) {
      for (int k = 0; k < 4; ++k) {
        acc[size_t(i * 4 + n)] =
            num::Mac(x[size_t(i * 4 + k)], w[size_t(k * 4 + n)], acc[size_t(i * 4 + n)], mode);
      }
    }
  }
  const auto f = [&](Op op, uint32_t a, uint32_t b) {
    return isa::ApplyVectorOp(op, a, b, 0, mode);
  };
  for (int i = 0; i < 16; ++i) {
    for (int n = 0; n < 4; ++n) {
      const size_t e = size_t(i * 4 + n);
      uint32_t t = f(Op::kAdd, acc[e], num::Bf16ToFp32(bias[size_t(n)]));
      t = f(Op::kAdd, t, num::Bf16ToFp32(res[e]));
      v[e] = f(Op::kRelu, t, 0);
    }
  }
  for (int oh = 0; oh < 2; ++oh) {
    for (int ow = 0; ow < 2; ++ow) {
      for (int n = 0; n < 4; ++n) {
        const auto at = [&](int kh, int kw) {
          return v[size_t((8 * oh + 2 * ow + 4 * kh + kw) * 4 + n)];
        };
        uint32_t t = f(Op::kMax, at(0, 0), at(0, 1));
        t = f(Op::kMax, at(1, 0), t);
        t = f(Op::kMax, at(1, 1), t);
        v[size_t((16 + 2 * oh + ow) * 4 + n)] = t;
      }
    }
  }
  for (int n = 0; n < 4; ++n) {
    uint32_t t = v[size_t(16 * 4 + n)];
    for (int i = 17; i < 20; ++i) t = f(Op::kAdd, v[size_t(i * 4 + n)], t);
    v[size_t(20 * 4 + n)] = t;
  }
  for (int i = 0; i < 5; ++i) {
    std::vector<uint32_t> got(4);
    m.ReadHbm(0x5000 + 32 * i, got.data(), 16);
    for (int n = 0; n < 4; ++n) {
      EXPECT_EQ(got[size_t(n)], v[size_t((16 + i) * 4 + n)]) << "row " << 16 + i << " lane " << n;
      EXPECT_EQ(m.Vmem(16 + i, n), v[size_t((16 + i) * 4 + n)]);
      EXPECT_TRUE(m.VmemDefined(16 + i, n));
    }
  }
}

}  // namespace
}  // namespace tpu
