// SPDX-License-Identifier: Apache-2.0
// A tensor as the tools exchange it: a shape and fp32 values, or int64 ones (a Reshape's target
// shape, class labels), row-major. The network layer (tpu/net.h) computes on it and the file
// readers (tpu/io/npy.h) fill it; neither depends on the other.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace tpu {

using Shape = std::vector<int64_t>;
std::string ShapeText(const Shape& s);  // "(1, 3, 8, 8)", "(5,)", "()"
int64_t Elements(const Shape& s);

struct Tensor {
  Shape shape;
  std::vector<float> f;
  std::vector<int64_t> i;
  bool is_int = false;
  int64_t Size() const { return Elements(shape); }
};

// `t` with integers converted to float32 (to nearest even, as NumPy's astype(float32); exact up to
// 2^24): a matrix of integers for a GEMM. A float tensor is returned as it is.
Tensor AsFloat(Tensor t);

}  // namespace tpu
