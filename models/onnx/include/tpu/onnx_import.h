// SPDX-License-Identifier: Apache-2.0
// The ONNX importer (tpu_onnx): reads a model with Debian's ONNX library (libonnx-dev, 1.12: its
// protobuf classes and its checker) into a net::Graph (tpu/net.h), and ONNX TensorProto files (the
// conformance tests' input_N.pb / output_N.pb) into tensors. Every failure is a net::Error whose
// one-line message names the file and what was wrong.
#pragma once

#include <map>
#include <string>

#include "tpu/net.h"

namespace tpu::onnx_import {

// A model file: the graph, its initializers, inputs and outputs, the default domain's opset.
net::Graph LoadModel(const std::string& file);

// A serialized TensorProto (float32, float64 converted to float32, int64 or int32); `name` gets
// the tensor's name.
net::Tensor LoadTensor(const std::string& file, std::string* name = nullptr);

// Writes the model `src` to `dst` with the float32 initializers named in `values` replaced (the
// same shapes; e.g. trained weights). Everything else is kept as it is.
void SaveWithInitializers(const std::string& src, const std::string& dst,
                          const std::map<std::string, net::Tensor>& values);

}  // namespace tpu::onnx_import
