// SPDX-License-Identifier: Apache-2.0
#include "tpu/io/npy.h"

#include <fmt/format.h>
#include <zip.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <fstream>
#include <memory>
#include <regex>
#include <sstream>
#include <stdexcept>
#include <vector>
#include <xtensor/xadapt.hpp>
#include <xtensor/xnpy.hpp>

namespace tpu::io {
namespace {

constexpr bool kHostLittle = __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__;

// What a dtype NumPy can write but a tensor of numbers cannot hold is, for the error message.
std::string Unsupported(char kind, int size) {
  switch (kind) {
    case 'f': return fmt::format("float{} (extended precision)", size * 8);
    case 'c': return "complex numbers";
    case 'U':
    case 'S':
    case 'a': return "strings";
    case 'O': return "Python objects";
    case 'V': return "raw bytes or records";
    case 'M': return "datetimes";
    case 'm': return "timedeltas";
    default: return "an unknown type";
  }
}

// The element of `dt` at `p`, in the host's byte order, as an unsigned integer of its size.
uint64_t Raw(const unsigned char* p, const Dtype& dt) {
  unsigned char b[8];
  for (int j = 0; j < dt.size; ++j) b[j] = p[dt.swap ? dt.size - 1 - j : j];
  switch (dt.size) {
    case 1: return b[0];
    case 2: {
      uint16_t v;
      std::memcpy(&v, b, 2);
      return v;
    }
    case 4: {
      uint32_t v;
      std::memcpy(&v, b, 4);
      return v;
    }
    default: {
      uint64_t v;
      std::memcpy(&v, b, 8);
      return v;
    }
  }
}

float AsFloat(uint64_t raw, const Dtype& dt) {
  if (dt.kind == 'u') {  // bf16 bits: the upper half of a float32
    const uint32_t u = uint32_t(raw) << 16;
    float f;
    std::memcpy(&f, &u, 4);
    return f;
  }
  if (dt.size == 2) {
    _Float16 h;
    const auto u = uint16_t(raw);
    std::memcpy(&h, &u, 2);
    return float(h);  // every float16 is a float32
  }
  if (dt.size == 4) {
    const auto u = uint32_t(raw);
    float f;
    std::memcpy(&f, &u, 4);
    return f;
  }
  double d;
  std::memcpy(&d, &raw, 8);
  return float(d);  // to nearest even
}

int64_t AsInt(uint64_t raw, const Dtype& dt, size_t k, const std::string& what) {
  if (dt.kind == 'b' || dt.kind == 'u') {
    if (raw > uint64_t(INT64_MAX)) {
      throw std::invalid_argument(
          fmt::format("{}: element {} ({}) does not fit in int64", what, k, raw));
    }
    return int64_t(raw);
  }
  const int bits = dt.size * 8;
  if (bits == 64) return int64_t(raw);
  const uint64_t sign = uint64_t(1) << (bits - 1);
  return int64_t((raw ^ sign) - sign);  // sign-extend
}

// Column-major `v` of `shape` in row-major order (xtensor walks an adapted column-major
// expression in row-major order).
template <typename T>
std::vector<T> RowMajor(const std::vector<T>& v, const Shape& shape) {
  const std::vector<size_t> s(shape.begin(), shape.end());
  const auto a =
      xt::adapt<xt::layout_type::column_major>(v.data(), v.size(), xt::no_ownership(), s);
  std::vector<T> r(v.size());
  std::copy(a.cbegin(), a.cend(), r.begin());
  return r;
}

}  // namespace

Dtype ParseDtype(const std::string& descr, const std::string& what) {
  static const std::regex re("([<>|=]?)([a-zA-Z])([0-9]*)(\\[[a-zA-Z0-9]*\\])?");
  std::smatch m;
  if (!std::regex_match(descr, m, re)) {
    throw std::invalid_argument(
        fmt::format("{}: dtype '{}' is not a NumPy type string", what, descr));
  }
  Dtype dt;
  const char order = m[1].length() ? m[1].str()[0] : '=';
  dt.kind = m[2].str()[0];
  dt.size = m[3].length() && m[3].length() < 4 ? std::stoi(m[3]) : 0;
  dt.swap = (order == '>' && kHostLittle) || (order == '<' && !kHostLittle);
  const bool ok = (dt.kind == 'f' && (dt.size == 2 || dt.size == 4 || dt.size == 8)) ||
                  ((dt.kind == 'i' || dt.kind == 'u') &&
                   (dt.size == 1 || dt.size == 2 || dt.size == 4 || dt.size == 8)) ||
                  (dt.kind == 'b' && dt.size == 1);
  if (!ok) {
    throw std::invalid_argument(fmt::format(
        "{}: dtype '{}' ({}) is not supported: save floats, integers, or bf16 bits as uint16", what,
        descr, Unsupported(dt.kind, dt.size)));
  }
  if (dt.kind == 'f') {
    dt.name = fmt::format("float{}", dt.size * 8);
  } else if (dt.kind == 'b') {
    dt.name = "bool";
  } else if (dt.kind == 'u' && dt.size == 2) {
    dt.name = "bf16 (uint16)";
  } else {
    dt.name = fmt::format("{}int{}", dt.kind == 'u' ? "u" : "", dt.size * 8);
  }
  return dt;
}

Tensor Decode(const void* data, size_t bytes, const Dtype& dt, const Shape& shape, bool fortran,
              const std::string& what) {
  Tensor t;
  t.shape = shape;
  const size_t n = size_t(Elements(shape));
  if (bytes / size_t(dt.size) < n) {
    throw std::invalid_argument(fmt::format(
        "{}: truncated .npy data ({} bytes for {} elements of {})", what, bytes, n, dt.name));
  }
  const auto* p = static_cast<const unsigned char*>(data);
  const bool floats = dt.kind == 'f' || (dt.kind == 'u' && dt.size == 2);
  if (floats) {
    t.f.resize(n);
    if (dt.kind == 'f' && dt.size == 4 && !dt.swap) {
      if (n != 0) std::memcpy(t.f.data(), p, n * 4);
    } else {
      for (size_t k = 0; k < n; ++k) t.f[k] = AsFloat(Raw(p + k * size_t(dt.size), dt), dt);
    }
  } else {
    t.is_int = true;
    t.i.resize(n);
    for (size_t k = 0; k < n; ++k) t.i[k] = AsInt(Raw(p + k * size_t(dt.size), dt), dt, k, what);
  }
  if (fortran && shape.size() > 1) {
    if (floats) {
      t.f = RowMajor(t.f, shape);
    } else {
      t.i = RowMajor(t.i, shape);
    }
  }
  return t;
}

Tensor ParseNpy(const std::string& bytes, const std::string& what, std::string* dtype) {
  if (bytes.size() < 10 || bytes.compare(0, 6, "\x93NUMPY") != 0) {
    throw std::invalid_argument(
        fmt::format("{}: not a NumPy .npy file (no \\x93NUMPY magic)", what));
  }
  const int major = static_cast<unsigned char>(bytes[6]);
  const int minor = static_cast<unsigned char>(bytes[7]);
  if (major < 1 || major > 3) {
    throw std::invalid_argument(fmt::format(
        "{}: .npy format version {}.{} is not one NumPy writes (1.0 to 3.0)", what, major, minor));
  }
  size_t len = static_cast<unsigned char>(bytes[8]) | size_t(static_cast<unsigned char>(bytes[9]))
                                                          << 8;
  size_t start = 10;
  if (major >= 2) {
    if (bytes.size() < 12)
      throw std::invalid_argument(fmt::format("{}: truncated .npy header", what));
    len |= size_t(static_cast<unsigned char>(bytes[10])) << 16 |
           size_t(static_cast<unsigned char>(bytes[11])) << 24;
    start = 12;
  }
  if (len > (1u << 20) || bytes.size() < start + len) {
    throw std::invalid_argument(fmt::format("{}: truncated or too long .npy header", what));
  }
  const std::string h = bytes.substr(start, len);
  std::smatch m;
  if (std::regex_search(h, std::regex("'descr'\\s*:\\s*\\["))) {
    throw std::invalid_argument(fmt::format(
        "{}: a structured (record) array is not supported: save one numeric array per field",
        what));
  }
  if (!std::regex_search(h, m, std::regex("'descr'\\s*:\\s*'([^']*)'"))) {
    throw std::invalid_argument(fmt::format("{}: .npy header has no 'descr'", what));
  }
  const Dtype dt = ParseDtype(m[1], what);
  const bool fortran = std::regex_search(h, std::regex("'fortran_order'\\s*:\\s*True"));
  if (!std::regex_search(h, m, std::regex("'shape'\\s*:\\s*\\(([^)]*)\\)"))) {
    throw std::invalid_argument(fmt::format("{}: .npy header has no 'shape'", what));
  }
  Shape shape;
  std::stringstream ss(m[1].str());
  for (std::string item; std::getline(ss, item, ',');) {
    if (item.find_first_not_of(" \t") == std::string::npos) continue;
    int64_t d = -1;
    try {
      d = std::stoll(item);
    } catch (const std::exception&) {
    }
    if (d < 0) {
      throw std::invalid_argument(
          fmt::format("{}: bad shape '({})' in the .npy header", what, m[1].str()));
    }
    shape.push_back(d);
  }
  int64_t total = 1;
  for (int64_t d : shape) {
    if (d > 0 && total > (int64_t(1) << 40) / d) {
      throw std::invalid_argument(
          fmt::format("{}: shape ({}) has more than 2^40 elements", what, m[1].str()));
    }
    total *= d;
  }
  const size_t off = start + len;
  Tensor t = Decode(bytes.data() + off, bytes.size() - off, dt, shape, fortran, what);
  if (dtype != nullptr) *dtype = dt.name;
  return t;
}
Tensor ReadNpy(const std::string& file, std::string* dtype) {
  std::ifstream f(file, std::ios::binary);
  if (!f) throw std::invalid_argument(fmt::format("{}: cannot be opened", file));
  std::stringstream ss;
  ss << f.rdbuf();
  return ParseNpy(ss.str(), file, dtype);
}

std::map<std::string, Tensor> ReadNpz(const std::string& file) {
  int err = 0;
  std::unique_ptr<zip_t, decltype(&zip_discard)> z(zip_open(file.c_str(), ZIP_RDONLY, &err),
                                                   &zip_discard);
  if (!z) {
    zip_error_t ze;
    zip_error_init_with_code(&ze, err);
    const std::string msg = zip_error_strerror(&ze);
    zip_error_fini(&ze);
    throw std::invalid_argument(fmt::format("{}: not a readable .npz (zip) file: {}", file, msg));
  }
  std::map<std::string, Tensor> r;
  const zip_int64_t n = zip_get_num_entries(z.get(), 0);
  for (zip_int64_t i = 0; i < n; ++i) {
    zip_stat_t st;
    if (zip_stat_index(z.get(), zip_uint64_t(i), 0, &st) != 0) continue;
    std::string name = st.name;
    std::unique_ptr<zip_file_t, decltype(&zip_fclose)> f(
        zip_fopen_index(z.get(), zip_uint64_t(i), 0), &zip_fclose);
    if (!f) throw std::invalid_argument(fmt::format("{}: member {} cannot be read", file, name));
    std::string bytes(size_t(st.size), '\0');
    if (zip_fread(f.get(), bytes.data(), st.size) != zip_int64_t(st.size)) {
      throw std::invalid_argument(fmt::format("{}: member {} is truncated", file, name));
    }
    if (name.size() > 4 && name.compare(name.size() - 4, 4, ".npy") == 0) {
      name.resize(name.size() - 4);
    }
    r[name] = ParseNpy(bytes, fmt::format("{} ({})", file, name));
  }
  return r;
}

std::string NpyBytes(const Tensor& t) {
  std::vector<size_t> shape(t.shape.begin(), t.shape.end());
  return xt::dump_npy(xt::adapt(t.f.data(), t.f.size(), xt::no_ownership(), shape));
}

void WriteNpy(const std::string& file, const Tensor& t) {
  const std::string b = NpyBytes(t);
  std::ofstream f(file, std::ios::binary);
  if (!f || !f.write(b.data(), std::streamsize(b.size())) || !f.flush()) {
    throw std::runtime_error(fmt::format("{}: cannot be written", file));
  }
}

void WriteNpz(const std::string& file, const std::map<std::string, Tensor>& arrays) {
  int err = 0;
  zip_t* z = zip_open(file.c_str(), ZIP_CREATE | ZIP_TRUNCATE, &err);
  if (z == nullptr) throw std::runtime_error(fmt::format("{}: cannot be written", file));
  std::vector<std::string> keep;
  keep.reserve(arrays.size());
  for (const auto& [name, t] : arrays) {
    keep.push_back(NpyBytes(t));
    zip_source_t* src = zip_source_buffer(z, keep.back().data(), keep.back().size(), 0);
    const zip_int64_t idx =
        src == nullptr ? -1 : zip_file_add(z, (name + ".npy").c_str(), src, ZIP_FL_OVERWRITE);
    if (idx < 0) {
      if (src != nullptr) zip_source_free(src);
      zip_discard(z);
      throw std::runtime_error(fmt::format("{}: cannot add {}", file, name));
    }
    zip_set_file_compression(z, zip_uint64_t(idx), ZIP_CM_STORE, 0);
  }
  if (zip_close(z) != 0) {
    const std::string msg = zip_strerror(z);
    zip_discard(z);
    throw std::runtime_error(fmt::format("{}: cannot be written: {}", file, msg));
  }
}

}  // namespace tpu::io
