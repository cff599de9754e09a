// RapidCheck generators of recipes. Small composable pieces: a reference, a
// step of a given kind, a graph body, the options, the swarm mask, and the
// whole recipe. Shrinking removes steps and lowers every choice; since any
// recipe builds a valid race-free graph, every shrink is valid.
#pragma once

#include "props/recipe.h"

#include <rapidcheck.h>

#include <cstdint>

namespace graphvet::props {

struct GenOptions {
  /// Steps in the root graph (each adds 1-3 nodes; subgraph steps add more).
  unsigned minSteps = 3;
  unsigned maxSteps = 18;
  /// Steps in a subgraph body at nesting depth 1; deeper bodies get fewer.
  unsigned maxBodySteps = 5;
  /// Deepest nesting of subgraphs (PartitionedCall in PartitionedCall ...).
  unsigned maxDepth = 3;
  /// Swarm testing: switch a random subset of feature families off per case.
  bool swarm = true;
  /// Families that may occur at all (SwarmBit mask).
  uint32_t families = kAllSwarmBits;
};

/// A reference preferring `preferred` with the given probability (percent),
/// else any value; `back` is small (recent values) and shrinks to 0.
rc::Gen<Ref> genRef(Pool preferred, unsigned percent);
/// References of a step kind, with pools that exercise the pass: TensorMove
/// inputs prefer special sources, writers and holders prefer TensorMoves.
rc::Gen<std::vector<Ref>> genRefsFor(StepKind kind);
/// The kind of a step at `depth`, among the families enabled in `swarm`.
rc::Gen<StepKind> genStepKind(const GenOptions &opts, uint32_t swarm, unsigned depth);
rc::Gen<Step> genStepOfKind(const GenOptions &opts, uint32_t swarm, unsigned depth, StepKind k);
rc::Gen<Step> genStep(const GenOptions &opts, uint32_t swarm, unsigned depth);
/// A graph body at `depth` (0 = root).
rc::Gen<Body> genBody(const GenOptions &opts, uint32_t swarm, unsigned depth);
rc::Gen<OptionRecipe> genOption();
/// The swarm mask: each family of opts.families on with probability 3/4.
rc::Gen<uint32_t> genSwarm(const GenOptions &opts);
rc::Gen<Recipe> genRecipe(const GenOptions &opts = {});

} // namespace graphvet::props
