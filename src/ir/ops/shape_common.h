// Helpers shared by the shape family's two files (shape.cpp: shape and
// reshaping ops; shape_move.cpp: ops that move elements between positions).
// Internal to the family: not part of the op interface.
#pragma once

#include "ir/op_def.h"
#include "ir/op_library.h"

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

namespace graphvet::ops {

/// The rows of shape_move.cpp (Transpose, Concat, Split, Slice, Gather,
/// Tile, Pad, DepthToSpace, SpaceToDepth); shapeOps() returns them after
/// shape.cpp's own rows.
std::span<const OpInfo> shapeMoveOps();

namespace shape_detail {

/// Output types larger than this (1 GiB) are refused by inference: the ops that
/// make outputs from values (ConstantOfShape, Expand, Tile, Pad, Range) must
/// stay bounded on any input.
inline constexpr uint64_t kMaxOutputBytes = uint64_t{1} << 30;

/// Checks an output type: no negative dimension, element count and byte
/// size within bounds.
inline bool checkOutputType(InferContext &ctx, const TensorType &t) {
  auto n = t.checkedElements();
  if (!n || static_cast<uint64_t>(*n) > kMaxOutputBytes / dtypeBytes(t.dtype))
    return ctx.fail("output type " + t.str() + " is too large");
  return true;
}

/// Checks the input count: inputs [0, minInputs) must be connected, at most
/// maxInputs slots.
inline bool checkInputs(InferContext &ctx, size_t minInputs, size_t maxInputs) {
  const std::string &op = ctx.node.type;
  if (ctx.numInputs() < minInputs || ctx.numInputs() > maxInputs) {
    if (minInputs == maxInputs)
      return ctx.fail(op + " takes " + std::to_string(minInputs) + " input(s), got " +
                      std::to_string(ctx.numInputs()));
    return ctx.fail(op + " takes " + std::to_string(minInputs) + " to " +
                    std::to_string(maxInputs) + " inputs, got " + std::to_string(ctx.numInputs()));
  }
  for (size_t i = 0; i < minInputs; ++i)
    if (!ctx.has(i))
      return ctx.fail("input " + std::to_string(i) + " of " + op + " must be connected");
  return true;
}

/// Reads the integer values of a shape operand (a constant input) into
/// `out`: `name` is the ONNX input name for messages. The input's dtype must
/// be i64 (or i32 when `allowI32`), its rank 1 (or 0 when `allowScalar`), its
/// value known (a constant) and determinate.
inline bool shapeOperand(InferContext &ctx, size_t i, const char *name, std::vector<int64_t> &out,
                         bool allowI32 = false, bool allowScalar = false) {
  const std::string where = "input " + std::to_string(i) + " (" + name + ") of " + ctx.node.type;
  const TensorType &t = ctx.in(i);
  if (t.dtype != DType::I64 && !(allowI32 && t.dtype == DType::I32))
    return ctx.fail(where + (allowI32 ? " must be i32 or i64" : " must be i64") + ", got " +
                    t.str());
  if (t.rank() != 1 && !(allowScalar && t.rank() == 0))
    return ctx.fail(where + " must be 1-D, got " + t.str());
  const Tensor *c = ctx.constant(i);
  if (!c)
    return ctx.fail(where + " must be a constant");
  if (c->type() != t)
    return ctx.fail(where + ": constant value does not match its type " + t.str());
  out.clear();
  for (int64_t k = 0; k < c->size(); ++k) {
    if (c->isUndef(k))
      return ctx.fail(where + " has an indeterminate element");
    out.push_back(c->getInt(k));
  }
  return true;
}

/// Parameters of an op whose kernel needs nothing beyond its output type.
struct NoParams {};

/// The inference function of an op: its planning function without params.
template <class Params, bool (*Plan)(InferContext &, Params *)> bool inferOnly(InferContext &ctx) {
  return Plan(ctx, nullptr);
}

/// Marks every element of every output indeterminate: what a kernel does
/// when it is run on inputs its inference rejects (never after evaluateNode,
/// which infers first).
inline void allUndef(KernelContext &k) {
  for (Tensor &t : k.outputs)
    for (int64_t i = 0; i < t.size(); ++i)
      t.setUndef(i);
}

/// Re-runs an op's planning function (its inference, filling the kernel's
/// parameters) on the kernel's concrete inputs. False, with every output
/// marked indeterminate, when planning fails or disagrees with the
/// preallocated outputs; false as well when every output is empty: there is
/// nothing to compute, and an empty output may still have huge dimensions
/// (`[0, 2^40]`) that no kernel should walk or tabulate.
template <class Params, class PlanFn> bool replan(KernelContext &k, PlanFn plan, Params &params) {
  std::vector<std::optional<TensorType>> types;
  for (const Tensor *t : k.inputs)
    types.push_back(t ? std::optional<TensorType>(t->type()) : std::nullopt);
  InferContext probe{k.node, types, k.inputs, {}, {}};
  bool ok = plan(probe, nullptr) && probe.outputs.size() >= k.outputs.size();
  for (size_t i = 0; ok && i < k.outputs.size(); ++i)
    ok = probe.outputs[i] == k.outputs[i].type();
  if (!ok) {
    allUndef(k);
    return false;
  }
  bool empty = true;
  for (const Tensor &t : k.outputs)
    empty = empty && t.size() == 0;
  if (empty)
    return false;
  InferContext ic{k.node, types, k.inputs, {}, {}};
  return plan(ic, &params);
}

/// Copies into `out` (row-major over the shape given by the tables' sizes,
/// whose product is out.size()) element `sum_k tables[k][c_k]` of `in` for
/// output coordinates c, or, when some tables[k][c_k] is negative, element 0
/// of `fill` (nullptr: never happens). Each copy carries the undef mask.
inline void copyByAxes(Tensor &out, const Tensor &in,
                       const std::vector<std::vector<int64_t>> &tables,
                       const Tensor *fill = nullptr) {
  size_t r = tables.size();
  for (const auto &t : tables)
    if (t.empty())
      return;
  // The common case (Slice with step 1, Expand of a row...): the innermost
  // table is a run of consecutive elements, copied as one block per outer
  // coordinate.
  if (r > 0) {
    const std::vector<int64_t> &last = tables[r - 1];
    bool run = true;
    for (size_t e = 0; e < last.size() && run; ++e)
      run = last[e] >= 0 && last[e] == last[0] + static_cast<int64_t>(e);
    if (run) {
      const int64_t len = static_cast<int64_t>(last.size());
      std::vector<size_t> c(r - 1, 0);
      for (int64_t i = 0; i < out.size(); i += len) {
        int64_t src = last[0];
        bool pad = false;
        for (size_t k = 0; k + 1 < r; ++k) {
          int64_t v = tables[k][c[k]];
          pad = pad || v < 0;
          src += v;
        }
        if (!pad)
          out.copyElements(i, in, src, len);
        else if (fill)
          for (int64_t e = 0; e < len; ++e)
            out.copyElement(i + e, *fill, 0);
        for (size_t k = r - 1; k-- > 0;) {
          if (++c[k] < tables[k].size())
            break;
          c[k] = 0;
        }
      }
      return;
    }
  }
  std::vector<size_t> c(r, 0);
  for (int64_t i = 0; i < out.size(); ++i) {
    int64_t src = 0;
    bool pad = false;
    for (size_t k = 0; k < r; ++k) {
      int64_t v = tables[k][c[k]];
      if (v < 0)
        pad = true;
      src += v;
    }
    if (pad) {
      if (fill)
        out.copyElement(i, *fill, 0);
    } else {
      out.copyElement(i, in, src);
    }
    for (size_t k = r; k-- > 0;) {
      if (++c[k] < tables[k].size())
        break;
      c[k] = 0;
    }
  }
}

/// The table of a plain strided axis: c * stride for c in [0, n).
inline std::vector<int64_t> stridedAxis(int64_t n, int64_t stride, int64_t offset = 0) {
  std::vector<int64_t> t(static_cast<size_t>(n));
  for (int64_t c = 0; c < n; ++c)
    t[static_cast<size_t>(c)] = offset + c * stride;
  return t;
}

/// "[1, 2]" for messages.
inline std::string listStr(std::span<const int64_t> v) {
  return shapeStr(v);
}

} // namespace shape_detail
} // namespace graphvet::ops
