// .npy reading and writing; see npy.h. The header is a Python dict literal;
// only the three keys numpy writes are accepted, with the value forms numpy
// writes them in.
#include "ir/npy.h"

#include <cctype>
#include <fmt/format.h>
#include <span>

namespace graphvet {
namespace {

constexpr std::string_view kMagic = "\x93NUMPY";
/// Larger headers are not written by numpy; the bound keeps parsing cheap.
constexpr size_t kMaxHeaderBytes = 1 << 16;
constexpr size_t kMaxRank = 32;

struct Cursor {
  std::string_view s;
  size_t i = 0;
  void skipSpace() {
    while (i < s.size() && (s[i] == ' ' || s[i] == '\t' || s[i] == '\n'))
      ++i;
  }
  bool eat(char c) {
    skipSpace();
    if (i < s.size() && s[i] == c) {
      ++i;
      return true;
    }
    return false;
  }
  std::optional<std::string> quoted() {
    skipSpace();
    if (i >= s.size() || (s[i] != '\'' && s[i] != '"'))
      return std::nullopt;
    char q = s[i++];
    size_t end = s.find(q, i);
    if (end == std::string_view::npos)
      return std::nullopt;
    std::string out(s.substr(i, end - i));
    i = end + 1;
    return out;
  }
  std::optional<std::string> word() {
    skipSpace();
    size_t start = i;
    while (i < s.size() && (std::isalnum(static_cast<unsigned char>(s[i])) != 0))
      ++i;
    if (start == i)
      return std::nullopt;
    return std::string(s.substr(start, i - start));
  }
};

std::optional<DType> dtypeOfDescr(const std::string &d) {
  static const std::pair<std::string_view, DType> kTable[] = {
      {"|b1", DType::Bool}, {"|i1", DType::I8},  {"|u1", DType::U8},  {"<i2", DType::I16},
      {"<u2", DType::U16},  {"<i4", DType::I32}, {"<u4", DType::U32}, {"<i8", DType::I64},
      {"<u8", DType::U64},  {"<f2", DType::F16}, {"<f4", DType::F32}, {"<f8", DType::F64}};
  for (const auto &[name, t] : kTable)
    if (name == d)
      return t;
  // numpy writes byte-order-free single-byte types with '|' but accepts '<'.
  if (d == "<b1")
    return DType::Bool;
  if (d == "<i1")
    return DType::I8;
  if (d == "<u1")
    return DType::U8;
  return std::nullopt;
}

} // namespace

std::string npyDescr(DType t) {
  switch (t) {
  case DType::Bool:
    return "|b1";
  case DType::I8:
    return "|i1";
  case DType::U8:
    return "|u1";
  case DType::I16:
    return "<i2";
  case DType::U16:
  case DType::BF16:
    return "<u2";
  case DType::I32:
    return "<i4";
  case DType::U32:
    return "<u4";
  case DType::I64:
    return "<i8";
  case DType::U64:
    return "<u8";
  case DType::F16:
    return "<f2";
  case DType::F32:
    return "<f4";
  case DType::F64:
    return "<f8";
  }
  return "|u1";
}

std::optional<Tensor> parseNpy(std::string_view bytes, std::string &error) {
  if (bytes.size() < 10 || bytes.substr(0, 6) != kMagic) {
    error = "not a .npy file (no \\x93NUMPY magic)";
    return std::nullopt;
  }
  auto major = static_cast<uint8_t>(bytes[6]);
  size_t headerLen = 0, headerStart = 0;
  auto byteAt = [&](size_t i) { return static_cast<size_t>(static_cast<uint8_t>(bytes[i])); };
  if (major == 1) {
    headerLen = byteAt(8) | byteAt(9) << 8;
    headerStart = 10;
  } else if (major == 2 || major == 3) {
    if (bytes.size() < 12) {
      error = ".npy header is truncated";
      return std::nullopt;
    }
    headerLen = byteAt(8) | byteAt(9) << 8 | byteAt(10) << 16 | byteAt(11) << 24;
    headerStart = 12;
  } else {
    error = fmt::format(".npy format version {} is not supported (1, 2 or 3)", major);
    return std::nullopt;
  }
  if (headerLen > kMaxHeaderBytes || headerStart + headerLen > bytes.size()) {
    error = ".npy header is truncated";
    return std::nullopt;
  }
  Cursor c{bytes.substr(headerStart, headerLen)};
  std::optional<std::string> descr;
  std::optional<bool> fortran;
  std::optional<Shape> shape;
  if (!c.eat('{')) {
    error = ".npy header is not a dict";
    return std::nullopt;
  }
  for (int key = 0; key < 8 && !c.eat('}'); ++key) {
    std::optional<std::string> name = c.quoted();
    if (!name || !c.eat(':')) {
      error = ".npy header is malformed";
      return std::nullopt;
    }
    if (*name == "descr") {
      descr = c.quoted();
    } else if (*name == "fortran_order") {
      std::optional<std::string> w = c.word();
      if (w == "True" || w == "False")
        fortran = *w == "True";
    } else if (*name == "shape") {
      if (!c.eat('(')) {
        error = ".npy header's shape is not a tuple";
        return std::nullopt;
      }
      Shape dims;
      while (!c.eat(')')) {
        std::optional<std::string> w = c.word();
        if (!w || dims.size() >= kMaxRank ||
            w->find_first_not_of("0123456789") != std::string::npos || w->size() > 12) {
          error = ".npy header's shape is malformed";
          return std::nullopt;
        }
        dims.push_back(std::stoll(*w));
        c.eat(',');
      }
      shape = std::move(dims);
    } else {
      error = fmt::format(".npy header has an unknown key '{}'", *name);
      return std::nullopt;
    }
    c.eat(',');
  }
  if (!descr || !fortran || !shape) {
    error = ".npy header lacks descr, fortran_order or shape";
    return std::nullopt;
  }
  if (*fortran) {
    error = ".npy array is in Fortran order; save it C-contiguous (np.ascontiguousarray)";
    return std::nullopt;
  }
  std::optional<DType> t = dtypeOfDescr(*descr);
  if (!t) {
    error = fmt::format(".npy dtype '{}' is not supported (little-endian bool, integers, f2, f4, "
                        "f8)",
                        *descr);
    return std::nullopt;
  }
  TensorType type{*t, *shape};
  std::string_view data = bytes.substr(headerStart + headerLen);
  std::optional<int64_t> elements = type.checkedElements();
  if (!elements || static_cast<uint64_t>(*elements) > (uint64_t{1} << 40)) {
    error = fmt::format(".npy shape {} is too large", shapeStr(*shape));
    return std::nullopt;
  }
  uint64_t want = static_cast<uint64_t>(*elements) * dtypeBytes(*t);
  if (want != data.size()) {
    error = fmt::format(".npy data holds {} bytes; {} needs {}", data.size(), type.str(), want);
    return std::nullopt;
  }
  std::vector<uint8_t> raw(data.begin(), data.end());
  return Tensor(type, std::move(raw));
}

std::string formatNpy(const Tensor &t) {
  std::string shape; // numpy writes "()", "(2,)" and "(2, 3)"
  for (size_t i = 0; i < t.shape().size(); ++i)
    shape += (i ? ", " : "") + std::to_string(t.shape()[i]);
  if (t.shape().size() == 1)
    shape += ',';
  std::string header = fmt::format("{{'descr': '{}', 'fortran_order': False, 'shape': ({}), }}",
                                   npyDescr(t.dtype()), shape);
  // Pad with spaces so that the data starts at a multiple of 64, ending in '\n'.
  size_t total = 10 + header.size() + 1;
  header.append((64 - total % 64) % 64, ' ');
  header += '\n';
  std::string out(kMagic);
  out += '\x01';
  out += '\x00';
  out += static_cast<char>(header.size() & 0xff);
  out += static_cast<char>(header.size() >> 8);
  out += header;
  std::span<const uint8_t> b = t.bytes();
  out.append(reinterpret_cast<const char *>(b.data()), b.size());
  return out;
}

} // namespace graphvet
