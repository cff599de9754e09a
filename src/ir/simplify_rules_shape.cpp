// The shape rows of the simplify rule table: Transpose pairs composed and
// identity Transposes removed, and the Reshape family (Reshape, Flatten,
// Squeeze, Unsqueeze): no-ops removed and chains of two collapsed into one
// Reshape (longer chains collapse pair by pair as the driver iterates).
#include "ir/simplify_rules_support.h"

#include <algorithm>
#include <functional>
#include <numeric>

namespace graphvet::rewrite::detail {
namespace {

// ---- Transpose ---------------------------------------------------------

/// The perm an attribute variable holds for rank `rank`; absent is the
/// reversal (ONNX); nullopt when it is not a permutation of 0..rank-1.
std::optional<std::vector<int64_t>> permOf(const Binding &b, const std::string &v, size_t rank) {
  std::vector<int64_t> perm(rank);
  if (b.attrs.count(v)) {
    auto p = boundInts(b, v);
    if (!p || p->size() != rank)
      return std::nullopt;
    perm = *p;
  } else {
    std::iota(perm.rbegin(), perm.rend(), 0);
  }
  std::vector<int64_t> sorted = perm;
  std::sort(sorted.begin(), sorted.end());
  for (size_t i = 0; i < rank; ++i)
    if (sorted[i] != static_cast<int64_t>(i))
      return std::nullopt;
  return perm;
}

bool isIdentityPerm(const std::vector<int64_t> &p) {
  for (size_t i = 0; i < p.size(); ++i)
    if (p[i] != static_cast<int64_t>(i))
      return false;
  return true;
}

AttrValue permValue(const std::vector<int64_t> &p) {
  AttrValue::List l;
  for (int64_t v : p)
    l.push_back(AttrValue::ofInt(v));
  return AttrValue::ofList(std::move(l));
}

/// Transpose(Transpose(x, p), q) = Transpose(x, r) with r[i] = p[q[i]].
std::optional<std::vector<int64_t>> composedPerm(const Binding &b) {
  const TensorType *x = operandType(b, "x");
  if (!x)
    return std::nullopt;
  auto p = permOf(b, "$p", x->shape.size());
  auto q = permOf(b, "$q", x->shape.size());
  if (!p || !q)
    return std::nullopt;
  std::vector<int64_t> r(p->size());
  for (size_t i = 0; i < r.size(); ++i)
    r[i] = (*p)[static_cast<size_t>((*q)[i])];
  return r;
}

std::vector<std::vector<int64_t>> allPerms(size_t rank) {
  std::vector<int64_t> p(rank);
  std::iota(p.begin(), p.end(), 0);
  std::vector<std::vector<int64_t>> out;
  do
    out.push_back(p);
  while (std::next_permutation(p.begin(), p.end()));
  return out;
}

const Shape kTransposeShapes[] = {{2}, {2, 3}, {2, 3, 4}, {1, 2, 3, 2}};

/// Perms checked per rank: every one up to rank 3, a few of rank 4.
std::vector<std::vector<int64_t>> samplePerms(size_t rank) {
  if (rank <= 3)
    return allPerms(rank);
  return {{0, 1, 2, 3}, {0, 2, 3, 1}, {0, 3, 1, 2}, {3, 2, 1, 0}};
}

// ---- the Reshape family ------------------------------------------------

/// One form of a reshaping op in a pattern, with the names of its variables
/// suffixed by the position `k` ("1" inner, "2" outer) so two forms nest.
struct Form {
  std::string name;
  std::function<Term(Term, const std::string &)> term;
  std::function<std::optional<Shape>(const Binding &, const Shape &, const std::string &)> shape;
  /// Attribute and constant choices the prover checks on an input shape.
  std::function<std::vector<std::pair<std::string, Binding>>(const Shape &, const std::string &)>
      params;
};

Binding withConstant(const std::string &name, std::vector<int64_t> v) {
  Binding b;
  b.constants[name] = i64Tensor(v);
  return b;
}

std::vector<Form> forms() {
  std::vector<Form> f;
  f.push_back(
      Form{"reshape",
           [](Term arg, const std::string &k) {
             return op("Reshape", {std::move(arg), anyConstant("s" + k)},
                       {attrVar("allowzero", "$z" + k)});
           },
           [](const Binding &b, const Shape &in, const std::string &k) -> std::optional<Shape> {
             auto spec = constantInts(b, "s" + k);
             auto z = boundInt(b, "$z" + k, 0);
             if (!spec || !z)
               return std::nullopt;
             return reshapeShape(in, *spec, *z != 0);
           },
           [](const Shape &in, const std::string &k) {
             std::vector<std::pair<std::string, Binding>> out;
             Shape rev(in.rbegin(), in.rend());
             out.push_back({"reshape [-1]", withConstant("s" + k, {-1})});
             out.push_back({"reshape " + listText(rev), withConstant("s" + k, rev)});
             out.push_back({"reshape [1, -1]", withConstant("s" + k, {1, -1})});
             if (!in.empty()) {
               out.push_back({"reshape [0, -1]", withConstant("s" + k, {0, -1})});
               Binding z = withConstant("s" + k, rev);
               z.attrs["$z" + k] = AttrValue::ofInt(1);
               out.push_back({"reshape " + listText(rev) + " allowzero", z});
             }
             return out;
           }});
  f.push_back(
      Form{"flatten",
           [](Term arg, const std::string &k) {
             return op("Flatten", {std::move(arg)}, {attrVar("axis", "$axis" + k)});
           },
           [](const Binding &b, const Shape &in, const std::string &k) -> std::optional<Shape> {
             auto axis = boundInt(b, "$axis" + k, 1);
             if (!axis)
               return std::nullopt;
             return flattenShape(in, *axis);
           },
           [](const Shape &in, const std::string &k) {
             std::vector<std::pair<std::string, Binding>> out;
             for (int64_t a : {int64_t{0}, int64_t{1}, int64_t{-1}}) {
               if (a > static_cast<int64_t>(in.size()) || -a > static_cast<int64_t>(in.size()))
                 continue;
               Binding b;
               b.attrs["$axis" + k] = AttrValue::ofInt(a);
               out.push_back({"flatten axis " + std::to_string(a), b});
             }
             out.push_back({"flatten (axis 1 by default)", Binding{}});
             return out;
           }});
  // Squeeze with one input: all size-1 axes, or the `axes` attribute of
  // opsets before 13 (bound, so an attributed node never passes for the
  // squeeze-everything form).
  f.push_back(
      Form{"squeeze",
           [](Term arg, const std::string &k) {
             return op("Squeeze", {std::move(arg)}, {attrVar("axes", "$axes" + k)});
           },
           [](const Binding &b, const Shape &in, const std::string &k) -> std::optional<Shape> {
             if (!b.attrs.count("$axes" + k))
               return squeezeShape(in, std::nullopt);
             auto axes = boundInts(b, "$axes" + k);
             if (!axes)
               return std::nullopt;
             return squeezeShape(in, axes);
           },
           [](const Shape &in, const std::string &k) {
             std::vector<std::pair<std::string, Binding>> out{{"squeeze", Binding{}}};
             int64_t rank = static_cast<int64_t>(in.size());
             for (int64_t i = 0; i < rank; ++i)
               if (in[static_cast<size_t>(i)] == 1) {
                 Binding b;
                 b.attrs["$axes" + k] = AttrValue::ofList({AttrValue::ofInt(i - rank)});
                 out.push_back({"squeeze {axes = [" + std::to_string(i - rank) + "]}", b});
               }
             return out;
           }});
  f.push_back(Form{
      "squeeze-axes",
      [](Term arg, const std::string &k) {
        return op("Squeeze", {std::move(arg), anyConstant("axes" + k)});
      },
      [](const Binding &b, const Shape &in, const std::string &k) -> std::optional<Shape> {
        auto axes = constantInts(b, "axes" + k);
        if (!axes)
          return std::nullopt;
        return squeezeShape(in, axes);
      },
      [](const Shape &in, const std::string &k) {
        std::vector<std::pair<std::string, Binding>> out;
        int64_t rank = static_cast<int64_t>(in.size());
        for (int64_t i = 0; i < rank; ++i)
          if (in[static_cast<size_t>(i)] == 1) {
            out.push_back({"squeeze [" + std::to_string(i) + "]", withConstant("axes" + k, {i})});
            out.push_back({"squeeze [" + std::to_string(i - rank) + "]",
                           withConstant("axes" + k, {i - rank})});
          }
        return out;
      }});
  f.push_back(
      Form{"unsqueeze",
           [](Term arg, const std::string &k) {
             return op("Unsqueeze", {std::move(arg), anyConstant("axes" + k)});
           },
           [](const Binding &b, const Shape &in, const std::string &k) -> std::optional<Shape> {
             auto axes = constantInts(b, "axes" + k);
             if (!axes)
               return std::nullopt;
             return unsqueezeShape(in, *axes);
           },
           [](const Shape &, const std::string &k) {
             return std::vector<std::pair<std::string, Binding>>{
                 {"unsqueeze [0]", withConstant("axes" + k, {0})},
                 {"unsqueeze [-1]", withConstant("axes" + k, {-1})}};
           }});
  // Unsqueeze with the `axes` attribute (opsets before 13).
  f.push_back(
      Form{"unsqueeze-attr",
           [](Term arg, const std::string &k) {
             return op("Unsqueeze", {std::move(arg)}, {attrVar("axes", "$axes" + k)});
           },
           [](const Binding &b, const Shape &in, const std::string &k) -> std::optional<Shape> {
             auto axes = boundInts(b, "$axes" + k);
             if (!axes)
               return std::nullopt;
             return unsqueezeShape(in, *axes);
           },
           [](const Shape &, const std::string &k) {
             Binding b;
             b.attrs["$axes" + k] = AttrValue::ofList({AttrValue::ofInt(1)});
             return std::vector<std::pair<std::string, Binding>>{{"unsqueeze {axes = [1]}", b}};
           }});
  return f;
}

void merge(Binding &into, const Binding &from) {
  for (const auto &[k, v] : from.attrs)
    into.attrs[k] = v;
  for (const auto &[k, v] : from.constants)
    into.constants[k] = v;
}

const Shape kReshapeShapes[] = {{2, 3}, {1, 2, 1, 3}};

bool hasZero(const std::vector<int64_t> &v) {
  return std::find(v.begin(), v.end(), 0) != v.end();
}

/// The shape of the outer form applied to the inner form applied to x.
std::optional<Shape> chainShape(const Form &inner, const Form &outer, const Binding &b) {
  const TensorType *x = operandType(b, "x");
  if (!x)
    return std::nullopt;
  auto mid = inner.shape(b, x->shape, "1");
  if (!mid)
    return std::nullopt;
  return outer.shape(b, *mid, "2");
}

/// Instances of a two-form chain over the sample shapes (f32), plus the
/// first choice of each at every dtype.
std::vector<Instance> chainInstances(const Form &inner, const Form &outer,
                                     const std::function<void(Binding &)> &derive) {
  std::vector<Instance> out;
  for (const Shape &s : kReshapeShapes)
    for (const auto &[innerLabel, innerParams] : inner.params(s, "1")) {
      Binding b;
      b.operands["x"] = TensorType{DType::F32, s};
      merge(b, innerParams);
      auto mid = inner.shape(b, s, "1");
      if (!mid)
        continue;
      for (const auto &[outerLabel, outerParams] : outer.params(*mid, "2")) {
        Binding full = b;
        merge(full, outerParams);
        if (!outer.shape(full, *mid, "2"))
          continue;
        if (derive)
          derive(full);
        out.push_back({"f32 " + shapeStr(s) + " " + innerLabel + ", " + outerLabel, full});
      }
    }
  if (!out.empty())
    for (DType t : kAllDTypes) {
      if (t == DType::F32)
        continue;
      Instance in = out.front();
      in.binding.operands["x"].dtype = t;
      in.label = std::string(dtypeName(t)) + in.label.substr(3);
      out.push_back(std::move(in));
    }
  return out;
}

} // namespace

void addTransposeRules(std::vector<Rule> &rules) {
  rules.push_back(Rule{"transpose-identity", "a Transpose by the identity permutation is its input",
                       op("Transpose", {var("x")}, {attrVar("perm", "$p")}), var("x"),
                       "$p (the reversal when absent) is the identity permutation of x's axes",
                       [](const Binding &b) {
                         const TensorType *x = operandType(b, "x");
                         if (!x)
                           return false;
                         auto p = permOf(b, "$p", x->shape.size());
                         return p && isIdentityPerm(*p);
                       },
                       [] {
                         std::vector<Instance> out;
                         for (const Shape &s : kTransposeShapes) {
                           for (const auto &p : samplePerms(s.size())) {
                             Binding b;
                             b.operands["x"] = TensorType{DType::F32, s};
                             b.attrs["$p"] = permValue(p);
                             out.push_back({"f32 " + shapeStr(s) + " perm " + listText(p), b});
                           }
                           Binding b;
                           b.operands["x"] = TensorType{DType::F32, s};
                           out.push_back({"f32 " + shapeStr(s) + " perm absent (reversed)", b});
                         }
                         for (DType t : kAllDTypes) {
                           Binding b;
                           b.operands["x"] = TensorType{t, {2, 3}};
                           b.attrs["$p"] = permValue({0, 1});
                           out.push_back({std::string(dtypeName(t)) + " [2, 3] perm [0, 1]", b});
                         }
                         return out;
                       }});

  rules.push_back(Rule{
      "transpose-pair", "a Transpose of a Transpose is one Transpose by the composed permutation",
      op("Transpose", {op("Transpose", {var("x")}, {attrVar("perm", "$p")})},
         {attrVar("perm", "$q")}),
      op("Transpose", {var("x")},
         {attrFn("perm", "compose($p, $q)",
                 [](const Binding &b) { return permValue(composedPerm(b).value()); })}),
      "$p and $q (the reversal when absent) are permutations of x's axes",
      [](const Binding &b) { return composedPerm(b).has_value(); },
      [] {
        std::vector<Instance> out;
        for (const Shape &s : kTransposeShapes) {
          std::vector<std::optional<std::vector<int64_t>>> perms;
          for (const auto &p : samplePerms(s.size()))
            perms.push_back(p);
          perms.push_back(std::nullopt);
          for (const auto &p : perms)
            for (const auto &q : perms) {
              Binding b;
              b.operands["x"] = TensorType{DType::F32, s};
              if (p)
                b.attrs["$p"] = permValue(*p);
              if (q)
                b.attrs["$q"] = permValue(*q);
              out.push_back({"f32 " + shapeStr(s) + " perms " + (p ? listText(*p) : "absent") +
                                 ", " + (q ? listText(*q) : "absent"),
                             b});
            }
        }
        for (DType t : kAllDTypes) {
          Binding b;
          b.operands["x"] = TensorType{t, {2, 3}};
          b.attrs["$p"] = permValue({1, 0});
          b.attrs["$q"] = permValue({1, 0});
          out.push_back({std::string(dtypeName(t)) + " [2, 3] perms [1, 0], [1, 0]", b});
        }
        return out;
      }});
}

void addReshapeRules(std::vector<Rule> &rules) {
  static const std::vector<Form> kForms = forms();
  const Form &reshape = kForms[0];

  // No-ops: the op leaves the shape as it is. A Reshape already views x; the
  // others make a fresh buffer, which the pass's aliasing checks guard.
  for (const Form &f : kForms) {
    if (f.name == "unsqueeze" || f.name == "unsqueeze-attr" || f.name == "squeeze-axes")
      continue; // always changes the rank / an empty axes list is ambiguous
    const Form *form = &f;
    rules.push_back(
        Rule{intern(f.name + "-noop"), intern("a " + f.name + " that keeps the shape is its input"),
             f.term(var("x"), "1"), var("x"), "the op's result shape is the shape of x",
             [form](const Binding &b) {
               const TensorType *x = operandType(b, "x");
               return x && form->shape(b, x->shape, "1") == x->shape;
             },
             [form] {
               std::vector<Instance> out;
               for (const Shape &s : {Shape{2, 3}, Shape{1, 2, 1, 3}, Shape{1, 6}})
                 for (const auto &[label, params] : form->params(s, "1")) {
                   Binding b;
                   b.operands["x"] = TensorType{DType::F32, s};
                   merge(b, params);
                   if (form->shape(b, s, "1"))
                     out.push_back({"f32 " + shapeStr(s) + " " + label, b});
                 }
               for (DType t : kAllDTypes) {
                 Binding b;
                 b.operands["x"] = TensorType{t, {2, 3}};
                 if (form->name == "reshape")
                   b.constants["s1"] = i64Tensor({2, 3});
                 out.push_back({std::string(dtypeName(t)) + " [2, 3] keeping the shape", b});
               }
               return out;
             }});
  }

  // Reshape(F(x), s) = Reshape(x, s): s names the result's shape outright
  // (no 0 copying a dimension of F's result, unless allowzero).
  for (const Form &inner : kForms) {
    const Form *in = &inner;
    const Form *outer = &reshape;
    rules.push_back(Rule{
        intern(inner.name == "reshape" ? std::string("reshape-chain") : "reshape-of-" + inner.name),
        intern("a Reshape of a " + inner.name + " reshapes its input directly"),
        reshape.term(inner.term(var("x"), "1"), "2"),
        op("Reshape", {var("x"), anyConstant("s2")}, {attrVar("allowzero", "$z2")}),
        "both ops are well typed, and s2 has no 0 entry, or allowzero = 1 on the outer "
        "Reshape, or every 0 entry copies a dimension that x and the inner result share",
        [in, outer](const Binding &b) {
          auto s2 = constantInts(b, "s2");
          auto z2 = boundInt(b, "$z2", 0);
          if (!s2 || !z2 || !chainShape(*in, *outer, b))
            return false;
          if (!hasZero(*s2) || *z2 == 1)
            return true;
          // A 0 copies the dimension at its position: of F's result in the
          // pattern, of x in the replacement; equal dimensions copy alike
          // (and -1 then infers the same size from the same element count).
          const TensorType *x = operandType(b, "x");
          auto mid = x ? in->shape(b, x->shape, "1") : std::nullopt;
          if (!mid)
            return false;
          for (size_t i = 0; i < s2->size(); ++i)
            if ((*s2)[i] == 0 &&
                (i >= x->shape.size() || i >= mid->size() || x->shape[i] != (*mid)[i]))
              return false;
          return true;
        },
        [in, outer] { return chainInstances(*in, *outer, nullptr); }});
  }

  // G(F(x)) = Reshape(x, shape) for the other reshaping ops G: the shape is
  // the chain's result shape, derived from the match.
  for (const Form &outerForm : kForms) {
    if (outerForm.name == "reshape")
      continue;
    for (const Form &inner : kForms) {
      const Form *in = &inner;
      const Form *outer = &outerForm;
      std::function<void(Binding &)> derive = [in, outer](Binding &b) {
        if (auto s = chainShape(*in, *outer, b))
          b.constants["shape"] = i64Tensor(*s);
      };
      rules.push_back(
          Rule{intern(outerForm.name + "-of-" + inner.name),
               intern("a " + outerForm.name + " of a " + inner.name + " is one Reshape"),
               outerForm.term(inner.term(var("x"), "1"), "2"),
               op("Reshape", {var("x"), anyConstant("shape")}),
               "both ops are well typed, shape is the chain's result shape and has no 0 dimension",
               [in, outer](const Binding &b) {
                 auto s = chainShape(*in, *outer, b);
                 auto derived = constantInts(b, "shape");
                 return s && derived && *derived == *s && !hasZero(*s);
               },
               [in, outer, derive] { return chainInstances(*in, *outer, derive); }, derive});
    }
  }
}

} // namespace graphvet::rewrite::detail
