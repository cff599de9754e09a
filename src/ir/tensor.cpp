// Tensor types and values.
#include "ir/tensor.h"

#include <algorithm>
#include <cstring>

namespace graphvet {

std::optional<int64_t> TensorType::checkedElements() const {
  int64_t n = 1;
  for (int64_t d : shape) {
    if (d < 0)
      return std::nullopt;
    if (d != 0 && n > (int64_t{1} << 62) / d)
      return std::nullopt;
    n *= d;
  }
  return n;
}

int64_t TensorType::numElements() const {
  int64_t n = 1;
  for (int64_t d : shape)
    n *= d;
  return n;
}

std::string shapeStr(std::span<const int64_t> shape) {
  std::string s = "[";
  for (size_t i = 0; i < shape.size(); ++i) {
    if (i)
      s += ", ";
    s += std::to_string(shape[i]);
  }
  return s + "]";
}

std::string TensorType::str() const {
  return std::string(dtypeName(dtype)) + shapeStr(shape);
}

std::vector<int64_t> stridesOf(std::span<const int64_t> shape) {
  std::vector<int64_t> s(shape.size(), 1);
  for (size_t i = shape.size(); i-- > 1;)
    s[i - 1] = s[i] * shape[i];
  return s;
}

Tensor::Tensor(TensorType t) : type_(std::move(t)), bytes_(type_.byteSize(), 0) {}

Tensor::Tensor(TensorType t, std::vector<uint8_t> bytes)
    : type_(std::move(t)), bytes_(std::move(bytes)) {
  bytes_.resize(type_.byteSize(), 0);
}

void Tensor::copyElement(int64_t i, const Tensor &src, int64_t j) {
  uint32_t w = dtypeBytes(type_.dtype);
  std::memcpy(at(i), src.at(j), w);
  if (src.isUndef(j) || isUndef(i))
    setUndef(i, src.isUndef(j));
}

void Tensor::copyElements(int64_t i, const Tensor &src, int64_t j, int64_t count) {
  if (count <= 0)
    return;
  std::memmove(at(i), src.at(j), static_cast<size_t>(count) * dtypeBytes(type_.dtype));
  if (src.undef_.empty() && undef_.empty())
    return;
  for (int64_t k = 0; k < count; ++k)
    if (src.isUndef(j + k) || isUndef(i + k))
      setUndef(i + k, src.isUndef(j + k));
}

void Tensor::setUndef(int64_t i, bool u) {
  if (undef_.empty()) {
    if (!u)
      return;
    undef_.assign(static_cast<size_t>(size()), 0);
  }
  undef_[i] = u;
}

bool Tensor::anyUndef() const {
  return std::any_of(undef_.begin(), undef_.end(), [](uint8_t u) { return u != 0; });
}

} // namespace graphvet
