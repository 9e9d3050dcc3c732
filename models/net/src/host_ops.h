// SPDX-License-Identifier: Apache-2.0
// The host operators' scalar numerics (host_ops.cpp; docs/numerics.md, "Host operators"). Every
// NaN they return is the canonical 0x7FC00000, as the accelerator's.
#pragma once

#include <cstdint>

#include "tpu/net.h"

namespace tpu::net {

float HostMul(float a, float b);
float HostDiv(float a, float b);
float HostRelu(float x);  // num::Relu
// Max and sum of x[idx[0..n-1]] (n >= 1), in that order.
float MaxOf(const float* x, const int64_t* idx, int n);
float SumOf(const float* x, const int64_t* idx, int n);
// Softmax of x[0], x[stride], ... x[(n-1)·stride] into y (same strides).
void SoftmaxSlice(const float* x, float* y, int64_t n, int64_t stride);
// Log-softmax likewise: (x_i - m) - log(the sum), in binary64, rounded once.
void LogSoftmaxSlice(const float* x, float* y, int64_t n, int64_t stride);

}  // namespace tpu::net
