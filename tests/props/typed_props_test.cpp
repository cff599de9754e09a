// Properties of typed random graphs (props/typed_graph.h): every generated
// graph passes the verifier; its inferred types equal the generator's own
// model and the types of the tensors the kernels produce, node by node, and
// the interpreter's outputs equal that direct evaluation bit for bit; the
// interpreter never faults; the text format round-trips bit for bit and the
// parsed graph computes the same bits; the same seed gives the same graph
// and the same bits. Plus: every shrink stays valid, and over fixed seeds
// every catalogue op and the specials of tensor-semantics.md §7 occur.
#include "prop_support.h"

#include "ir/op_def.h"
#include "ir/op_library.h"
#include "ir/parser.h"
#include "ir/printer.h"
#include "ir/types.h"
#include "ir/verifier.h"
#include "oracle/interpreter.h"
#include "props/gen_util.h"
#include "props/motif_features.h"
#include "props/typed_graph.h"

#include <fmt/format.h>

#include <cmath>
#include <cstring>
#include <map>
#include <set>

namespace graphvet::props {
namespace {

std::string diagnosticsText(const Diagnostics &diags) {
  std::string out;
  for (const Diagnostic &d : diags)
    out += d.format("<generated>") + "\n";
  return out;
}

oracle::RunReport runAt(const Module &m, uint64_t seed,
                        oracle::ScheduleKind schedule = oracle::ScheduleKind::Reference) {
  oracle::RunOptions opts;
  opts.seed = seed;
  opts.schedule.kind = schedule;
  opts.schedule.seed = seed;
  return oracle::runModule(m, opts);
}

/// Fails the property unless the run completed without fault.
void assertRanCleanly(const oracle::RunReport &rep) {
  RC_LOG() << "run error: " << rep.error << "\ncrash: " << rep.result.crash() << "\n";
  RC_ASSERT(rep.ok);
  RC_ASSERT_FALSE(rep.result.crashed());
  RC_ASSERT_FALSE(rep.result.budgetExceeded());
}

/// The root NetOutput of a typed module (its last node).
const Node &netOutput(const Module &m) {
  const Graph &g = m.root();
  std::vector<NodeId> outs = g.nodesOfType("NetOutput");
  RC_ASSERT(outs.size() == 1u);
  return g.node(outs[0]);
}

/// Ops that may make an indeterminate element from determinate inputs
/// (tensor-semantics.md §2 and the choices of docs/numbers.md): integer
/// division and remainder by zero, float-to-integer conversions (casts,
/// integer Pow, integer L2/LogSum/LogSumExp), out-of-range Gather indices,
/// empty windows, axes and normalizations, integer means of nothing.
const std::set<std::string> kMayMakeIndeterminate = {"Div",
                                                     "Mod",
                                                     "Pow",
                                                     "Cast",
                                                     "CastLike",
                                                     "Gather",
                                                     "ArgMax",
                                                     "ArgMin",
                                                     "MaxPool",
                                                     "AveragePool",
                                                     "GlobalMaxPool",
                                                     "GlobalAveragePool",
                                                     "ReduceMean",
                                                     "ReduceL2",
                                                     "ReduceLogSum",
                                                     "ReduceLogSumExp",
                                                     "BatchNormalization",
                                                     "InstanceNormalization",
                                                     "LayerNormalization"};

/// Every node evaluated in topological order through its op's kernel
/// (evaluateNode: inference on the concrete inputs, then the kernel), the
/// Data taking the bytes the interpreter filled them with. Checks that each
/// output the kernel produces has the statically inferred type, and returns
/// the values of every port. A random op has no stream here (its draws are
/// indeterminate), so the ports that depend on a draw are put in `drawn`
/// and only their types can be compared with the interpreter's. So are the
/// ports that depend on memory this value-only model does not follow: a
/// source written in place (the observation holds its content after the
/// run; a Variable's initial content is not observed at all) and an If's
/// results (the branch is the interpreter's business).
std::map<OutPort, Tensor> evaluateDirectly(const Module &m, const ModuleTypes &types,
                                           const oracle::Observation &obs,
                                           std::set<OutPort> &drawn) {
  const Graph &g = m.root();
  std::map<int64_t, const oracle::Bytes *> inputs;
  for (const auto &[index, bytes] : obs.inputs)
    inputs[index] = &bytes;
  std::set<OutPort> written;
  for (NodeId id : g.liveNodes())
    if (const Node &n = g.node(id);
        (n.type == "Assign" || n.type == "AssignAdd" || n.type == "AssignSub") &&
        !n.inputs.empty() && n.inputs[0])
      written.insert(*n.inputs[0]);
  std::map<OutPort, Tensor> values;
  auto order = g.topoOrder();
  RC_ASSERT(order.has_value());
  for (NodeId id : *order) {
    const Node &n = g.node(id);
    if (n.type == "NetOutput")
      continue;
    const TensorType *t0 = types.of(0, id, 0);
    RC_ASSERT(t0 != nullptr);
    if (n.type == "Variable" || n.type == "If" || (n.type == "Data" && written.count({id, 0}))) {
      for (uint32_t k = 0; k < n.numOutputs; ++k) {
        const TensorType *t = types.of(0, id, k);
        RC_ASSERT(t != nullptr);
        values[{id, k}] = Tensor(*t);
        drawn.insert({id, k});
      }
      continue;
    }
    if (n.type == "Data") {
      auto it = inputs.find(*n.intAttr("index"));
      RC_ASSERT(it != inputs.end());
      values[{id, 0}] = Tensor(*t0, *it->second);
      continue;
    }
    if (n.type == "Const") {
      values[{id, 0}] = *attrTensor(n, "value");
      continue;
    }
    std::vector<const Tensor *> ins;
    bool fromDraw = lookupOp(n.type).nondeterministic;
    for (const auto &src : n.inputs) {
      ins.push_back(src ? &values.at(*src) : nullptr);
      fromDraw = fromDraw || (src && drawn.count(*src));
    }
    if (fromDraw)
      for (uint32_t k = 0; k < n.numOutputs; ++k)
        drawn.insert({id, k});
    std::string error;
    auto outs = evaluateNode(n, ins, error);
    RC_LOG() << n.name << ": " << error << "\n";
    RC_ASSERT(outs.has_value());
    RC_ASSERT(outs->size() >= n.numOutputs);
    bool undefIn = false;
    for (const Tensor *t : ins)
      undefIn = undefIn || (t && t->anyUndef());
    if (!undefIn && !fromDraw && !kMayMakeIndeterminate.count(n.type))
      for (uint32_t k = 0; k < n.numOutputs; ++k)
        if ((*outs)[k].anyUndef())
          RC_FAIL(fmt::format("{} ({}) output {} has indeterminate elements, but none of its "
                              "inputs does",
                              n.name, n.type, k));
    for (uint32_t k = 0; k < n.numOutputs; ++k) {
      const TensorType *t = types.of(0, id, k);
      RC_ASSERT(t != nullptr);
      if ((*outs)[k].type() != *t)
        RC_FAIL(fmt::format("{}:{}: the kernel produced {} but inference says {}", n.name, k,
                            (*outs)[k].type().str(), t->str()));
      values[{id, k}] = std::move((*outs)[k]);
    }
  }
  return values;
}

/// Interpreter output k equals the directly evaluated tensor: type, every
/// element's indeterminacy, and the bits of every determinate element
/// (only the type for a value that depends on a random draw).
void assertSameTensor(const std::string &what, const Tensor &t, const oracle::Bytes &bytes,
                      const oracle::ElementView &view, bool drawn = false) {
  if (view.dtype != t.dtype() || view.shape != t.shape())
    RC_FAIL(fmt::format("{}: the interpreter's output is {}{} but the kernels give {}", what,
                        dtypeName(view.dtype), shapeStr(view.shape), t.type().str()));
  if (drawn)
    return;
  RC_ASSERT(bytes.size() == t.bytes().size());
  const uint32_t w = dtypeBytes(t.dtype());
  for (int64_t i = 0; i < t.size(); ++i) {
    bool undef = false;
    for (uint32_t j = 0; j < w && !view.undef.empty(); ++j)
      undef = undef || view.undef[static_cast<size_t>(i) * w + j] != 0;
    if (undef != t.isUndef(i))
      RC_FAIL(fmt::format("{}: element {} is {} in the interpreter but {} in the kernels", what, i,
                          undef ? "indeterminate" : "determinate",
                          t.isUndef(i) ? "indeterminate" : "determinate"));
    if (!undef && std::memcmp(bytes.data() + i * w, t.at(i), w) != 0)
      RC_FAIL(
          fmt::format("{}: element {} differs between the interpreter and the kernels", what, i));
  }
}

/// Bitwise equality of two observations: outputs, their indeterminate
/// bytes, and the inputs the runs were given.
void assertSameObservation(const oracle::Observation &a, const oracle::Observation &b) {
  RC_ASSERT(a.outputs == b.outputs);
  RC_ASSERT(a.inputs == b.inputs);
  RC_ASSERT(a.outputViews.size() == b.outputViews.size());
  for (size_t k = 0; k < a.outputViews.size(); ++k) {
    RC_ASSERT(a.outputViews[k].dtype == b.outputViews[k].dtype);
    RC_ASSERT(a.outputViews[k].shape == b.outputViews[k].shape);
    RC_ASSERT(a.outputViews[k].undef == b.outputViews[k].undef);
  }
}

/// The verifier accepts the graph, and inference gives every port the
/// type the generator's model states; returns the inferred types.
ModuleTypes assertWellTyped(const TypedModule &tm) {
  Diagnostics diags = verifyModule(tm.module);
  RC_LOG() << diagnosticsText(diags);
  if (hasErrors(diags))
    RC_LOG() << printModule(tm.module);
  RC_ASSERT_FALSE(hasErrors(diags));
  Diagnostics typeDiags;
  ModuleTypes types = inferModuleTypes(tm.module, typeDiags);
  RC_ASSERT_FALSE(hasErrors(typeDiags));
  for (const ModelPort &mp : tm.model) {
    const TensorType *t = types.of(0, mp.port);
    const Node &n = tm.module.root().node(mp.port.node);
    RC_ASSERT(t != nullptr);
    if (*t != mp.type)
      RC_FAIL(fmt::format("{} ({}) output {}: inference says {}, the generator's model {}", n.name,
                          n.type, mp.port.index, t->str(), mp.type.str()));
  }
  return types;
}

/// Property 1: the verifier accepts every generated graph; inference gives
/// the generator's model types; the kernels produce exactly the inferred
/// types; the interpreter's outputs are the kernels' tensors, bit for bit.
GRAPHVET_PROP(TypedGraphProps, WellTypedAndKernelsAgree, 10000, ()) {
  TypedModule tm = buildTypedModule(*genTypedRecipe());
  const uint64_t seed = *rc::gen::arbitrary<uint64_t>();
  ModuleTypes types = assertWellTyped(tm);
  oracle::RunReport rep = runAt(tm.module, seed);
  assertRanCleanly(rep);
  const oracle::Observation &obs = rep.result.run1.observation;
  std::set<OutPort> drawn;
  std::map<OutPort, Tensor> values = evaluateDirectly(tm.module, types, obs, drawn);
  const Node &out = netOutput(tm.module);
  RC_ASSERT(obs.outputs.size() == out.inputs.size());
  for (size_t k = 0; k < out.inputs.size(); ++k) {
    const Node &producer = tm.module.root().node(out.inputs[k]->node);
    assertSameTensor(fmt::format("output {} ({} {})", k, producer.type, producer.name),
                     values.at(*out.inputs[k]), obs.outputs[k], obs.outputViews[k],
                     drawn.count(*out.inputs[k]) > 0);
  }
  bool undef = false;
  for (const oracle::ElementView &v : obs.outputViews)
    undef = undef || v.anyUndef();
  const size_t steps = tm.stepOps.size();
  RC_TAG(steps <= 4    ? "1-4 ops"
         : steps <= 12 ? "5-12 ops"
                       : "13+ ops",
         undef ? "an indeterminate output" : "all outputs determinate");
}

/// Property 2: the interpreter completes every generated graph, in the
/// reference order and in a seeded random order, without a fault, and both
/// orders give the same bits.
GRAPHVET_PROP(TypedGraphProps, InterpreterNeverFaults, 6000, ()) {
  TypedModule tm = buildTypedModule(*genTypedRecipe());
  const uint64_t seed = *rc::gen::arbitrary<uint64_t>();
  oracle::RunReport reference = runAt(tm.module, seed);
  oracle::RunReport random = runAt(tm.module, seed, oracle::ScheduleKind::Random);
  assertRanCleanly(reference);
  assertRanCleanly(random);
  // A graph of pure numeric ops computes the same bits in every order.
  assertSameObservation(reference.result.run1.observation, random.result.run1.observation);
}

/// Property 3: print(parse(print(g))) == print(g), bit for bit, and the
/// parsed graph runs to the same bits as the generated one.
GRAPHVET_PROP(TypedGraphProps, FormatRoundTripsBitForBit, 6000, ()) {
  TypedModule tm = buildTypedModule(*genTypedRecipe());
  const uint64_t seed = *rc::gen::arbitrary<uint64_t>();
  std::string text = printModule(tm.module);
  ParseResult parsed = parseModule(text);
  RC_LOG() << diagnosticsText(parsed.diagnostics);
  RC_ASSERT(parsed.module.has_value());
  RC_ASSERT(printModule(*parsed.module) == text);
  oracle::RunReport a = runAt(tm.module, seed), b = runAt(*parsed.module, seed);
  assertRanCleanly(a);
  assertRanCleanly(b);
  assertSameObservation(a.result.run1.observation, b.result.run1.observation);
}

/// Property 4: the same seed gives the same graph, and two runs of it at
/// the same run seed give the same bits.
GRAPHVET_PROP(TypedGraphProps, SameSeedSameBits, 3000, ()) {
  const uint64_t genSeed = *rc::gen::arbitrary<uint64_t>();
  const int size = *rc::gen::inRange(0, kTypedDefaultSize + 1);
  const uint64_t runSeed = *rc::gen::arbitrary<uint64_t>();
  TypedModule a = generateTypedModule(genSeed, size), b = generateTypedModule(genSeed, size);
  RC_ASSERT(printModule(a.module) == printModule(b.module));
  oracle::RunReport ra = runAt(a.module, runSeed), rb = runAt(b.module, runSeed);
  assertRanCleanly(ra);
  assertRanCleanly(rb);
  assertSameObservation(ra.result.run1.observation, rb.result.run1.observation);
}

/// Shrinking works on the recipe, so every shrink must build a valid,
/// well-typed graph too: walk the first shrinks of each level.
GRAPHVET_PROP(TypedGraphProps, ShrunkRecipesStayValid, 500, ()) {
  const uint64_t seed = *rc::gen::arbitrary<uint64_t>();
  rc::Shrinkable<TypedRecipe> s = generateTypedRecipe(seed, 60);
  for (int depth = 0; depth < 5; ++depth) {
    rc::Seq<rc::Shrinkable<TypedRecipe>> shrinks = s.shrinks();
    std::optional<rc::Shrinkable<TypedRecipe>> next;
    int tried = 0;
    while (auto shrink = shrinks.next()) {
      assertWellTyped(buildTypedModule(shrink->value()));
      if (!next)
        next = *shrink;
      if (++tried == 6)
        break;
    }
    if (!next)
      break;
    s = *next;
  }
}

/// Coverage over fixed seeds: every op of the catalogue is generated, Casts
/// cover most dtype pairs, and the constants hold the specials of
/// tensor-semantics.md §7.
TEST(TypedGraphProps, EveryOpAndSpecialOccurs) {
  // 1500: a quarter of the steps are motifs, so the single ops (Cast among
  // them) need half as many graphs again as before the motifs to cover as
  // many dtype pairs.
  constexpr uint64_t kCoverageSeeds = 1500;
  std::map<std::string, int> ops;
  std::map<std::string, int> specials;
  std::set<std::pair<DType, DType>> castPairs;
  for (uint64_t seed = 1; seed <= kCoverageSeeds; ++seed) {
    TypedModule tm = generateTypedModule(seed);
    for (const std::string &op : tm.stepOps)
      ++ops[op];
    const Graph &g = tm.module.root();
    Diagnostics diags;
    ModuleTypes types = inferModuleTypes(tm.module, diags);
    for (NodeId id : g.nodesOfType("Cast")) {
      const TensorType *from = types.of(0, *g.node(id).inputs[0]);
      const TensorType *to = types.of(0, id, 0);
      if (from && to)
        castPairs.insert({from->dtype, to->dtype});
    }
    for (NodeId id : g.liveNodes()) {
      const Tensor *t = attrTensor(g.node(id), "value");
      if (!t || !isFloat(t->dtype()))
        continue;
      for (int64_t i = 0; i < t->size(); ++i) {
        double v = t->getDouble(i);
        if (std::isnan(v))
          ++specials["nan"];
        else if (std::isinf(v))
          ++specials[v > 0 ? "+inf" : "-inf"];
        else if (v == 0 && std::signbit(v))
          ++specials["-0"];
        else if (v != 0 && std::fpclassify(static_cast<float>(v)) == FP_SUBNORMAL &&
                 t->dtype() == DType::F32)
          ++specials["f32 subnormal"];
        else if (v == 16777216.0)
          ++specials["2^24"];
        else if (v == 65504.0)
          ++specials["65504"];
      }
    }
  }
  std::string table;
  for (size_t i = 0; i < numTypedOps(); ++i) {
    std::string op(typedOpName(i));
    table += fmt::format("  {:<24} {:>5}\n", op, ops[op]);
    EXPECT_GT(ops[op], 0) << op << " never generated";
  }
  std::cout << "typed ops over " << kCoverageSeeds << " graphs:\n" << table;
  std::cout << "  Cast dtype pairs: " << castPairs.size() << " of " << kNumDTypes * kNumDTypes
            << "\n";
  EXPECT_GE(castPairs.size(), 100u);
  for (const char *s : {"nan", "+inf", "-inf", "-0", "f32 subnormal", "2^24", "65504"}) {
    std::cout << "  constants holding " << s << ": " << specials[s] << "\n";
    EXPECT_GT(specials[s], 0) << s;
  }
}

// ---- Motifs (props/typed_ops_motifs.cpp) ----------------------------------------

/// The catalogue number of motif `i` (the motifs are the last entries).
uint16_t motifOp(size_t i) {
  return static_cast<uint16_t>(numTypedOps() - numTypedMotifs() + i);
}

/// A recipe of one to three steps of one motif (random choices, references
/// and element picks) over zero to three random sources.
rc::Gen<TypedRecipe> genMotifRecipe(size_t motif) {
  return rc::gen::map(
      rc::gen::pair(
          rc::gen::container<std::vector<TypedSource>>(*rc::gen::inRange(0, 4), genTypedSource()),
          rc::gen::container<std::vector<TypedStep>>(*rc::gen::inRange(1, 4), genTypedStep())),
      [motif](std::pair<std::vector<TypedSource>, std::vector<TypedStep>> p) {
        for (TypedStep &s : p.second)
          s.op = motifOp(motif);
        return TypedRecipe{std::move(p.first), std::move(p.second), {}};
      });
}

/// Each motif alone builds a verifier-clean graph of the model's types, the
/// interpreter runs it without fault, and its outputs are the kernels'.
GRAPHVET_PROP(TypedGraphProps, EachMotifBuildsWellTypedGraphs, 3000, ()) {
  const size_t motif = *gen::genBelow<size_t>(numTypedMotifs());
  TypedModule tm = buildTypedModule(*genMotifRecipe(motif));
  const uint64_t seed = *rc::gen::arbitrary<uint64_t>();
  ModuleTypes types = assertWellTyped(tm);
  oracle::RunReport rep = runAt(tm.module, seed);
  assertRanCleanly(rep);
  const oracle::Observation &obs = rep.result.run1.observation;
  std::set<OutPort> drawn;
  std::map<OutPort, Tensor> values = evaluateDirectly(tm.module, types, obs, drawn);
  const Node &out = netOutput(tm.module);
  for (size_t k = 0; k < out.inputs.size(); ++k)
    assertSameTensor(fmt::format("output {}", k), values.at(*out.inputs[k]), obs.outputs[k],
                     obs.outputViews[k], drawn.count(*out.inputs[k]) > 0);
  RC_TAG(std::string(typedOpName(motifOp(motif))));
}

/// Every shrink of a motif recipe (fewer steps, smaller choice bytes, other
/// references, plainer picks) still builds a well-typed graph.
GRAPHVET_PROP(TypedGraphProps, MotifShrinksStayValid, 300, ()) {
  const size_t motif = *gen::genBelow<size_t>(numTypedMotifs());
  const uint64_t seed = *rc::gen::arbitrary<uint64_t>();
  rc::Shrinkable<TypedRecipe> s = genMotifRecipe(motif)(rc::Random(seed), 60);
  for (int depth = 0; depth < 8; ++depth) {
    rc::Seq<rc::Shrinkable<TypedRecipe>> shrinks = s.shrinks();
    std::optional<rc::Shrinkable<TypedRecipe>> next;
    int tried = 0;
    while (auto shrink = shrinks.next()) {
      assertWellTyped(buildTypedModule(shrink->value()));
      if (!next)
        next = *shrink;
      if (++tried == 8)
        break;
    }
    if (!next)
      break;
    s = *next;
  }
}

/// 0 bytes is the plainest form of each motif, and it is still the
/// pattern: one step without choices, references or picks builds it.
TEST(TypedGraphProps, PlainestMotifIsThePattern) {
  const std::pair<std::string_view, Feature> expected[] = {
      {"motif:conv-bn-relu", Feature::MotifConvBatchNormRelu},
      {"motif:channel-scale", Feature::MotifChannelScaleForward},
      {"motif:parallel-dense", Feature::MotifParallelDense},
      {"motif:layout-chain", Feature::MotifLayoutChain},
      {"motif:legalize-targets", Feature::LegalizeGemm},
      {"motif:norms", Feature::NormLayer},
      {"motif:random", Feature::RandomTwins},
      {"motif:cast-chain", Feature::CastRoundTripExact},
      {"motif:transpose-pair", Feature::TransposePairCancel},
      {"motif:reshape-chain", Feature::ReshapeChain},
      {"motif:half-chain", Feature::HalfChain},
      {"motif:inplace-write", Feature::InplaceEqualReadsAroundWrite},
      {"motif:if-branches", Feature::IfEqualBranches},
  };
  ASSERT_EQ(numTypedMotifs(), std::size(expected));
  for (size_t i = 0; i < numTypedMotifs(); ++i) {
    ASSERT_EQ(typedOpName(motifOp(i)), expected[i].first);
    TypedRecipe r;
    r.steps.push_back(TypedStep{motifOp(i), {}, {}, {}});
    TypedModule tm = buildTypedModule(r);
    EXPECT_FALSE(hasErrors(verifyModule(tm.module))) << expected[i].first;
    EXPECT_TRUE(featuresOf(tm.module)[static_cast<size_t>(expected[i].second)])
        << expected[i].first << ":\n"
        << printModule(tm.module);
  }
}

/// The chain motifs' forms, each chosen by its leading choice bytes (the
/// rest 0), build the shape their feature names.
TEST(TypedGraphProps, ChainMotifFormsAreTheirPatterns) {
  auto motifNamed = [](std::string_view name) {
    for (size_t i = 0; i < numTypedMotifs(); ++i)
      if (typedOpName(motifOp(i)) == name)
        return motifOp(i);
    ADD_FAILURE() << name << " is not a motif";
    return uint16_t{0};
  };
  struct Form {
    std::string_view motif;
    std::vector<uint8_t> choices;
    Feature feature;
  };
  const Form forms[] = {
      // dtype f32, 1 element, a graph input, round trip, not the wider set,
      // the second other dtype (i8): f32 -> i8 -> f32.
      {"motif:cast-chain", {0, 0, 0, 0, 1, 1}, Feature::CastRoundTripLossy},
      {"motif:cast-chain", {0, 0, 0, 2}, Feature::CastChainThree},   // f32 -> f64 -> bool -> f32
      {"motif:cast-chain", {0, 0, 1}, Feature::CastChainOfSpecials}, // a Const of specials (-0)
      {"motif:cast-chain", {0, 0, 0, 1}, Feature::CastChainOther},   // f32 -> f64 -> bool
      // a new [1, 1] input, first perm absent, (the emission's byte, no
      // outside consumer), second the identity: compose.
      {"motif:transpose-pair", {0, 0, 0, 0, 0, 0, 0, 0, 1}, Feature::TransposePairCompose},
      {"motif:transpose-pair", {}, Feature::TransposeAbsentPerm},
      {"motif:reshape-chain", {1}, Feature::SqueezeNegativeAxes},
      {"motif:reshape-chain", {4}, Feature::ReshapeAllowZeroEmpty},
      {"motif:half-chain", {1}, Feature::BFloat16Chain},
      {"motif:reshape-chain", {6}, Feature::ReshapeSharedInner},
      // the form byte comes after the type's (dtype, rank) and the write's
      // (target, writer op) and the read's choices
      {"motif:inplace-write", {0, 0, 0, 0, 0, 0, 1}, Feature::InplaceOrderThroughDuplicate},
  };
  for (const Form &f : forms) {
    TypedRecipe r;
    r.steps.push_back(TypedStep{motifNamed(f.motif), {}, f.choices, {}});
    TypedModule tm = buildTypedModule(r);
    EXPECT_FALSE(hasErrors(verifyModule(tm.module))) << f.motif;
    EXPECT_TRUE(featuresOf(tm.module)[static_cast<size_t>(f.feature)])
        << f.motif << " -> " << featureName(f.feature) << ":\n"
        << printModule(tm.module);
  }
}

/// Over fixed seeds of the campaign's draws: about a quarter of the steps
/// are motifs, and every numeric-pattern feature occurs.
TEST(TypedGraphProps, MotifsAreFrequentAndEveryPatternOccurs) {
  constexpr uint64_t kSeeds = 500;
  FeatureCounts counts;
  size_t steps = 0, motifs = 0;
  for (uint64_t seed = 1; seed <= kSeeds; ++seed) {
    TypedModule tm = generateTypedModule(seed);
    for (const std::string &op : tm.stepOps) {
      ++steps;
      motifs += op.starts_with("motif:");
    }
    counts.add(featuresOf(tm.module));
  }
  const double share = static_cast<double>(motifs) / static_cast<double>(steps);
  std::cout << fmt::format("motif steps: {} of {} ({:.1f}%)\n", motifs, steps, 100 * share);
  EXPECT_GT(share, 0.2);
  EXPECT_LT(share, 0.3);
  for (size_t i = 0; i < kNumFeatures; ++i) {
    const auto f = static_cast<Feature>(i);
    if (!isTypedFeature(f))
      continue;
    std::cout << fmt::format("  {:<42} {:>4} of {}\n", featureName(f), counts.counts[i], kSeeds);
    EXPECT_GE(counts.counts[i], kSeeds / 50) << featureName(f);
  }
}

TEST(TypedGraphProps, GeneratorIsDeterministic) {
  for (uint64_t seed = 1; seed <= 50; ++seed)
    EXPECT_EQ(printModule(generateTypedModule(seed).module),
              printModule(generateTypedModule(seed).module))
        << seed;
  EXPECT_NE(printModule(generateTypedModule(1).module), printModule(generateTypedModule(2).module));
}

} // namespace
} // namespace graphvet::props
