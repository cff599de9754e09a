// TensorProto <-> graphvet Tensor: element types, raw and typed payloads,
// external data files, and readTensorProto for test data sets.
#include "onnx/tensor_io.h"

#include "onnx/importer.h"

#include <fmt/format.h>

#include <charconv>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>

namespace graphvet::onnximport {

using onnx::TensorProto;

std::optional<DType> dtypeOfElemType(int32_t elemType) {
  switch (elemType) {
  case TensorProto::FLOAT:
    return DType::F32;
  case TensorProto::UINT8:
    return DType::U8;
  case TensorProto::INT8:
    return DType::I8;
  case TensorProto::UINT16:
    return DType::U16;
  case TensorProto::INT16:
    return DType::I16;
  case TensorProto::INT32:
    return DType::I32;
  case TensorProto::INT64:
    return DType::I64;
  case TensorProto::BOOL:
    return DType::Bool;
  case TensorProto::FLOAT16:
    return DType::F16;
  case TensorProto::DOUBLE:
    return DType::F64;
  case TensorProto::UINT32:
    return DType::U32;
  case TensorProto::UINT64:
    return DType::U64;
  case TensorProto::BFLOAT16:
    return DType::BF16;
  default:
    return std::nullopt;
  }
}

std::string elemTypeName(int32_t elemType) {
  if (onnx::TensorProto_DataType_IsValid(elemType))
    return onnx::TensorProto_DataType_Name(static_cast<onnx::TensorProto_DataType>(elemType));
  return fmt::format("type {}", elemType);
}

int32_t elemTypeOfDType(DType t) {
  switch (t) {
  case DType::Bool:
    return TensorProto::BOOL;
  case DType::I8:
    return TensorProto::INT8;
  case DType::U8:
    return TensorProto::UINT8;
  case DType::I16:
    return TensorProto::INT16;
  case DType::U16:
    return TensorProto::UINT16;
  case DType::I32:
    return TensorProto::INT32;
  case DType::U32:
    return TensorProto::UINT32;
  case DType::I64:
    return TensorProto::INT64;
  case DType::U64:
    return TensorProto::UINT64;
  case DType::F16:
    return TensorProto::FLOAT16;
  case DType::BF16:
    return TensorProto::BFLOAT16;
  case DType::F32:
    return TensorProto::FLOAT;
  case DType::F64:
    return TensorProto::DOUBLE;
  }
  return TensorProto::UNDEFINED;
}

namespace {

/// The bytes of an external-data tensor (`location`, `offset`, `length`).
std::optional<std::string> readExternal(const TensorProto &t, const std::string &modelDir,
                                        std::string &error) {
  std::string location;
  uint64_t offset = 0;
  std::optional<uint64_t> length;
  for (const auto &kv : t.external_data()) {
    auto number = [&](const std::string &text) -> std::optional<uint64_t> {
      uint64_t v = 0;
      auto [p, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
      if (ec != std::errc() || p != text.data() + text.size())
        return std::nullopt;
      return v;
    };
    if (kv.key() == "location") {
      location = kv.value();
    } else if (kv.key() == "offset" || kv.key() == "length") {
      auto v = number(kv.value());
      if (!v) {
        error = fmt::format("external data {} '{}' is not a number", kv.key(), kv.value());
        return std::nullopt;
      }
      (kv.key() == "offset" ? offset : length.emplace()) = *v;
    }
  }
  std::filesystem::path rel(location);
  bool escapes = rel.is_absolute();
  for (const auto &part : rel)
    escapes = escapes || part == "..";
  if (location.empty() || escapes) {
    error = fmt::format("external data location '{}' must be a relative path inside the model's "
                        "directory",
                        location);
    return std::nullopt;
  }
  std::filesystem::path file = std::filesystem::path(modelDir.empty() ? "." : modelDir) / rel;
  std::ifstream in(file, std::ios::binary);
  std::error_code dirError; // a directory opens but cannot be read
  if (!in || std::filesystem::is_directory(file, dirError)) {
    error = fmt::format("cannot open external data file '{}'", file.string());
    return std::nullopt;
  }
  in.seekg(0, std::ios::end);
  uint64_t size = static_cast<uint64_t>(in.tellg());
  if (offset > size || (length && *length > size - offset)) {
    error = fmt::format("external data file '{}' is too short", file.string());
    return std::nullopt;
  }
  uint64_t n = length ? *length : size - offset;
  std::string bytes(n, '\0');
  in.seekg(static_cast<std::streamoff>(offset));
  if (!in.read(bytes.data(), static_cast<std::streamsize>(n))) {
    error = fmt::format("cannot read external data file '{}'", file.string());
    return std::nullopt;
  }
  return bytes;
}

template <class Field>
bool countMatches(const Field &f, int64_t n, const char *field, std::string &error) {
  if (static_cast<int64_t>(f.size()) == n)
    return true;
  error = fmt::format("{} holds {} values for {} elements", field, f.size(), n);
  return false;
}

} // namespace

std::optional<Tensor> tensorFromProto(const TensorProto &t, const std::string &modelDir,
                                      std::string &error) {
  auto dtype = dtypeOfElemType(t.data_type());
  if (!dtype) {
    error = fmt::format("element type {} is not supported", elemTypeName(t.data_type()));
    return std::nullopt;
  }
  if (t.has_segment()) {
    error = "segmented tensors are not supported";
    return std::nullopt;
  }
  TensorType type{*dtype, Shape(t.dims().begin(), t.dims().end())};
  auto count = type.checkedElements();
  // Limit one literal to 2^40 bytes: far past any real weight, and no overflow below.
  if (!count || *count > (int64_t{1} << 40) / static_cast<int64_t>(dtypeBytes(*dtype))) {
    error = fmt::format("invalid or too large shape {}", shapeStr(type.shape));
    return std::nullopt;
  }
  int64_t n = *count;
  uint32_t width = dtypeBytes(*dtype);
  std::vector<uint8_t> bytes(static_cast<size_t>(n) * width);

  const std::string *raw = t.has_raw_data() ? &t.raw_data() : nullptr;
  std::string external;
  if (t.data_location() == TensorProto::EXTERNAL) {
    auto data = readExternal(t, modelDir, error);
    if (!data)
      return std::nullopt;
    external = std::move(*data);
    raw = &external;
  }
  if (raw) {
    if (raw->size() != bytes.size()) {
      error = fmt::format("raw data has {} bytes, {} expected for {}", raw->size(), bytes.size(),
                          type.str());
      return std::nullopt;
    }
    if (!bytes.empty())
      std::memcpy(bytes.data(), raw->data(), bytes.size());
    Tensor out(type, std::move(bytes));
    if (*dtype == DType::Bool) // any nonzero byte is true; keep 0/1
      for (int64_t i = 0; i < n; ++i)
        out.setInt(i, out.getInt(i) != 0);
    return out;
  }

  Tensor out(type, std::move(bytes));
  switch (t.data_type()) {
  case TensorProto::FLOAT:
    if (!countMatches(t.float_data(), n, "float_data", error))
      return std::nullopt;
    for (int64_t i = 0; i < n; ++i) {
      float f = t.float_data(static_cast<int>(i));
      std::memcpy(out.at(i), &f, sizeof f);
    }
    break;
  case TensorProto::DOUBLE:
    if (!countMatches(t.double_data(), n, "double_data", error))
      return std::nullopt;
    for (int64_t i = 0; i < n; ++i) {
      double d = t.double_data(static_cast<int>(i));
      std::memcpy(out.at(i), &d, sizeof d);
    }
    break;
  case TensorProto::INT64:
    if (!countMatches(t.int64_data(), n, "int64_data", error))
      return std::nullopt;
    for (int64_t i = 0; i < n; ++i)
      out.setInt(i, t.int64_data(static_cast<int>(i)));
    break;
  case TensorProto::UINT32:
  case TensorProto::UINT64:
    if (!countMatches(t.uint64_data(), n, "uint64_data", error))
      return std::nullopt;
    for (int64_t i = 0; i < n; ++i)
      out.setInt(i, static_cast<int64_t>(t.uint64_data(static_cast<int>(i))));
    break;
  case TensorProto::FLOAT16:
  case TensorProto::BFLOAT16:
    // int32_data holds the 16-bit patterns.
    if (!countMatches(t.int32_data(), n, "int32_data", error))
      return std::nullopt;
    for (int64_t i = 0; i < n; ++i) {
      auto bits = static_cast<uint16_t>(t.int32_data(static_cast<int>(i)));
      uint8_t *p = out.at(i);
      p[0] = static_cast<uint8_t>(bits & 0xff);
      p[1] = static_cast<uint8_t>(bits >> 8);
    }
    break;
  default: // INT32, INT16, INT8, UINT16, UINT8, BOOL: int32_data
    if (!countMatches(t.int32_data(), n, "int32_data", error))
      return std::nullopt;
    for (int64_t i = 0; i < n; ++i)
      out.setInt(i, t.int32_data(static_cast<int>(i)));
    break;
  }
  return out;
}

TensorProto tensorToProto(const Tensor &t, const std::string &name) {
  TensorProto p;
  p.set_name(name);
  p.set_data_type(elemTypeOfDType(t.dtype()));
  for (int64_t d : t.shape())
    p.add_dims(d);
  p.set_raw_data(std::string(t.bytes().begin(), t.bytes().end()));
  return p;
}

std::optional<Tensor> readTensorProto(const std::string &path, std::string &error,
                                      std::string *name) {
  std::ifstream in(path, std::ios::binary);
  std::error_code dirError; // a directory opens but cannot be read
  if (!in || std::filesystem::is_directory(path, dirError)) {
    error = "cannot open file";
    return std::nullopt;
  }
  TensorProto t;
  if (!t.ParseFromIstream(&in)) {
    error = "not a serialized ONNX TensorProto";
    return std::nullopt;
  }
  if (name)
    *name = t.name();
  std::string dir = std::filesystem::path(path).parent_path().string();
  auto tensor = tensorFromProto(t, dir, error);
  if (!tensor)
    error = (t.name().empty() ? "tensor: " : fmt::format("tensor '{}': ", t.name())) + error;
  return tensor;
}

std::optional<Shape> parseShapeText(std::string_view text) {
  Shape shape;
  if (text.empty())
    return shape;
  size_t pos = 0;
  while (true) {
    size_t x = text.find('x', pos);
    std::string_view part = text.substr(pos, x == std::string_view::npos ? x : x - pos);
    int64_t v = 0;
    auto [p, ec] = std::from_chars(part.data(), part.data() + part.size(), v);
    if (part.empty() || ec != std::errc() || p != part.data() + part.size() || v < 0)
      return std::nullopt;
    shape.push_back(v);
    if (x == std::string_view::npos)
      return shape;
    pos = x + 1;
  }
}

} // namespace graphvet::onnximport
