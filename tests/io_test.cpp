// SPDX-License-Identifier: Apache-2.0
// Users' .npy files (tpu/io/npy.h), built byte by byte: every element type, byte order, layout
// and format version NumPy writes is read to the same tensor, and what cannot be read is one
// error that names it. NumPy's own files go through tpusim in tests/tpusim_cli_test.py and
// tests/python_test.py. This binary links tpu_io alone: the reader needs no other layer.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <stdexcept>
#include <string>
#include <vector>

#include "tpu/io/npy.h"

namespace tpu::io {
namespace {

// An .npy file: the header dict as given, padded as NumPy pads it, then `data`.
std::string Npy(const std::string& dict, const std::string& data, int major = 1) {
  const size_t pre = major == 1 ? 10 : 12;
  std::string h = dict;
  while ((pre + h.size() + 1) % 64 != 0) h += ' ';
  h += '\n';
  std::string r = "\x93NUMPY";
  r += char(major);
  r += char(0);
  const size_t n = h.size();
  r += char(n & 0xFF);
  r += char(n >> 8);
  if (major != 1) r += std::string{char(n >> 16), char(n >> 24)};
  return r + h + data;
}

std::string Dict(const std::string& descr, const std::string& shape, bool fortran = false) {
  return "{'descr': '" + descr + "', 'fortran_order': " + (fortran ? "True" : "False") +
         ", 'shape': " + shape + ", }";
}

// Values as stored little-endian (`big` reverses each element's bytes).
template <typename T>
std::string Bytes(const std::vector<T>& v, bool big = false) {
  std::string r;
  for (T x : v) {
    char b[sizeof(T)];
    std::memcpy(b, &x, sizeof(T));
    for (size_t j = 0; j < sizeof(T); ++j) r += b[big ? sizeof(T) - 1 - j : j];
  }
  return r;
}

uint32_t Bits(float f) {
  uint32_t u;
  std::memcpy(&u, &f, 4);
  return u;
}

void ExpectError(const std::string& file, const std::string& part) {
  try {
    ParseNpy(file, "t.npy");
    FAIL() << "no error; expected one naming " << part;
  } catch (const std::invalid_argument& e) {
    const std::string m = e.what();
    EXPECT_NE(m.find(part), std::string::npos) << m;
    EXPECT_EQ(m.rfind("t.npy: ", 0), 0u) << m;
    EXPECT_EQ(m.find('\n'), std::string::npos) << m;
  }
}

TEST(Npy, Float32BothByteOrders) {
  const std::vector<float> v{1.5f, -0.0f, 3.0e38f, 1e-45f, -7.25f, 0.1f};
  for (bool big : {false, true}) {
    std::string dtype;
    const Tensor t =
        ParseNpy(Npy(Dict(big ? ">f4" : "<f4", "(2, 3)"), Bytes(v, big)), "t.npy", &dtype);
    EXPECT_EQ(dtype, "float32");
    EXPECT_FALSE(t.is_int);
    EXPECT_EQ(t.shape, (Shape{2, 3}));
    ASSERT_EQ(t.f.size(), v.size());
    for (size_t k = 0; k < v.size(); ++k) EXPECT_EQ(Bits(t.f[k]), Bits(v[k])) << big << " " << k;
  }
}

TEST(Npy, Float16WidenedExactly) {
  // 1, -2, 2^-24 (the smallest subnormal), 65504 (the largest), -inf, a NaN, 2^-14 (smallest
  // normal), 1/3 rounded to half.
  const std::vector<uint16_t> h{0x3C00, 0xC000, 0x0001, 0x7BFF, 0xFC00, 0x7E00, 0x0400, 0x3555};
  for (bool big : {false, true}) {
    std::string dtype;
    const Tensor t = ParseNpy(Npy(Dict(big ? ">f2" : "<f2", "(8,)"), Bytes(h, big)), "t", &dtype);
    EXPECT_EQ(dtype, "float16");
    ASSERT_EQ(t.f.size(), 8u);
    EXPECT_EQ(t.f[0], 1.0f);
    EXPECT_EQ(t.f[1], -2.0f);
    EXPECT_EQ(t.f[2], std::ldexp(1.0f, -24));
    EXPECT_EQ(t.f[3], 65504.0f);
    EXPECT_EQ(t.f[4], -std::numeric_limits<float>::infinity());
    EXPECT_TRUE(std::isnan(t.f[5]));
    EXPECT_EQ(t.f[6], std::ldexp(1.0f, -14));
    EXPECT_EQ(t.f[7], 1365.0f / 4096.0f);  // 0x3555: 1.0101010101b x 2^-2
  }
}

TEST(Npy, Float64RoundedToNearestEven) {
  const double tie_even = 1.0 + std::ldexp(1.0, -24);     // halfway: to 1.0 (even)
  const double tie_odd = 1.0 + 3 * std::ldexp(1.0, -24);  // halfway: up to 1 + 2^-22
  const double above = 1.0 + std::ldexp(1.0, -24) + std::ldexp(1.0, -40);  // up to 1 + 2^-23
  const std::vector<double> v{tie_even, tie_odd, above, 1e300, -0.0};
  for (bool big : {false, true}) {
    const Tensor t = ParseNpy(Npy(Dict(big ? ">f8" : "<f8", "(5,)"), Bytes(v, big)), "t");
    EXPECT_EQ(t.f[0], 1.0f);
    EXPECT_EQ(t.f[1], 1.0f + std::ldexp(1.0f, -22));
    EXPECT_EQ(t.f[2], 1.0f + std::ldexp(1.0f, -23));
    EXPECT_EQ(t.f[3], std::numeric_limits<float>::infinity());
    EXPECT_EQ(Bits(t.f[4]), 0x80000000u);
  }
}

TEST(Npy, Bf16BitsAsUint16) {
  const std::vector<uint16_t> v{0x3F80, 0xC040, 0x7FC0, 0x0001};
  for (bool big : {false, true}) {
    std::string dtype;
    const Tensor t = ParseNpy(Npy(Dict(big ? ">u2" : "<u2", "(4,)"), Bytes(v, big)), "t", &dtype);
    EXPECT_EQ(dtype, "bf16 (uint16)");
    for (size_t k = 0; k < v.size(); ++k) EXPECT_EQ(Bits(t.f[k]), uint32_t(v[k]) << 16) << k;
  }
}

TEST(Npy, IntegersSignExtendedInEitherOrder) {
  auto ints = [](const std::string& descr, const std::string& data) {
    std::string dtype;
    Tensor t = ParseNpy(Npy(Dict(descr, "(3,)"), data), "t", &dtype);
    EXPECT_TRUE(t.is_int) << descr;
    EXPECT_TRUE(t.f.empty()) << descr;
    return std::make_pair(t.i, dtype);
  };
  using V = std::vector<int64_t>;
  EXPECT_EQ(ints("|i1", Bytes(std::vector<int8_t>{-1, 127, -128})),
            std::make_pair(V{-1, 127, -128}, std::string("int8")));
  EXPECT_EQ(ints("|u1", Bytes(std::vector<uint8_t>{255, 0, 128})),
            std::make_pair(V{255, 0, 128}, std::string("uint8")));
  EXPECT_EQ(ints(">i2", Bytes(std::vector<int16_t>{-2, 300, -32768}, true)).first,
            (V{-2, 300, -32768}));
  EXPECT_EQ(ints("<i4", Bytes(std::vector<int32_t>{-5, 1 << 30, 7})).first, (V{-5, 1 << 30, 7}));
  EXPECT_EQ(ints(">i8", Bytes(std::vector<int64_t>{-(int64_t(1) << 40), 9, INT64_MIN}, true)).first,
            (V{-(int64_t(1) << 40), 9, INT64_MIN}));
  EXPECT_EQ(ints(">u4", Bytes(std::vector<uint32_t>{0xFFFFFFFFu, 1, 2}, true)).first,
            (V{0xFFFFFFFFll, 1, 2}));
  EXPECT_EQ(ints("<u8", Bytes(std::vector<uint64_t>{uint64_t(INT64_MAX), 0, 3})).first,
            (V{INT64_MAX, 0, 3}));
  EXPECT_EQ(ints("|b1", std::string("\x01\x00\x01", 3)),
            std::make_pair(V{1, 0, 1}, std::string("bool")));
  ExpectError(Npy(Dict("<u8", "(2,)"), Bytes(std::vector<uint64_t>{1, uint64_t(1) << 63})),
              "element 1 (9223372036854775808) does not fit in int64");
}

TEST(Npy, FortranOrderRearrangedToRowMajor) {
  // A 2x3 matrix [[0,1,2],[3,4,5]] stored column by column, and a 2x3x2 block.
  const Tensor m =
      ParseNpy(Npy(Dict("<f4", "(2, 3)", true), Bytes(std::vector<float>{0, 3, 1, 4, 2, 5})), "t");
  EXPECT_EQ(m.shape, (Shape{2, 3}));
  EXPECT_EQ(m.f, (std::vector<float>{0, 1, 2, 3, 4, 5}));
  std::vector<int32_t> col(12);  // element (i, j, k) = 100i + 10j + k at i + 2j + 6k
  for (int i = 0; i < 2; ++i)
    for (int j = 0; j < 3; ++j)
      for (int k = 0; k < 2; ++k) col[i + 2 * j + 6 * k] = 100 * i + 10 * j + k;
  const Tensor b = ParseNpy(Npy(Dict(">i4", "(2, 3, 2)", true), Bytes(col, true)), "t");
  std::vector<int64_t> row;
  for (int i = 0; i < 2; ++i)
    for (int j = 0; j < 3; ++j)
      for (int k = 0; k < 2; ++k) row.push_back(100 * i + 10 * j + k);
  EXPECT_EQ(b.i, row);
  // One dimension or a scalar: the order makes no difference.
  EXPECT_EQ(ParseNpy(Npy(Dict("<f4", "(2,)", true), Bytes(std::vector<float>{7, 8})), "t").f,
            (std::vector<float>{7, 8}));
  const Tensor s = ParseNpy(Npy(Dict("<f8", "()", true), Bytes(std::vector<double>{2.5})), "t");
  EXPECT_TRUE(s.shape.empty());
  EXPECT_EQ(s.f, (std::vector<float>{2.5f}));
}

TEST(Npy, FormatVersionsAndKeyOrder) {
  const std::string data = Bytes(std::vector<float>{1, 2, 3, 4});
  for (int major : {1, 2, 3}) {
    const Tensor t = ParseNpy(Npy(Dict("<f4", "(2, 2)"), data, major), "t");
    EXPECT_EQ(t.f, (std::vector<float>{1, 2, 3, 4})) << major;
  }
  // The dict's keys in another order (the format allows any) and NumPy's "=" and "|" orders.
  const Tensor t =
      ParseNpy(Npy("{'shape': (2, 2), 'fortran_order': True, 'descr': '=f4'}", data), "t");
  EXPECT_EQ(t.f, (std::vector<float>{1, 3, 2, 4}));
  EXPECT_EQ(ParseNpy(Npy(Dict("|u1", "(1,)"), "\x09"), "t").i, (std::vector<int64_t>{9}));
  // An empty array.
  EXPECT_TRUE(ParseNpy(Npy(Dict("<f4", "(0, 3)"), ""), "t").f.empty());
}

TEST(Npy, WhatCannotBeReadIsNamed) {
  ExpectError(Npy(Dict("<c8", "(1,)"), std::string(8, '\0')), "dtype '<c8' (complex numbers)");
  ExpectError(Npy(Dict("<U3", "(1,)"), std::string(12, '\0')), "dtype '<U3' (strings)");
  ExpectError(Npy(Dict("|O", "(1,)"), std::string(8, '\0')), "dtype '|O' (Python objects)");
  ExpectError(Npy(Dict("<M8[s]", "(1,)"), std::string(8, '\0')), "dtype '<M8[s]' (datetimes)");
  ExpectError(Npy(Dict("<f 4", "(1,)"), std::string(4, '\0')), "'<f 4' is not a NumPy type");
  ExpectError(Npy(Dict("<f16", "(1,)"), std::string(16, '\0')), "float128 (extended precision)");
  ExpectError(Npy("{'descr': [('a', '<f4')], 'fortran_order': False, 'shape': (1,), }", "xxxx"),
              "a structured (record) array is not supported");
  ExpectError(Npy(Dict("<f4", "(2, 3)"), std::string(20, '\0')),
              "truncated .npy data (20 bytes for 6 elements of float32)");
  ExpectError(Npy(Dict("<f4", "(-2, 3)"), ""), "bad shape '(-2, 3)'");
  ExpectError(Npy("{'descr': '<f4', 'fortran_order': False}", ""), "has no 'shape'");
  ExpectError(Npy(Dict("<f4", "(1,)"), "", 4), ".npy format version 4.0");
  ExpectError("PK\x03\x04 not an npy", "not a NumPy .npy file");
  ExpectError(Npy(Dict("<f4", "(1,)"), "").substr(0, 40), "truncated or too long .npy header");
}

TEST(Npy, WrittenFilesReadBack) {
  Tensor t;
  t.shape = {2, 2};
  t.f = {1.5f, -2.0f, 0.0f, 1e-40f};
  const Tensor r = ParseNpy(NpyBytes(t), "t");
  EXPECT_EQ(r.shape, t.shape);
  for (size_t k = 0; k < 4; ++k) EXPECT_EQ(Bits(r.f[k]), Bits(t.f[k]));
}

}  // namespace
}  // namespace tpu::io
