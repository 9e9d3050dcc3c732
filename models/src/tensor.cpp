// SPDX-License-Identifier: Apache-2.0
#include "tpu/tensor.h"

#include <fmt/format.h>

namespace tpu {

std::string ShapeText(const Shape& s) {
  std::string r = "(";
  for (size_t i = 0; i < s.size(); ++i) r += fmt::format("{}{}", i ? ", " : "", s[i]);
  return r + (s.size() == 1 ? ",)" : ")");
}

int64_t Elements(const Shape& s) {
  int64_t n = 1;
  for (int64_t d : s) n *= d;
  return n;
}

Tensor AsFloat(Tensor t) {
  if (!t.is_int) return t;
  t.f.assign(t.i.begin(), t.i.end());
  t.i.clear();
  t.is_int = false;
  return t;
}

}  // namespace tpu
