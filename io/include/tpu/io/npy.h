// SPDX-License-Identifier: Apache-2.0
// NumPy .npy and .npz files (numpy.save, numpy.savez, numpy.savez_compressed; .npz through
// Debian's libzip) as Tensors (tpu/tensor.h), for tpusim, the Python module and the tests. Every
// file NumPy writes for a numeric array is read: format versions 1.0 to 3.0, C or Fortran order
// (Fortran-ordered data is rearranged to row-major, through xtensor), either byte order, and
// these element types, converted on reading:
//   float32                     as is;
//   float16                     widened to float32 (exact);
//   float64 (NumPy's default)   rounded to float32 (to nearest even), which the accelerator's
//                               inputs then round to bf16 per the numerics contract;
//   uint16                      bf16 bit patterns (ml_dtypes / torch bfloat16 viewed as uint16),
//                               widened to float32 exactly;
//   int8/16/32/64, uint8/32/64, bool
//                               integers (a Reshape's target shape, class labels); a uint64
//                               above 2^63 - 1 is an error.
// What cannot be a tensor of numbers (complex, strings, Python objects, structured records,
// datetimes, float128) and malformed or truncated files are a std::invalid_argument whose
// one-line message names the file and what is wrong. Files are written float32 (xtensor's writer).
//
// The header and the elements are decoded here, not by xtensor's reader: that one reads only the
// element type known at compile time, in the host's byte order, and does not notice truncated
// data; no Debian library reads .npy files into C++ otherwise.
#pragma once

#include <cstddef>
#include <map>
#include <string>

#include "tpu/tensor.h"

namespace tpu::io {

// A NumPy element type, from its dtype string as .npy headers and `dtype.str` spell it
// ("<f4", ">f8", "|u1", "|b1", "<u2", ...).
struct Dtype {
  char kind = 0;      // 'f', 'i', 'u' or 'b'
  int size = 0;       // bytes per element
  bool swap = false;  // stored in the byte order opposite to the host's
  std::string name;   // "float32", "float16", "bf16 (uint16)", "int8", "bool", ...
};
// Throws std::invalid_argument naming `what` for a type that cannot be a tensor of numbers.
Dtype ParseDtype(const std::string& descr, const std::string& what);

// `Elements(shape)` elements of type `dt` at `data` (`bytes` long), in C order, or Fortran
// (column-major) order when `fortran`, as a row-major Tensor.
Tensor Decode(const void* data, size_t bytes, const Dtype& dt, const Shape& shape, bool fortran,
              const std::string& what);

// The dtype read (Dtype::name) goes to *dtype.
Tensor ParseNpy(const std::string& bytes, const std::string& what, std::string* dtype = nullptr);
Tensor ReadNpy(const std::string& file, std::string* dtype = nullptr);
// Every array of an .npz file by name (the ".npy" suffix of the member removed).
std::map<std::string, Tensor> ReadNpz(const std::string& file);

// float32 arrays; throw std::runtime_error naming the file when it cannot be written.
std::string NpyBytes(const Tensor& t);
void WriteNpy(const std::string& file, const Tensor& t);
void WriteNpz(const std::string& file, const std::map<std::string, Tensor>& arrays);

}  // namespace tpu::io
