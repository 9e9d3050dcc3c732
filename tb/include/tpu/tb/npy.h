// SPDX-License-Identifier: Apache-2.0
// NumPy .npy and .npz files (numpy.save, numpy.savez, numpy.savez_compressed; .npz through
// Debian's libzip) as net::Tensors, for tpusim and the Python module. Element types as users save
// them, converted on reading:
//   float32 ('<f4')            as is;
//   float64 ('<f8', NumPy's default)  converted to float32 (round to nearest even), which the
//                               accelerator's inputs then round to bf16 per the numerics contract;
//   uint16 ('<u2')             bf16 bit patterns (ml_dtypes / torch bfloat16 viewed as uint16),
//                               widened to float32 exactly;
//   int64, int32               integers (a Reshape's target shape).
// Anything else (float16, big-endian, Fortran order, objects) is a std::invalid_argument whose
// one-line message names the file, the dtype and what to do. Files are read here, not with
// xtensor's reader, which neither converts element types nor notices truncated data; they are
// written float32 with xtensor's writer.
#pragma once

#include <map>
#include <string>

#include "tpu/net.h"

namespace tpu::tb {

// The dtype read ("float32", "float64", "bf16 (uint16)", "int64", "int32") goes to *dtype.
net::Tensor ParseNpy(const std::string& bytes, const std::string& what,
                     std::string* dtype = nullptr);
net::Tensor ReadNpy(const std::string& file, std::string* dtype = nullptr);
// Every array of an .npz file by name (the ".npy" suffix of the member removed).
std::map<std::string, net::Tensor> ReadNpz(const std::string& file);

// float32 arrays; throw std::runtime_error naming the file when it cannot be written.
std::string NpyBytes(const net::Tensor& t);
void WriteNpy(const std::string& file, const net::Tensor& t);
void WriteNpz(const std::string& file, const std::map<std::string, net::Tensor>& arrays);

}  // namespace tpu::tb
