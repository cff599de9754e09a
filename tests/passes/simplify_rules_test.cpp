// The simplify rule table against the pass's own matcher and builder: for
// every instance of every rule, the pattern built as a graph is well typed,
// the generic matcher binds it back to the instance's binding, and when the
// precondition allows the instance, the generic builder's replacement has
// the pattern's type (a rewrite never changes a value's type). Also: names
// are unique and instances stay small (the prover's budget).
#include "ir/rewrite_rule.h"
#include "ir/types.h"
#include "passes/simplify/match.h"

#include <gtest/gtest.h>

#include <set>

namespace graphvet {
namespace {

using rewrite::Instance;
using rewrite::Rule;
using rewrite::Term;

/// Builds `t` under the instance's binding: Data for operands, Const for
/// constants, the ops with their resolved attributes.
OutPort buildTerm(Graph &g, const Term &t, const rewrite::Binding &b,
                  std::map<std::string, OutPort> &leaves) {
  if (t.kind != Term::Kind::Op) {
    if (auto it = leaves.find(t.var); it != leaves.end())
      return it->second;
    NodeId n;
    if (t.kind == Term::Kind::Var) {
      const TensorType &type = b.operands.at(t.var);
      n = g.addNode(t.var, "Data", {}, 1);
      AttrValue::List dims;
      for (int64_t d : type.shape)
        dims.push_back(AttrValue::ofInt(d));
      g.node(n).attrs["index"] = AttrValue::ofInt(static_cast<int64_t>(leaves.size()));
      g.node(n).attrs["out0.dtype"] = AttrValue::ofIdent(std::string(dtypeName(type.dtype)));
      g.node(n).attrs["out0.shape"] = AttrValue::ofList(dims);
    } else {
      n = g.addNode(t.var, "Const", {}, 1);
      auto it = b.constants.find(t.var);
      EXPECT_TRUE(it != b.constants.end()) << "constant " << t.var << " has no value";
      if (it != b.constants.end())
        g.node(n).attrs["value"] = AttrValue::ofTensor(it->second);
    }
    leaves[t.var] = OutPort{n, 0};
    return OutPort{n, 0};
  }
  std::vector<std::optional<OutPort>> inputs;
  for (const Term &a : t.args)
    inputs.push_back(buildTerm(g, a, b, leaves));
  std::optional<uint32_t> outputs;
  if (!t.countVar.empty())
    outputs = static_cast<uint32_t>(b.counts.at(t.countVar));
  std::string name = "n";
  name += std::to_string(g.capacity());
  NodeId n = g.addNode(name, t.op, std::move(inputs), outputs);
  for (auto &[k, v] : rewrite::resolveAttrs(t, b))
    g.node(n).attrs[k] = v;
  // A copy's type is its port description (semantics.md §1): its input's.
  if (t.op == "Identity" && t.args[0].kind == Term::Kind::Var) {
    const TensorType &type = b.operands.at(t.args[0].var);
    AttrValue::List dims;
    for (int64_t d : type.shape)
      dims.push_back(AttrValue::ofInt(d));
    g.node(n).attrs["out0.dtype"] = AttrValue::ofIdent(std::string(dtypeName(type.dtype)));
    g.node(n).attrs["out0.shape"] = AttrValue::ofList(dims);
  }
  return OutPort{n, t.result};
}

TEST(SimplifyRules, NamesAreUniqueAndInstancesSmall) {
  std::set<std::string_view> names;
  for (const Rule &r : rewrite::simplifyRules()) {
    EXPECT_TRUE(names.insert(r.name).second) << r.name;
    std::vector<Instance> instances = r.instances();
    EXPECT_FALSE(instances.empty()) << r.name;
    for (const Instance &i : instances)
      for (const auto &[name, type] : i.binding.operands)
        EXPECT_LE(type.numElements(), 64) << r.name << " " << i.label;
  }
  EXPECT_EQ(rewrite::findRule("cast-pair")->name, "cast-pair");
  EXPECT_EQ(rewrite::findRule("no-such-rule"), nullptr);
}

TEST(SimplifyRules, EveryInstanceMatchesAndKeepsItsType) {
  int checked = 0, allowed = 0, unmatched = 0;
  for (const Rule &r : rewrite::simplifyRules()) {
    for (const Instance &inst : r.instances()) {
      std::string trace(r.name);
      trace += ": ";
      trace += inst.label;
      SCOPED_TRACE(trace);
      Module m;
      GraphId gid = m.addGraph("root");
      Graph &g = m.graph(gid);
      std::map<std::string, OutPort> leaves;
      OutPort root = buildTerm(g, r.pattern, inst.binding, leaves);
      g.addNode("out", "NetOutput", {root});
      Diagnostics diags;
      ModuleTypes types = inferModuleTypes(m, diags);
      ASSERT_TRUE(diags.empty()) << "the pattern is ill typed: " << diags.front().message;
      const TensorType *before = types.of(gid, root);
      ASSERT_NE(before, nullptr);

      simplify::TypeTable table(types);
      simplify::Match match;
      if (!simplify::matchPattern(g, gid, table, r.pattern, root, match)) {
        // Only an instance outside the pattern itself (a constant that is
        // not the rule's splat: x + (+0) for add-zero) may fail to match,
        // and the precondition refuses it.
        EXPECT_FALSE(r.allows(inst.binding));
        ++unmatched;
        continue;
      }
      EXPECT_EQ(match.binding.operands, inst.binding.operands);
      if (r.derive)
        r.derive(match.binding);
      for (const auto &[k, v] : inst.binding.attrs)
        EXPECT_TRUE(match.binding.attrs.count(k) && match.binding.attrs.at(k) == v) << k;
      EXPECT_EQ(r.allows(match.binding), r.allows(inst.binding));
      ++checked;
      if (!r.allows(inst.binding))
        continue;
      ++allowed;
      std::vector<NodeId> created;
      std::optional<OutPort> after =
          simplify::buildReplacement(g, r.replacement, match, "r", created);
      ASSERT_TRUE(after.has_value());
      g.addNode("out2", "NetOutput", {*after});
      Diagnostics diags2;
      ModuleTypes types2 = inferModuleTypes(m, diags2);
      ASSERT_TRUE(diags2.empty()) << "the replacement is ill typed: " << diags2.front().message;
      ASSERT_NE(types2.of(gid, *after), nullptr);
      EXPECT_EQ(*types2.of(gid, *after), *before)
          << types2.of(gid, *after)->str() << " vs " << before->str();
    }
  }
  EXPECT_GT(checked, 3000);
  EXPECT_GT(allowed, 1000);
  EXPECT_LE(unmatched, 12); // the "other zero" instances of the three zero rules
}

} // namespace
} // namespace graphvet
