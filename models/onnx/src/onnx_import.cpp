// SPDX-License-Identifier: Apache-2.0
#include "tpu/onnx_import.h"

#include <fmt/format.h>
#include <onnx/checker.h>
#include <onnx/onnx_pb.h>

#include <algorithm>
#include <cctype>
#include <cstring>
#include <fstream>
#include <sstream>

namespace tpu::onnx_import {
namespace {

using net::Error;

std::string TypeName(int t) {
  switch (t) {
    case onnx::TensorProto::FLOAT: return "float32";
    case onnx::TensorProto::DOUBLE: return "float64";
    case onnx::TensorProto::FLOAT16: return "float16";
    case onnx::TensorProto::BFLOAT16: return "bfloat16";
    case onnx::TensorProto::INT64: return "int64";
    case onnx::TensorProto::INT32: return "int32";
    case onnx::TensorProto::INT8: return "int8";
    case onnx::TensorProto::UINT8: return "uint8";
    case onnx::TensorProto::INT16: return "int16";
    case onnx::TensorProto::UINT16: return "uint16";
    case onnx::TensorProto::UINT32: return "uint32";
    case onnx::TensorProto::UINT64: return "uint64";
    case onnx::TensorProto::COMPLEX64: return "complex64";
    case onnx::TensorProto::COMPLEX128: return "complex128";
    case onnx::TensorProto::BOOL: return "bool";
    case onnx::TensorProto::STRING: return "string";
    default: return fmt::format("type {}", t);
  }
}

std::string ReadFile(const std::string& file) {
  std::ifstream f(file, std::ios::binary | std::ios::ate);
  if (!f) throw Error(fmt::format("{}: cannot be opened", file));
  // One read into a string of the file's size (a 100 MB model through a stringstream cost a
  // third of a ResNet-50 run on the model back end).
  const std::streamoff size = f.tellg();
  if (size < 0) throw Error(fmt::format("{}: cannot be read", file));
  std::string bytes(size_t(size), '\0');
  f.seekg(0);
  if (!f.read(bytes.data(), size)) throw Error(fmt::format("{}: cannot be read", file));
  return bytes;
}

template <typename T>
std::vector<T> Raw(const std::string& raw, size_t n, const std::string& what) {
  if (raw.size() != n * sizeof(T)) {
    throw Error(fmt::format("{}: raw data of {} bytes for {} elements", what, raw.size(), n));
  }
  std::vector<T> v(n);
  if (n != 0) std::memcpy(v.data(), raw.data(), raw.size());
  return v;
}

net::Tensor FromProto(const onnx::TensorProto& p, const std::string& what) {
  net::Tensor t;
  int64_t total = 1;
  for (auto d : p.dims()) {
    if (d < 0) throw Error(fmt::format("{}: negative dimension {}", what, d));
    if (d > 0 && total > (int64_t(1) << 40) / d) {
      throw Error(fmt::format("{}: more than 2^40 elements", what));
    }
    total *= d;
    t.shape.push_back(d);
  }
  if (p.data_location() == onnx::TensorProto::EXTERNAL) {
    throw Error(fmt::format("{}: external data is not supported", what));
  }
  const auto n = size_t(net::Elements(t.shape));
  const bool raw = p.has_raw_data();
  auto check = [&](size_t got) {
    if (got != n) {
      throw Error(fmt::format("{}: {} values for shape {}", what, got, net::ShapeText(t.shape)));
    }
  };
  switch (p.data_type()) {
    case onnx::TensorProto::FLOAT:
      if (raw) {
        t.f = Raw<float>(p.raw_data(), n, what);
      } else {
        check(size_t(p.float_data_size()));
        t.f.assign(p.float_data().begin(), p.float_data().end());
      }
      break;
    case onnx::TensorProto::DOUBLE: {
      std::vector<double> d;
      if (raw) {
        d = Raw<double>(p.raw_data(), n, what);
      } else {
        check(size_t(p.double_data_size()));
        d.assign(p.double_data().begin(), p.double_data().end());
      }
      t.f.resize(d.size());
      for (size_t i = 0; i < d.size(); ++i) t.f[i] = float(d[i]);
      break;
    }
    case onnx::TensorProto::INT64:
      t.is_int = true;
      if (raw) {
        t.i = Raw<int64_t>(p.raw_data(), n, what);
      } else {
        check(size_t(p.int64_data_size()));
        t.i.assign(p.int64_data().begin(), p.int64_data().end());
      }
      break;
    case onnx::TensorProto::INT32: {
      t.is_int = true;
      if (raw) {
        const auto v = Raw<int32_t>(p.raw_data(), n, what);
        t.i.assign(v.begin(), v.end());
      } else {
        check(size_t(p.int32_data_size()));
        t.i.assign(p.int32_data().begin(), p.int32_data().end());
      }
      break;
    }
    case onnx::TensorProto::BOOL: {  // a flag (Dropout's training_mode): 0 or 1
      t.is_int = true;
      if (raw) {
        const auto v = Raw<uint8_t>(p.raw_data(), n, what);
        t.i.assign(v.begin(), v.end());
      } else {
        check(size_t(p.int32_data_size()));
        t.i.assign(p.int32_data().begin(), p.int32_data().end());
      }
      break;
    }
    default:
      throw Error(
          fmt::format("{}: element type {} is not supported (float32, float64, int64, "
                      "int32 are)",
                      what, TypeName(p.data_type())));
  }
  return t;
}

net::ValueInfo Info(const onnx::ValueInfoProto& v) {
  net::ValueInfo r;
  r.name = v.name();
  if (!v.type().has_tensor_type()) {
    r.dtype = "non-tensor";
    return r;
  }
  const auto& tt = v.type().tensor_type();
  r.dtype = TypeName(tt.elem_type());
  if (tt.has_shape()) {
    r.known_rank = true;
    for (const auto& d : tt.shape().dim())
      r.shape.push_back(d.has_dim_value() ? d.dim_value() : -1);
  }
  return r;
}

}  // namespace

net::Graph LoadModel(const std::string& file) {
  const std::string bytes = ReadFile(file);
  onnx::ModelProto model;
  if (!model.ParseFromString(bytes)) {
    throw Error(fmt::format("{}: not an ONNX model (the protobuf does not parse)", file));
  }
  try {
    onnx::checker::check_model(model);
  } catch (const std::exception& e) {
    std::string msg = e.what();
    std::replace(msg.begin(), msg.end(), '\n', ' ');
    throw Error(fmt::format("{}: invalid ONNX model: {}", file, msg));
  }
  net::Graph g;
  const auto& gp = model.graph();
  g.name = gp.name();
  for (const auto& op : model.opset_import()) {
    if (op.domain().empty() || op.domain() == "ai.onnx") g.opset = op.version();
  }
  for (const auto& init : gp.initializer()) {
    g.constants[init.name()] =
        FromProto(init, fmt::format("{}: initializer '{}'", file, init.name()));
  }
  if (gp.sparse_initializer_size() > 0) {
    throw Error(fmt::format("{}: sparse initializers are not supported", file));
  }
  for (const auto& in : gp.input()) {
    if (!g.constants.count(in.name())) g.inputs.push_back(Info(in));
  }
  for (const auto& out : gp.output()) g.outputs.push_back(Info(out));
  int index = 0;
  for (const auto& np : gp.node()) {
    net::Node n;
    n.op = np.op_type();
    n.domain = np.domain();
    n.name = np.name().empty() ? fmt::format("{}_{}", n.op, index) : np.name();
    ++index;
    n.inputs.assign(np.input().begin(), np.input().end());
    n.outputs.assign(np.output().begin(), np.output().end());
    for (const auto& a : np.attribute()) {
      net::Attr at;
      switch (a.type()) {
        case onnx::AttributeProto::INT:
          at.kind = net::Attr::Kind::kInt;
          at.i = a.i();
          break;
        case onnx::AttributeProto::FLOAT:
          at.kind = net::Attr::Kind::kFloat;
          at.f = a.f();
          break;
        case onnx::AttributeProto::STRING:
          at.kind = net::Attr::Kind::kString;
          at.s = a.s();
          break;
        case onnx::AttributeProto::INTS:
          at.kind = net::Attr::Kind::kInts;
          at.ints.assign(a.ints().begin(), a.ints().end());
          break;
        case onnx::AttributeProto::FLOATS:
          at.kind = net::Attr::Kind::kFloats;
          at.floats.assign(a.floats().begin(), a.floats().end());
          break;
        case onnx::AttributeProto::TENSOR:
          at.kind = net::Attr::Kind::kTensor;
          at.t = FromProto(a.t(), fmt::format("{}: node '{}' ({}) attribute '{}'", file, n.name,
                                              n.op, a.name()));
          break;
        default: at.kind = net::Attr::Kind::kOther; break;
      }
      n.attrs[a.name()] = std::move(at);
    }
    g.nodes.push_back(std::move(n));
  }
  return g;
}

net::Tensor LoadTensor(const std::string& file, std::string* name) {
  const std::string bytes = ReadFile(file);
  onnx::TensorProto p;
  if (!p.ParseFromString(bytes)) {
    throw Error(fmt::format("{}: not a serialized ONNX TensorProto", file));
  }
  if (name != nullptr) *name = p.name();
  return FromProto(p, file);
}

}  // namespace tpu::onnx_import

