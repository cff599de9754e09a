// The rewrite-rule language of the `simplify` pass, as data (in the spirit of
// MLIR's declarative rewrite rules and Alive's transforms): each rule is a
// pattern term, a replacement term and a named precondition over what a match
// binds. The pass (src/passes/simplify) matches patterns on graphs and builds
// replacements with one generic matcher and one generic builder; the prover
// (oracle/smt_rules.cpp, `graphvet prove`) instantiates the same terms at
// every dtype instance the rule declares and proves or refutes each one. The
// table lives in src/ir so that the oracle reads it without depending on
// src/passes (architecture.md).
#pragma once

#include "ir/graph.h"
#include "ir/tensor.h"

#include <functional>
#include <map>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace graphvet::rewrite {

/// What a match binds (in the pass) or an instance fixes (in the prover).
/// Names: operand variables are plain ("x", "y"), attribute variables start
/// with '$' ("$B", "$p"), constant operands are named by their Term::var.
struct Binding {
  std::map<std::string, TensorType> operands;                     ///< "x" -> f32[2, 3]
  std::map<std::string, AttrValue> attrs;                         ///< "$B" -> ident f16
  std::map<std::string, std::shared_ptr<const Tensor>> constants; ///< "one" -> its value
  /// Output counts of variadic ops bound by name ("$n" of a Split), if any.
  std::map<std::string, int64_t> counts;
};

/// A computed attribute of a replacement (MLIR's NativeCodeCall): a named
/// function of the binding, e.g. the composition of two transpose perms.
struct AttrFn {
  std::string_view name; ///< shown in the rule's text: "compose($p, $q)"
  std::function<AttrValue(const Binding &)> fn;
};

/// An attribute of an Op term: a literal value, a variable ("$B": binds in a
/// pattern, is substituted in a replacement) or, in a replacement, computed.
struct AttrTerm {
  enum class Kind : uint8_t { Literal, Var, Computed };
  Kind kind = Kind::Literal;
  std::string key;   ///< attribute key, e.g. "to", "perm"
  AttrValue literal; ///< Literal
  std::string var;   ///< Var: "$B"
  AttrFn computed;   ///< Computed
};

/// A pattern or replacement term.
struct Term {
  enum class Kind : uint8_t {
    Var,      ///< an operand: any value in a pattern, the bound value in a replacement
    Constant, ///< a constant operand whose elements all equal `splat` (a Const node)
    Op,       ///< an op applied to argument terms
  };
  Kind kind = Kind::Var;
  std::string var;             ///< Var and Constant: the binding name
  double splat = 0;            ///< Constant: the value every element has (bit-exact: -0 != +0)
  std::string op;              ///< Op: op type ("Cast")
  std::vector<Term> args;      ///< Op: data inputs in order
  std::vector<AttrTerm> attrs; ///< Op: attributes a pattern requires / a replacement sets
  uint32_t result = 0;         ///< Op: which output port the term denotes (Split)
  /// Constant in a pattern: match any `Const` with a value (a shape operand:
  /// Reshape's shape, Slice's starts...), whose value is bound in
  /// Binding::constants[var]; `splat` is then ignored. In a replacement a
  /// Constant term is the bound (or derived) value of Binding::constants[var].
  bool anyValue = false;
  /// Op in a pattern: binds the matched node's output count in
  /// Binding::counts under this name ("$n" of a Split); empty: not bound.
  std::string countVar;
};

/// One instance the prover checks: concrete operand types, attribute values
/// and constants. `label` names it in reports ("f32 -> f16 -> f32").
struct Instance {
  std::string label;
  Binding binding;
};

struct Rule {
  std::string_view name;    ///< stable tag, used in remarks and `graphvet prove RULE`
  std::string_view summary; ///< one line for --help and docs
  Term pattern;
  Term replacement;
  std::string_view precondition; ///< the precondition in words
  /// The precondition itself: the pass calls it on every match, the prover on
  /// every instance (a refuted instance it allows is a bug; a proved one it
  /// refuses is a missed rewrite).
  std::function<bool(const Binding &)> allows;
  /// Every instantiation of the rule's dtypes (and of its attribute
  /// parameters, on small shapes) that the prover checks.
  std::function<std::vector<Instance>()> instances;
  /// Optional: values the replacement needs that the match does not bind
  /// directly (the shape constant of a collapsed Reshape chain), computed
  /// from the binding into Binding::constants / attrs. The pass runs it after
  /// matching and before `allows`; instances() return bindings it has
  /// already completed, so a prover reads them as they are. It leaves the
  /// binding unchanged when the match has no such value (then `allows`
  /// refuses).
  std::function<void(Binding &)> derive;
};

/// The simplify pass's rules, in the order the driver tries them.
std::span<const Rule> simplifyRules();
/// The rule named `name`, or nullptr.
const Rule *findRule(std::string_view name);

/// The text of a term: `Cast(Cast(x, to = $B), to = $C)`.
std::string termText(const Term &t);
/// The attributes of an Op term under a binding (variables substituted,
/// computed attributes evaluated). Missing variables are skipped.
AttrMap resolveAttrs(const Term &t, const Binding &b);

/// Whether every element of `t` is `splat` stored in t's dtype, bit for bit
/// (so -0.0 and +0.0 differ in a float tensor; both are 0 in an integer one),
/// with no indeterminate element. False for an empty tensor.
bool isSplat(const Tensor &t, double splat);
/// A tensor of dtype `t` and shape `shape` whose elements are all `splat`.
std::shared_ptr<const Tensor> splatTensor(DType t, const Shape &shape, double splat);

/// Whether every value of dtype `from` survives a cast to `to` and back
/// (tensor-semantics.md §4): the condition under which a Cast pair through
/// `to` may be removed or collapsed.
bool castPreservesValues(DType from, DType to);
/// Whether a cast `from` -> `to` is injective on values, so that casting back
/// restores them: castPreservesValues, or integers into integers at least as
/// wide (same-width sign flips included: the low bits come back).
bool castRoundTrips(DType from, DType to);
/// Whether Cast(Cast(x : a, b), c) refines to Cast(x, c): the precondition of
/// the `cast-chain` rule, one named clause per reason (rewrite_rule.cpp).
bool castChainCollapses(DType a, DType b, DType c);

// Term builders, so the table reads like the rules' text.
Term var(std::string name);
Term constant(std::string name, double splat);
/// A constant operand of any value (Term::anyValue), e.g. a shape operand.
Term anyConstant(std::string name);
Term op(std::string type, std::vector<Term> args, std::vector<AttrTerm> attrs = {});
AttrTerm attrVar(std::string key, std::string var);
AttrTerm attrLit(std::string key, AttrValue value);
AttrTerm attrFn(std::string key, std::string_view name,
                std::function<AttrValue(const Binding &)> fn);

} // namespace graphvet::rewrite
