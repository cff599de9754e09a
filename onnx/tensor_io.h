// ONNX tensors and element types as graphvet sees them: the element-type
// mapping (FLOAT -> f32, ...), TensorProto -> Tensor (raw, typed and external
// data) and back. Internal to the importer: this header includes ONNX's.
#pragma once

#include "ir/tensor.h"

#include <onnx/onnx_pb.h>

#include <optional>
#include <string>

namespace graphvet::onnximport {

/// The graphvet dtype of an ONNX element type; nullopt for STRING,
/// COMPLEX64, COMPLEX128, UNDEFINED and unknown codes.
std::optional<DType> dtypeOfElemType(int32_t elemType);
/// ONNX's name of an element type (`FLOAT`, `STRING`; `type 99` if unknown).
std::string elemTypeName(int32_t elemType);
/// The ONNX element type of a graphvet dtype.
int32_t elemTypeOfDType(DType t);

/// Converts a TensorProto; external data is read relative to `modelDir`.
/// On failure sets `error` (what is wrong, without the tensor's name).
std::optional<Tensor> tensorFromProto(const onnx::TensorProto &t, const std::string &modelDir,
                                      std::string &error);
/// A TensorProto with raw little-endian data (tests, the freezing of inputs).
onnx::TensorProto tensorToProto(const Tensor &t, const std::string &name);

} // namespace graphvet::onnximport
