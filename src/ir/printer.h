// The canonical `.graph` printer: options sorted, root first, subgraphs in
// order of first reference, nodes in stable topological order, attributes
// sorted, control edges last and sorted, names quoted only when they must be.
#pragma once

#include "ir/graph.h"

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace graphvet {

class Tensor;

/// Where large tensor literals go (graph-format.md v2): with a sidecar, a
/// tensor of more than `inlineLimitBytes` bytes is appended to `*sidecar`
/// (64-byte aligned) and printed as `file("NAME", offset)`; without one
/// every tensor is printed in the text.
struct PrintOptions {
  std::vector<uint8_t> *sidecar = nullptr;
  std::string sidecarName;
  uint64_t inlineLimitBytes = 1024;
  /// Without a sidecar: print a tensor of more than `inlineLimitBytes` as
  /// `digest(HEX)`, a 64-bit digest of its bytes (not parseable). For
  /// comparing two modules cheaply (the campaign's idempotence test).
  bool digestLargeTensors = false;
};

std::string printModule(const Module &m, const PrintOptions &opts = {});

/// Prints `m` to `path`; tensors above `inlineLimitBytes` go to the sidecar
/// next to it (`path` with the extension `.weights`), written only when
/// needed. False with `error` set when a file cannot be written.
bool writeModuleFile(const Module &m, const std::string &path, std::string &error,
                     uint64_t inlineLimitBytes = 1024);

/// A tensor literal in its canonical form: `f32[2] {1, 2.5}`, `splat(x)`
/// when every element is the same (two or more), `hex "..."` when an element
/// (a NaN with a payload) has no exact decimal text.
std::string formatTensorLiteral(const Tensor &t);

/// An attribute value as the format writes it (tensors always inline).
std::string formatAttrValue(const AttrValue &v);
/// A name as the format writes it: bare when it is an identifier that is not
/// a keyword, otherwise quoted with escapes.
std::string formatName(const std::string &name);

/// `[A-Za-z_][A-Za-z0-9_]*`: a name the format writes bare (graph-format.md).
bool isIdentifier(std::string_view s);

/// Compares two modules structurally: the same options, the same graphs in
/// canonical order (by name), and in each graph the same nodes by name with
/// equal type, output count, inputs (producer name and port), attributes,
/// subgraphs and control successors. Node ids, source locations and removed
/// nodes are ignored. Returns a description of the first difference, or
/// nullopt when the modules are structurally equal (then they print alike up
/// to topological tie-breaking).
std::optional<std::string> structuralDifference(const Module &a, const Module &b);

} // namespace graphvet
