// NumPy's .npy format (version 1.0 and 2.0 headers) for tensors: what
// `graphvet run --input NAME=FILE.npy` reads and `--save DIR` writes, so a
// user's inputs and outputs go to and from numpy, ONNX Runtime and ONNX's
// test data without conversion scripts.
#pragma once

#include "ir/tensor.h"

#include <optional>
#include <string>
#include <string_view>

namespace graphvet {

/// The tensor in `bytes` (a whole .npy file). Little-endian or
/// byte-order-free C-order arrays of the dtypes of tensor-semantics.md; bf16
/// has no numpy dtype and is read from '<u2' holding its bits. nullopt with
/// `error` set on anything else (a bad magic, a malformed header, Fortran
/// order, a big-endian or unsupported dtype, a size that does not match).
std::optional<Tensor> parseNpy(std::string_view bytes, std::string &error);

/// The .npy file (version 1.0 header) of `t`; bf16 is written as '<u2'
/// holding its bits.
std::string formatNpy(const Tensor &t);

/// The numpy descriptor of a dtype ('<f4', '|b1', ...).
std::string npyDescr(DType t);

} // namespace graphvet
