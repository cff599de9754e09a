// Helpers for kernel tests: build a detached node, make tensors from numbers,
// run an op's inference and kernel (evaluateNode) and read results back.
#pragma once

#include "ir/op_def.h"
#include "ir/op_library.h"

#include <gtest/gtest.h>

#include <initializer_list>
#include <string>
#include <vector>

namespace graphvet::testing {

/// A node of `type` with `numInputs` connected inputs, `numOutputs` outputs
/// and the given attributes (not part of any graph).
inline Node opNode(const std::string &type, size_t numInputs, AttrMap attrs = {},
                   uint32_t numOutputs = 1) {
  Node n;
  n.id = 0;
  n.name = "op";
  n.type = type;
  n.inputs.assign(numInputs, OutPort{1, 0});
  n.numOutputs = numOutputs;
  n.attrs = std::move(attrs);
  return n;
}

/// A tensor of `dtype` and `shape` from numbers (rounded once to the dtype;
/// integer dtypes take the integral value).
inline Tensor tensorOf(DType dtype, Shape shape, std::initializer_list<double> values) {
  Tensor t(TensorType{dtype, std::move(shape)});
  int64_t i = 0;
  for (double v : values) {
    if (i >= t.size())
      break;
    if (isFloat(dtype))
      t.setDouble(i++, v);
    else
      t.setInt(i++, static_cast<int64_t>(v));
  }
  EXPECT_EQ(i, t.size()) << "tensorOf: value count does not match the shape";
  return t;
}

/// Every element as a double (integers converted).
inline std::vector<double> valuesOf(const Tensor &t) {
  std::vector<double> v;
  for (int64_t i = 0; i < t.size(); ++i)
    v.push_back(t.getDouble(i));
  return v;
}

/// Runs the node on the inputs; fails the test (and returns no outputs) when
/// inference or the kernel is missing or fails.
inline std::vector<Tensor> run(const Node &n, std::vector<const Tensor *> inputs) {
  std::string error;
  auto r = evaluateNode(n, inputs, error);
  EXPECT_TRUE(r.has_value()) << n.type << ": " << error;
  return r ? std::move(*r) : std::vector<Tensor>{};
}

/// The inference error for the node on these input types ("" when it succeeds).
inline std::string inferError(const Node &n, std::vector<std::optional<TensorType>> inputs,
                              std::vector<const Tensor *> constants = {}) {
  std::string error;
  constants.resize(inputs.size(), nullptr);
  auto r = inferNodeTypes(n, inputs, constants, error);
  return r ? std::string() : error;
}

} // namespace graphvet::testing
