// The Z3 refinement query of one rewrite-rule instance, behind a solver-free
// interface. smt_rules.cpp encodes both sides of an InstGraph element by
// element (tensor-semantics.md, written independently of the kernels) and
// asks for an input and an output element where the replacement does not
// refine the original.
#pragma once

#include "ir/tensor.h"
#include "oracle/rule_instance.h"

#include <map>
#include <string>

namespace graphvet::oracle {

struct SmtRefinement {
  enum class Kind : uint8_t {
    Proved,  ///< UNSAT (or both sides simplified to the same terms)
    Refuted, ///< SAT: `inputs` and `element` are the solver's witness
    Unknown, ///< timeout or solver unknown
    Error,   ///< an op or form the encoder does not model
  };
  Kind kind = Kind::Error;
  std::string note;                     ///< unknown reason / error text
  std::map<std::string, Tensor> inputs; ///< Refuted: operand values, with undef masks
  int64_t element = -1;                 ///< Refuted: the flat output element that differs
  bool bySimplification = false;        ///< Proved without a solver call
  bool bySpecialValue = false;          ///< Refuted by a special input, without search
};

/// Same result types are assumed (the caller checks them). `timeoutMs` bounds
/// the one solver call, `rlimit` (0: none) its work in Z3's resource units.
SmtRefinement checkRefinement(const InstGraph &g, unsigned timeoutMs, unsigned rlimit = 0);

} // namespace graphvet::oracle
