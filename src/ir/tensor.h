// Tensor types and tensor values (tensor-semantics.md §1-§2). A TensorType is
// a dtype and a static shape; a Tensor is a type, its row-major little-endian
// bytes and, per element, whether the element is indeterminate (the shadow
// mask of §2). Literals in `.graph` files, kernel inputs and outputs and the
// interpreter's typed views of buffers are all Tensors.
#pragma once

#include "ir/dtype.h"

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

namespace graphvet {

using Shape = std::vector<int64_t>;

struct TensorType {
  DType dtype = DType::F32;
  Shape shape;

  /// Product of the dimensions (1 for a scalar); nullopt on overflow past
  /// 2^62 or a negative dimension.
  std::optional<int64_t> checkedElements() const;
  /// Product of the dimensions; callers use it on validated types only.
  int64_t numElements() const;
  uint64_t byteSize() const { return static_cast<uint64_t>(numElements()) * dtypeBytes(dtype); }
  int64_t rank() const { return static_cast<int64_t>(shape.size()); }
  /// `f32[1, 3, 224, 224]`, as in the `.graph` text.
  std::string str() const;
  friend bool operator==(const TensorType &, const TensorType &) = default;
};

/// `[1, 3]` (as in the `.graph` text).
std::string shapeStr(std::span<const int64_t> shape);
/// Row-major strides of a shape (in elements).
std::vector<int64_t> stridesOf(std::span<const int64_t> shape);

class Tensor {
public:
  Tensor() = default;
  /// A determinate tensor of zero bytes.
  explicit Tensor(TensorType t);
  Tensor(TensorType t, std::vector<uint8_t> bytes);

  const TensorType &type() const { return type_; }
  DType dtype() const { return type_.dtype; }
  const Shape &shape() const { return type_.shape; }
  int64_t size() const { return static_cast<int64_t>(bytes_.size() / dtypeBytes(type_.dtype)); }
  std::span<const uint8_t> bytes() const { return bytes_; }
  std::span<uint8_t> bytes() { return bytes_; }
  uint8_t *at(int64_t i) { return bytes_.data() + i * dtypeBytes(type_.dtype); }
  const uint8_t *at(int64_t i) const { return bytes_.data() + i * dtypeBytes(type_.dtype); }

  double getDouble(int64_t i) const { return loadDouble(type_.dtype, at(i)); }
  int64_t getInt(int64_t i) const { return loadInt(type_.dtype, at(i)); }
  bool getBool(int64_t i) const { return loadBool(at(i)); }
  void setDouble(int64_t i, double d) { storeDouble(type_.dtype, at(i), d); }
  void setInt(int64_t i, int64_t v) { storeInt(type_.dtype, at(i), v); }
  /// Copies element j of `src` (same dtype) into element i, with its mask.
  void copyElement(int64_t i, const Tensor &src, int64_t j);
  /// copyElement for `count` consecutive elements (i.., j..) in one copy of
  /// the bytes; the masks element by element only when either has one.
  void copyElements(int64_t i, const Tensor &src, int64_t j, int64_t count);

  /// Indeterminate elements (§2). The mask is allocated on the first
  /// setUndef(true); an empty mask means every element is determinate.
  bool isUndef(int64_t i) const { return !undef_.empty() && undef_[i]; }
  void setUndef(int64_t i, bool u = true);
  bool anyUndef() const;
  std::span<const uint8_t> undefMask() const { return undef_; }
  void setUndefMask(std::vector<uint8_t> mask) { undef_ = std::move(mask); }
  void clearUndef() { undef_.clear(); }

  /// Bitwise equality of type, bytes and mask (literals, CSE of constants).
  friend bool operator==(const Tensor &a, const Tensor &b) {
    return a.type_ == b.type_ && a.bytes_ == b.bytes_ && a.anyUndef() == b.anyUndef() &&
           (!a.anyUndef() || a.undef_ == b.undef_);
  }

private:
  TensorType type_;
  std::vector<uint8_t> bytes_;
  std::vector<uint8_t> undef_;
};

} // namespace graphvet
