// State and scope motifs of the typed generator: in-place writers (GE's
// Assign family) of graph inputs and variables among numeric reads of the
// same buffer, ordered by data and control edges so that the graph stays
// race-free, and If branches holding equal subexpressions (within a branch,
// across the two branches, and equal to a node outside the If). These are
// the shapes where a pass that reasons about values alone merges a read
// from before a write with one from after it, drops the control edge that
// kept a read after the write, or uses one scope's value in another.
//
// A written source never joins the pool: every reader of it is made here,
// ordered against the write; later steps read only fresh results and the
// writer's own output (which depends on the write). Branch nodes stay out
// of the pool too. Shapes are small floats (f32 mostly, f16).
#include "props/typed_attrs.h"
#include "props/typed_builder.h"
#include "props/typed_shape.h"

#include <memory>

namespace graphvet::props::typed {
namespace {

/// Unary float ops a read of the buffer goes through.
constexpr const char *kReads[] = {"Relu", "Neg", "Abs", "Sigmoid", "Tanh", "Exp"};
/// The in-place writers: output 0 is input 0's buffer (semantics.md §1).
constexpr const char *kWriters[] = {"AssignAdd", "Assign", "AssignSub"};

std::string pickRead(Builder &b) {
  return kReads[b.ch.below(static_cast<unsigned>(std::size(kReads)))];
}

/// A small float tensor type: rank 1-2, dimensions 1-4, f32 or f16.
TensorType smallFloatType(Builder &b) {
  const DType dt = b.ch.chance(30) ? DType::F16 : DType::F32;
  Shape s{1 + b.ch.below(4)};
  if (b.ch.chance(50))
    s.push_back(1 + b.ch.below(4));
  return {dt, s};
}

/// An earlier value of exactly type `t`, else a new source of it.
Value valueOf(Builder &b, const TensorType &t) {
  const uint8_t back = b.nextRef();
  if (b.ch.below(3) != 0)
    if (auto v = b.find(back, [&](const Value &x) { return x.type == t; }))
      return *v;
  return b.source(t);
}

Value read(Builder &b, const std::string &op, const Value &x) {
  return b.emit1(op, {x}, {}, x.type);
}

/// A read whose output carries its description (`out0.dtype`/`shape`), so
/// that two of them stay equal whatever emit() adds at random.
Value describedRead(Builder &b, const std::string &op, const Value &x) {
  AttrMap attrs;
  attrs["out0.dtype"] = ident(x.dtype());
  attrs["out0.shape"] = intList(x.type.shape);
  return b.emit1(op, {x}, std::move(attrs), x.type);
}

// ---- in-place writes -----------------------------------------------------------------

/// A variable or graph input that the motif writes in place, and the
/// writer's op.
struct Write {
  Value target;
  std::string op;
};

Write pickWrite(Builder &b, const TensorType &t) {
  Write w{b.ch.chance(50) ? b.variable(t) : b.data(t), ""};
  w.op = kWriters[b.ch.below(static_cast<unsigned>(std::size(kWriters)))];
  return w;
}

Value emitWrite(Builder &b, const Write &w, const Value &value) {
  return b.emit1(w.op, {w.target, value}, {}, w.target.type);
}

/// (0) Equal reads around the write: r1 = f(t) before it, r2 = f(t) after
/// it (control edges), both read by later ops — merging them would give r2's
/// readers the value from before the write (cse refuses: written input).
/// (1) An order kept by a duplicate: e = f(y), then the write of t, then
/// d = f(y) after it (control edge) and Add(d, t) reading t after the
/// write only through d — merging d into e must move the control edge.
/// (2) A write of a value read from the buffer itself: w = W(t, f(t)), then
/// a numeric op of the written buffer (through the writer's output).
/// (3) A constant written, then two equal reads after the write (these may
/// merge) and an op of them with the constant. Forms 0 and 1 (the orders a
/// pass can break) are drawn twice as often.
void buildInplaceWrite(Builder &b, const std::string &) {
  const TensorType t = smallFloatType(b);
  const Write w = pickWrite(b, t);
  const std::string f = pickRead(b);
  switch (b.ch.below(6) % 4) {
  case 1: {
    const Value y = valueOf(b, t);
    const Value e = read(b, f, y);
    const Value wr = emitWrite(b, w, valueOf(b, t));
    const Value d = read(b, f, y);
    b.order(wr, d);
    b.emit1("Add", {d, w.target}, {}, t);
    if (b.ch.chance(50))
      b.emit1("Mul", {e, y}, {}, t);
    return;
  }
  case 2: {
    const Value r = read(b, f, w.target);
    const Value wr = emitWrite(b, w, r);
    b.emit1(b.ch.chance(50) ? "Mul" : "Sub", {wr, valueOf(b, t)}, {}, t);
    return;
  }
  case 3: {
    const Value k = b.constant(t);
    const Value wr = emitWrite(b, w, k);
    const Value r1 = read(b, f, wr), r2 = read(b, f, wr);
    b.emit1("Add", {r1, r2}, {}, t);
    if (b.ch.chance(50))
      b.emit1("Mul", {r1, k}, {}, t);
    return;
  }
  default: {
    const Value r1 = describedRead(b, f, w.target);
    const Value wr = emitWrite(b, w, valueOf(b, t));
    b.order(r1, wr);
    const Value r2 = describedRead(b, f, w.target);
    b.order(wr, r2);
    if (b.ch.chance(60))
      b.emit1("Add", {r1, r2}, {}, t);
    return;
  }
  }
}

// ---- If branches --------------------------------------------------------------------------

/// A Const of type `t` holding `v` everywhere, in subgraph `g`.
NodeId branchConst(Builder &b, GraphId g, const TensorType &t, double v) {
  Tensor k(t);
  for (int64_t i = 0; i < k.size(); ++i)
    k.setDouble(i, v);
  AttrMap attrs;
  attrs["value"] = AttrValue::ofTensor(std::make_shared<const Tensor>(std::move(k)));
  return b.emitIn(g, "Const", {}, std::move(attrs), 1);
}

/// One branch of type `t`: Data (the If's input 1) -> f, sometimes twice
/// (an equal pair within the branch, added), sometimes times a constant
/// (`scale`, equal in both branches when the choices agree), then the
/// result. `tail` varies the branches' ends so that they differ.
void buildBranch(Builder &b, GraphId g, const TensorType &t, const std::string &f, bool twice,
                 double scale, const char *tail) {
  AttrMap param;
  param["_parent_node_index"] = AttrValue::ofInt(1);
  const OutPort d{b.emitIn(g, "Data", {}, std::move(param), 1), 0};
  OutPort r{b.emitIn(g, f, {d}, {}, 1), 0};
  if (twice) {
    const OutPort r2{b.emitIn(g, f, {d}, {}, 1), 0};
    r = OutPort{b.emitIn(g, "Add", {r, r2}, {}, 1), 0};
  }
  if (scale != 1.0)
    r = OutPort{b.emitIn(g, "Mul", {r, OutPort{branchConst(b, g, t, scale), 0}}, {}, 1), 0};
  if (tail)
    r = OutPort{b.emitIn(g, tail, {r}, {}, 1), 0};
  AttrMap out;
  out[Node::portKey(false, 0, "_parent_node_index")] = AttrValue::ofInt(0);
  b.emitIn(g, "NetOutput", {r}, std::move(out), 0);
}

/// If(c, x) whose branches both compute f(x) (scope: neither may use the
/// other's, nor a node outside the If), the then-branch sometimes twice
/// (merges inside the branch), with f(x) also computed outside before
/// and/or after the If; the condition a graph input or a constant.
void buildIfBranches(Builder &b, const std::string &) {
  const TensorType t = smallFloatType(b);
  const Value x = valueOf(b, t);
  Value cond;
  if (b.ch.chance(25)) {
    Tensor c(TensorType{DType::Bool, {}});
    c.setInt(0, b.ch.chance(50) ? 1 : 0);
    cond = b.literal(std::move(c));
  } else {
    cond = b.data({DType::Bool, {}});
  }
  const std::string f = pickRead(b);
  std::optional<Value> before;
  if (b.ch.chance(50))
    before = read(b, f, x);
  const Value out = b.emit1("If", {cond, x}, {}, t);
  constexpr double kScales[] = {1.0, 2.0, -0.5};
  const double scale = kScales[b.ch.below(3)];
  const GraphId thenG = b.addSubgraph(out, "then"), elseG = b.addSubgraph(out, "else");
  buildBranch(b, thenG, t, f, b.ch.chance(50), scale, nullptr);
  buildBranch(b, elseG, t, f, false, b.ch.chance(50) ? scale : 1.0,
              b.ch.chance(50) ? "Neg" : nullptr);
  if (b.ch.chance(50)) {
    const Value after = read(b, f, x);
    b.emit1("Add", {out, after}, {}, t);
  } else if (before) {
    b.emit1("Add", {out, *before}, {}, t);
  }
}

constexpr CatalogueEntry kEntries[] = {
    {"motif:inplace-write", buildInplaceWrite},
    {"motif:if-branches", buildIfBranches},
};

} // namespace

std::span<const CatalogueEntry> stateMotifEntries() {
  return kEntries;
}

} // namespace graphvet::props::typed
