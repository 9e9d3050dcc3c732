// SPDX-License-Identifier: Apache-2.0
// A small residual CNN as an ONNX-style graph (tpu/net.h) for the training tests (train_test,
// accel_test): every operator train::Network takes, the digits CNN's pattern in miniature.
//   x (N, 2, 5, 5) -> Conv 2->3 3x3 pad 1 (bias) -> BatchNormalization -> Relu = r
//   r -> Conv 3->3 3x3 pad 1 -> BatchNormalization -> Add(r, .) -> Relu -> MaxPool 2x2
//     -> GlobalAveragePool -> Flatten -> Gemm 3->4 (transB) = logits
#pragma once

#include <string>
#include <vector>

#include "tpu/net.h"
#include "tpu/tb/rng.h"

namespace tpu::test {

inline net::Graph SmallCnnGraph(tb::Rng& rng) {
  net::Graph g;
  g.name = "small_cnn";
  g.opset = 13;
  net::ValueInfo in;
  in.name = "x";
  in.shape = {-1, 2, 5, 5};
  in.known_rank = true;
  g.inputs.push_back(in);
  net::ValueInfo out;
  out.name = "logits";
  out.shape = {-1, 4};
  out.known_rank = true;
  g.outputs.push_back(out);
  auto tensor = [&](const std::string& name, net::Shape shape, float lo, float hi) {
    net::Tensor t;
    t.shape = shape;
    t.f.resize(size_t(net::Elements(shape)));
    for (auto& v : t.f) v = lo + (hi - lo) * float(rng.Range(0, 1000)) / 1000.0f;
    g.constants[name] = t;
  };
  tensor("c1.w", {3, 2, 3, 3}, -0.5f, 0.5f);
  tensor("c1.b", {3}, -0.1f, 0.1f);
  tensor("bn1.s", {3}, 0.8f, 1.2f);
  tensor("bn1.b", {3}, -0.1f, 0.1f);
  tensor("bn1.m", {3}, 0.0f, 0.0f);
  tensor("bn1.v", {3}, 1.0f, 1.0f);
  tensor("c2.w", {3, 3, 3, 3}, -0.4f, 0.4f);
  tensor("bn2.s", {3}, 0.8f, 1.2f);
  tensor("bn2.b", {3}, -0.1f, 0.1f);
  tensor("bn2.m", {3}, 0.0f, 0.0f);
  tensor("bn2.v", {3}, 1.0f, 1.0f);
  tensor("fc.w", {4, 3}, -0.8f, 0.8f);
  tensor("fc.b", {4}, -0.1f, 0.1f);
  auto node = [&](const std::string& op, std::vector<std::string> ins, const std::string& o) {
    net::Node n;
    n.name = o;
    n.op = op;
    n.inputs = std::move(ins);
    n.outputs = {o};
    g.nodes.push_back(n);
    return &g.nodes.back();
  };
  auto ints = [](std::vector<int64_t> v) {
    net::Attr a;
    a.kind = net::Attr::Kind::kInts;
    a.ints = std::move(v);
    return a;
  };
  auto conv = [&](net::Node* n) {
    n->attrs["kernel_shape"] = ints({3, 3});
    n->attrs["pads"] = ints({1, 1, 1, 1});
    n->attrs["strides"] = ints({1, 1});
  };
  conv(node("Conv", {"x", "c1.w", "c1.b"}, "c1"));
  node("BatchNormalization", {"c1", "bn1.s", "bn1.b", "bn1.m", "bn1.v"}, "bn1");
  node("Relu", {"bn1"}, "r");
  conv(node("Conv", {"r", "c2.w"}, "c2"));
  node("BatchNormalization", {"c2", "bn2.s", "bn2.b", "bn2.m", "bn2.v"}, "bn2");
  node("Add", {"r", "bn2"}, "sum");
  node("Relu", {"sum"}, "r2");
  net::Node* mp = node("MaxPool", {"r2"}, "mp");
  mp->attrs["kernel_shape"] = ints({2, 2});
  mp->attrs["strides"] = ints({2, 2});
  node("GlobalAveragePool", {"mp"}, "gap");
  node("Flatten", {"gap"}, "flat");
  net::Attr one;
  one.kind = net::Attr::Kind::kInt;
  one.i = 1;
  node("Gemm", {"flat", "fc.w", "fc.b"}, "logits")->attrs["transB"] = one;
  return g;
}

}  // namespace tpu::test
