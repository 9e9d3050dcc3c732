// SPDX-License-Identifier: Apache-2.0
#include "tpu/tb/npy.h"

#include <fmt/format.h>
#include <zip.h>

#include <cstring>
#include <fstream>
#include <memory>
#include <regex>
#include <sstream>
#include <stdexcept>
#include <xtensor/xadapt.hpp>
#include <xtensor/xnpy.hpp>

namespace tpu::tb {
namespace {

std::string DtypeHint(const std::string& d) {
  if (d == "<f2") return "float16";
  if (d == ">f4" || d == ">f8") return "big-endian float";
  if (d == "|b1") return "bool";
  if (d == "|u1") return "uint8";
  if (d == "|i1") return "int8";
  if (d == "|O") return "Python objects";
  return "";
}

template <typename T>
std::vector<T> Values(const std::string& bytes, size_t offset, size_t n, const std::string& what) {
  if (bytes.size() - offset < n * sizeof(T)) {
    throw std::invalid_argument(fmt::format("{}: truncated .npy data ({} bytes for {} elements)",
                                            what, bytes.size() - offset, n));
  }
  std::vector<T> v(n);
  if (n != 0) std::memcpy(v.data(), bytes.data() + offset, n * sizeof(T));
  return v;
}

}  // namespace

net::Tensor ParseNpy(const std::string& bytes, const std::string& what, std::string* dtype) {
  if (bytes.size() < 10 || bytes.compare(0, 6, "\x93NUMPY") != 0) {
    throw std::invalid_argument(
        fmt::format("{}: not a NumPy .npy file (no \\x93NUMPY magic)", what));
  }
  const int major = static_cast<unsigned char>(bytes[6]);
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
  if (!std::regex_search(h, m, std::regex("'descr'\\s*:\\s*'([^']*)'"))) {
    throw std::invalid_argument(fmt::format("{}: .npy header has no 'descr'", what));
  }
  const std::string d = m[1];
  if (std::regex_search(h, std::regex("'fortran_order'\\s*:\\s*True"))) {
    throw std::invalid_argument(
        fmt::format("{}: Fortran-ordered array; save numpy.ascontiguousarray(x) instead", what));
  }
  if (!std::regex_search(h, m, std::regex("'shape'\\s*:\\s*\\(([^)]*)\\)"))) {
    throw std::invalid_argument(fmt::format("{}: .npy header has no 'shape'", what));
  }
  net::Tensor t;
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
    t.shape.push_back(d);
  }
  int64_t total = 1;
  for (int64_t d : t.shape) {
    if (d > 0 && total > (int64_t(1) << 40) / d) {
      throw std::invalid_argument(
          fmt::format("{}: shape ({}) has more than 2^40 elements", what, m[1].str()));
    }
    total *= d;
  }
  const size_t n = size_t(net::Elements(t.shape));
  const size_t off = start + len;
  std::string name;
  if (d == "<f4" || d == "=f4") {
    t.f = Values<float>(bytes, off, n, what);
    name = "float32";
  } else if (d == "<f8" || d == "=f8") {
    const auto v = Values<double>(bytes, off, n, what);
    t.f.resize(n);
    for (size_t i = 0; i < n; ++i) t.f[i] = float(v[i]);
    name = "float64";
  } else if (d == "<u2" || d == "=u2") {
    const auto v = Values<uint16_t>(bytes, off, n, what);
    t.f.resize(n);
    for (size_t i = 0; i < n; ++i) {
      const uint32_t u = uint32_t(v[i]) << 16;
      std::memcpy(&t.f[i], &u, 4);
    }
    name = "bf16 (uint16)";
  } else if (d == "<i8" || d == "=i8") {
    t.is_int = true;
    t.i = Values<int64_t>(bytes, off, n, what);
    name = "int64";
  } else if (d == "<i4" || d == "=i4") {
    t.is_int = true;
    const auto v = Values<int32_t>(bytes, off, n, what);
    t.i.assign(v.begin(), v.end());
    name = "int32";
  } else {
    const std::string hint = DtypeHint(d);
    throw std::invalid_argument(fmt::format(
        "{}: dtype '{}'{} is not supported: save float32, float64, or bf16 bits as uint16", what, d,
        hint.empty() ? "" : " (" + hint + ")"));
  }
  if (dtype != nullptr) *dtype = name;
  return t;
}

net::Tensor ReadNpy(const std::string& file, std::string* dtype) {
  std::ifstream f(file, std::ios::binary);
  if (!f) throw std::invalid_argument(fmt::format("{}: cannot be opened", file));
  std::stringstream ss;
  ss << f.rdbuf();
  return ParseNpy(ss.str(), file, dtype);
}

std::map<std::string, net::Tensor> ReadNpz(const std::string& file) {
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
  std::map<std::string, net::Tensor> r;
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

std::string NpyBytes(const net::Tensor& t) {
  std::vector<size_t> shape(t.shape.begin(), t.shape.end());
  return xt::dump_npy(xt::adapt(t.f.data(), t.f.size(), xt::no_ownership(), shape));
}

void WriteNpy(const std::string& file, const net::Tensor& t) {
  const std::string b = NpyBytes(t);
  std::ofstream f(file, std::ios::binary);
  if (!f || !f.write(b.data(), std::streamsize(b.size())) || !f.flush()) {
    throw std::runtime_error(fmt::format("{}: cannot be written", file));
  }
}

void WriteNpz(const std::string& file, const std::map<std::string, net::Tensor>& arrays) {
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

}  // namespace tpu::tb
