// Recipe generators. Choices are small integers that shrink towards 0, and
// every weighted choice lists its simplest option first, so shrinking moves
// towards fewer steps, plainer ops and nearer references.
#include "props/gen_recipe.h"

#include "props/gen_util.h"

#include <algorithm>
#include <array>
#include <optional>
#include <utility>
#include <vector>

namespace graphvet::props {
namespace {

using gen::genBelow;
using gen::genVector;
using gen::shrinkElements;
using gen::weighted;

rc::Gen<uint8_t> genSmall(unsigned bound) {
  return genBelow<uint8_t>(static_cast<uint8_t>(bound));
}

bool enabled(uint32_t swarm, SwarmBit b) {
  return (swarm & static_cast<uint32_t>(b)) != 0;
}

unsigned maxStepsAt(const GenOptions &opts, unsigned depth) {
  if (depth == 0)
    return std::max(opts.minSteps, opts.maxSteps);
  if (depth == 1)
    return opts.maxBodySteps;
  if (depth == 2)
    return std::max(1u, opts.maxBodySteps / 2);
  return 2;
}

/// Flags of a TensorMove step: mostly plain, sometimes a reserved attribute
/// (values 1-4), a control edge in (8) or out (16).
rc::Gen<uint8_t> genTensorMoveFlags() {
  return rc::gen::apply(
      [](uint8_t reserved, bool ctrlIn, bool ctrlOut) {
        return static_cast<uint8_t>(reserved | (ctrlIn ? 8 : 0) | (ctrlOut ? 16 : 0));
      },
      weighted<uint8_t>({{80, 0}, {5, 1}, {5, 2}, {5, 3}, {5, 4}}),
      weighted<bool>({{80, false}, {20, true}}), weighted<bool>({{85, false}, {15, true}}));
}

/// Number of twists a step kind knows (recipe.h's `*Twist` enums).
uint8_t numTwists(StepKind k) {
  switch (k) {
  case StepKind::Compute:
  case StepKind::UserInput:
  case StepKind::Variable:
  case StepKind::Weight:
  case StepKind::View:
  case StepKind::Continuous:
    return 5;
  case StepKind::RefVarSource:
    return 8;
  case StepKind::TensorMove:
    return 9;
  case StepKind::TensorMoveChain:
    return 1;
  case StepKind::RefWrite:
    return 7;
  case StepKind::Call:
  case StepKind::If:
  case StepKind::Case:
  case StepKind::While:
    return 16;
  case StepKind::CtrlEdge:
    return 4;
  default:
    return 0;
  }
}

/// One of `n` twists (1..n), each equally likely, or the usual spelling
/// (0) with probability `usualPercent`; shrinks towards the usual spelling.
rc::Gen<uint8_t> genTwistOf(uint8_t n, unsigned usualPercent = 60) {
  if (n == 0)
    return rc::gen::just(uint8_t{0});
  return rc::gen::map(genBelow<unsigned>(100u * n), [n, usualPercent](unsigned x) {
    unsigned usual = usualPercent * n;
    return static_cast<uint8_t>(x < usual ? 0 : (x - usual) / (100 - usualPercent) + 1);
  });
}

/// Kinds with many twists twist more often, so that each twist stays
/// frequent (docs/ir-coverage.md's coverage figures). Holders weigh the
/// attributes on the holder double: their family (HolderAttributes) is off
/// in a quarter of the cases on top of the twists' own.
rc::Gen<uint8_t> genTwist(StepKind k) {
  uint8_t n = numTwists(k);
  if (n == 16) {
    std::vector<std::pair<unsigned, uint8_t>> w{{20, 0}};
    for (uint8_t t = 1; t <= n; ++t) {
      auto h = static_cast<HolderTwist>(t);
      bool attribute = h == HolderTwist::InputMutable || h == HolderTwist::RefVarSrc ||
                       h == HolderTwist::AliasAttr || h == HolderTwist::Continuous;
      w.emplace_back(attribute ? 8 : 4, t);
    }
    return weighted<uint8_t>(std::move(w));
  }
  return genTwistOf(n, n >= 8 ? 40 : 60);
}

} // namespace

rc::Gen<Ref> genRef(Pool preferred, unsigned percent) {
  auto pool = rc::gen::map(genBelow<unsigned>(100), [preferred, percent](unsigned x) {
    if (x < percent)
      return preferred;
    x = (x - percent) * 100 / std::max(1u, 100 - percent);
    if (x < 60)
      return Pool::Any;
    if (x < 75)
      return Pool::Source;
    if (x < 85)
      return Pool::TensorMove;
    if (x < 92)
      return Pool::Holder;
    if (x < 95)
      return Pool::Alias;
    return Pool::Unconnected;
  });
  auto back = weighted<uint8_t>({{40, 0}, {25, 1}, {15, 2}, {10, 3}, {10, 4}});
  return rc::gen::apply([](Pool p, uint8_t b) { return Ref{p, b}; }, pool, back);
}

rc::Gen<std::vector<Ref>> genRefsFor(StepKind kind) {
  using V = std::vector<Ref>;
  auto fixed = [](std::vector<rc::Gen<Ref>> gens) {
    // A fixed list of differently distributed references, shrinking by
    // removal (the builder defaults missing references).
    return rc::Gen<V>([gens](const rc::Random &random, int size) {
      rc::Random r(random);
      using Elems = std::vector<rc::Shrinkable<Ref>>;
      Elems elems;
      for (const auto &g : gens)
        elems.push_back(g(r.split(), size));
      return shrinkElements<Ref>(std::move(elems));
    });
  };
  switch (kind) {
  case StepKind::Compute:
    return genVector(genRef(Pool::TensorMove, 30), 0, 3);
  case StepKind::UserInput:
  case StepKind::Variable:
  case StepKind::Weight:
    return rc::gen::just(V{});
  case StepKind::RefVarSource:
    return fixed({genRef(Pool::Any, 0)});
  case StepKind::TensorMove:
    return fixed({genRef(Pool::Source, 50), genRef(Pool::Any, 0)});
  case StepKind::TensorMoveChain:
    return fixed({genRef(Pool::Source, 40)});
  case StepKind::View:
    return fixed({genRef(Pool::Source, 30), genRef(Pool::Any, 0)});
  case StepKind::MultiAliasRefOp:
    return fixed({genRef(Pool::Source, 30)});
  case StepKind::RefWrite:
    return fixed({genRef(Pool::TensorMove, 55), genRef(Pool::Any, 0)});
  case StepKind::ScopeWrite:
    return genVector(genRef(Pool::TensorMove, 50), 1, 2);
  case StepKind::Continuous:
    return genVector(genRef(Pool::TensorMove, 40), 2, 3);
  case StepKind::Call:
    return genVector(genRef(Pool::TensorMove, 40), 0, 3);
  case StepKind::If:
  case StepKind::Case:
    return genVector(genRef(Pool::TensorMove, 40), 1, 3);
  case StepKind::While:
    return genVector(genRef(Pool::TensorMove, 40), 1, 3);
  case StepKind::CtrlEdge:
    return fixed({genRef(Pool::TensorMove, 60), genRef(Pool::Any, 0)});
  }
  return rc::gen::just(V{});
}

rc::Gen<StepKind> genStepKind(const GenOptions &opts, uint32_t swarm, unsigned depth) {
  std::vector<std::pair<unsigned, StepKind>> w;
  auto add = [&](unsigned weight, StepKind k, bool on) {
    if (on && weight > 0)
      w.emplace_back(weight, k);
  };
  bool nest = depth < opts.maxDepth;
  add(10, StepKind::Compute, true);
  add(depth == 0 ? 8 : 5, StepKind::UserInput, true);
  add(depth == 0 ? 6 : 2, StepKind::Variable, enabled(swarm, SwarmBit::Variables));
  add(depth == 0 ? 6 : 2, StepKind::Weight, enabled(swarm, SwarmBit::Weights));
  add(3, StepKind::RefVarSource, enabled(swarm, SwarmBit::Variables));
  add(22, StepKind::TensorMove, true);
  add(4, StepKind::TensorMoveChain, enabled(swarm, SwarmBit::TensorMoveChains));
  add(5, StepKind::View, enabled(swarm, SwarmBit::Views));
  add(3, StepKind::MultiAliasRefOp, enabled(swarm, SwarmBit::Views));
  add(8, StepKind::RefWrite, enabled(swarm, SwarmBit::Writers));
  add(4, StepKind::ScopeWrite, enabled(swarm, SwarmBit::Writers));
  add(3, StepKind::Continuous, enabled(swarm, SwarmBit::Layout));
  add(depth == 0   ? 6
      : depth == 1 ? 7
                   : 4,
      StepKind::Call, nest && enabled(swarm, SwarmBit::Subgraphs));
  add(depth == 0 ? 3 : 1, StepKind::If, nest && enabled(swarm, SwarmBit::ControlFlow));
  add(depth == 0 ? 2 : 1, StepKind::Case, nest && enabled(swarm, SwarmBit::ControlFlow));
  add(depth == 0 ? 3 : 1, StepKind::While, nest && enabled(swarm, SwarmBit::ControlFlow));
  add(4, StepKind::CtrlEdge, enabled(swarm, SwarmBit::CtrlEdges));
  return weighted(std::move(w));
}

rc::Gen<Step> genStepOfKind(const GenOptions &opts, uint32_t swarm, unsigned depth, StepKind k) {
  rc::Gen<std::vector<Body>> bodies = rc::gen::just(std::vector<Body>{});
  auto body = [&] { return genBody(opts, swarm, depth + 1); };
  switch (k) {
  case StepKind::Call:
    bodies = genVector(body(), 1, 1);
    break;
  case StepKind::If:
  case StepKind::While:
    bodies = genVector(body(), 2, 2);
    break;
  case StepKind::Case:
    // One to four branches; the builder takes fewer than two or more than
    // three only as a twist.
    bodies = genVector(body(), 2, 4);
    break;
  default:
    break;
  }
  rc::Gen<uint8_t> flags =
      k == StepKind::TensorMove ? genTensorMoveFlags() : genBelow<uint8_t>(255);
  return rc::gen::apply(
      [k](uint8_t variant, uint8_t f, uint8_t twist, std::vector<Ref> refs, std::vector<Body> bs) {
        return Step{k, variant, f, twist, std::move(refs), std::move(bs)};
      },
      genBelow<uint8_t>(255), flags, genTwist(k), genRefsFor(k), bodies);
}

rc::Gen<Step> genStep(const GenOptions &opts, uint32_t swarm, unsigned depth) {
  return rc::gen::mapcat(genStepKind(opts, swarm, depth), [opts, swarm, depth](StepKind k) {
    // The generator of a step that holds no subgraph depends on its kind
    // only; building it costs as much as running it, so each thread keeps
    // one per kind. (Generators are immutable; sharing them is safe.)
    bool holder =
        k == StepKind::Call || k == StepKind::If || k == StepKind::Case || k == StepKind::While;
    if (holder)
      return genStepOfKind(opts, swarm, depth, k);
    thread_local std::array<std::optional<rc::Gen<Step>>, kNumStepKinds> cache;
    auto &slot = cache[static_cast<unsigned>(k)];
    if (!slot)
      slot = genStepOfKind(opts, swarm, depth, k);
    return *slot;
  });
}

rc::Gen<Body> genBody(const GenOptions &opts, uint32_t swarm, unsigned depth) {
  unsigned lo = depth == 0 ? opts.minSteps : 0;
  unsigned hi = std::max(lo, maxStepsAt(opts, depth));
  // Only the root body has twists of its own (RootTwist).
  rc::Gen<uint8_t> twist = depth == 0 ? genTwistOf(4) : rc::gen::just(uint8_t{0});
  return rc::gen::apply(
      [](std::vector<Step> steps, std::vector<Ref> outs, uint8_t tw) {
        return Body{std::move(steps), std::move(outs), tw};
      },
      genVector(genStep(opts, swarm, depth), lo, hi),
      genVector(genRef(Pool::TensorMove, 40), 1, depth == 0 ? 4 : 3), twist);
}

rc::Gen<OptionRecipe> genOption() {
  auto pair = rc::gen::apply(
      [](uint8_t a, uint8_t b) {
        return std::pair<uint8_t, uint8_t>{a, b};
      },
      genSmall(5), genSmall(5));
  return rc::gen::apply(
      [](OptionMode mode, std::vector<std::pair<uint8_t, uint8_t>> pairs, uint8_t bad,
         uint8_t unrelated) {
        return OptionRecipe{mode, std::move(pairs), bad, unrelated};
      },
      weighted<OptionMode>({{40, OptionMode::Absent},
                            {30, OptionMode::Matching},
                            {15, OptionMode::NonMatching},
                            {15, OptionMode::Malformed}}),
      genVector(pair, 1, 2), genSmall(20), weighted<uint8_t>({{85, 0}, {15, 1}}));
}

rc::Gen<uint32_t> genSwarm(const GenOptions &opts) {
  uint32_t families = opts.families & kAllSwarmBits;
  if (!opts.swarm)
    return rc::gen::just(families);
  auto bits = rc::Gen<uint64_t>([](const rc::Random &random, int) {
    return rc::shrinkable::just(rc::Random(random).next());
  });
  return rc::gen::map(bits, [families](uint64_t bits) {
    // Each family stays on with probability 3/4 (two random bits per family).
    uint32_t mask = 0;
    for (unsigned i = 0; i < kNumSwarmBits; ++i)
      if (((bits >> (2 * i)) & 3) != 0)
        mask |= 1u << i;
    return mask & families;
  });
}

rc::Gen<Recipe> genRecipe(const GenOptions &opts) {
  // The mask does not shrink: shrinking it would regenerate every step.
  return rc::gen::mapcat(rc::gen::noShrink(genSwarm(opts)), [opts](uint32_t swarm) {
    return rc::gen::apply(
        [swarm](Body root, OptionRecipe out, OptionRecipe in) {
          return Recipe{swarm, std::move(root), std::move(out), std::move(in)};
        },
        genBody(opts, swarm, 0), genOption(), genOption());
  });
}

} // namespace graphvet::props