namespace tpu::onnx_import {

void SaveWithInitializers(const std::string& src, const std::string& dst,
                          const std::map<std::string, net::Tensor>& values) {
  const std::string bytes = ReadFile(src);
  onnx::ModelProto model;
  if (!model.ParseFromString(bytes)) {
    throw Error(fmt::format("{}: not an ONNX model (the protobuf does not parse)", src));
  }
  std::map<std::string, bool> done;
  for (const auto& [name, t] : values) done[name] = false;
  for (auto& init : *model.mutable_graph()->mutable_initializer()) {
    const auto it = values.find(init.name());
    if (it == values.end()) continue;
    const net::Tensor& t = it->second;
    const std::string what = fmt::format("{}: initializer '{}'", src, init.name());
    if (init.data_type() != onnx::TensorProto::FLOAT) throw Error(what + ": not float32");
    net::Shape shape(init.dims().begin(), init.dims().end());
    if (shape != t.shape || t.is_int || int64_t(t.f.size()) != net::Elements(shape)) {
      throw Error(fmt::format("{}: shape {}, the new values are {}", what, net::ShapeText(shape),
                              net::ShapeText(t.shape)));
    }
    init.clear_float_data();
    std::string raw(t.f.size() * 4, '\0');
    std::memcpy(raw.data(), t.f.data(), raw.size());  // little-endian, as ONNX's raw_data
    init.set_raw_data(raw);
    done[init.name()] = true;
  }
  for (const auto& [name, ok] : done) {
    if (!ok) throw Error(fmt::format("{}: no float initializer '{}'", src, name));
  }
  std::ofstream f(dst, std::ios::binary);
  if (!f || !model.SerializeToOstream(&f) || !f.flush()) {
    throw Error(fmt::format("{}: cannot be written", dst));
  }
}

}  // namespace tpu::onnx_import
