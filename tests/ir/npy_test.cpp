// .npy reading and writing (src/ir/npy.h): every dtype round-trips bit for
// bit, and each malformed file is refused with a message saying what is wrong.
#include "ir/npy.h"

#include <gtest/gtest.h>

namespace graphvet {
namespace {

/// A version-1 .npy file with `header` (padded as numpy pads it) and `data`.
std::string npyFile(std::string header, std::string_view data, char major = 1) {
  header.append((64 - (10 + header.size() + 1) % 64) % 64, ' ');
  header += '\n';
  std::string out = "\x93NUMPY";
  out += major;
  out += '\0';
  out += static_cast<char>(header.size() & 0xff);
  out += static_cast<char>(header.size() >> 8);
  return out + header + std::string(data);
}

std::string refusal(const std::string &file) {
  std::string error;
  EXPECT_FALSE(parseNpy(file, error).has_value());
  return error;
}

TEST(Npy, EveryDtypeRoundTripsBitForBit) {
  for (int d = 0; d < kNumDTypes; ++d) {
    auto t = static_cast<DType>(d);
    Tensor x(TensorType{t, {2, 3}});
    for (size_t i = 0; i < x.bytes().size(); ++i)
      x.bytes()[i] = static_cast<uint8_t>(t == DType::Bool ? i % 2 : 37 * i + 11);
    std::string error;
    std::optional<Tensor> y = parseNpy(formatNpy(x), error);
    ASSERT_TRUE(y) << dtypeName(t) << ": " << error;
    // bf16 has no numpy dtype: it comes back as the u16 holding its bits.
    EXPECT_EQ(y->dtype(), t == DType::BF16 ? DType::U16 : t);
    EXPECT_EQ(y->shape(), x.shape());
    EXPECT_TRUE(
        std::equal(x.bytes().begin(), x.bytes().end(), y->bytes().begin(), y->bytes().end()));
  }
}

TEST(Npy, ScalarsAndOneDimensionalShapesUseNumpysTupleForms) {
  Tensor s(TensorType{DType::F32, {}});
  EXPECT_NE(formatNpy(s).find("'shape': ()"), std::string::npos);
  Tensor v(TensorType{DType::F32, {5}});
  EXPECT_NE(formatNpy(v).find("'shape': (5,)"), std::string::npos);
  EXPECT_EQ((formatNpy(v).find('\n') + 1) % 64, 0u); // data aligned as numpy aligns it
}

TEST(Npy, ReadsTheHeadersNumpyWrites) {
  std::string error;
  auto t = parseNpy(
      npyFile("{'descr': '<f4', 'fortran_order': False, 'shape': (2, 1), }", std::string(8, '\0')),
      error);
  ASSERT_TRUE(t) << error;
  EXPECT_EQ(t->type(), (TensorType{DType::F32, {2, 1}}));
  std::string header = "{'descr': '|b1', 'fortran_order': False, 'shape': (3,)}\n";
  std::string file = std::string("\x93NUMPY\x02\x00", 8);
  file += static_cast<char>(header.size());
  file += std::string(3, '\0');
  file += header + std::string(3, '\1');
  auto b = parseNpy(file, error);
  ASSERT_TRUE(b) << error;
  EXPECT_EQ(b->type(), (TensorType{DType::Bool, {3}}));
}

TEST(Npy, RefusesAFileWithoutTheMagic) {
  EXPECT_EQ(refusal("PK\x03\x04 not numpy"), "not a .npy file (no \\x93NUMPY magic)");
}

TEST(Npy, RefusesAnUnknownFormatVersion) {
  EXPECT_EQ(refusal(npyFile("{}", "", 9)), ".npy format version 9 is not supported (1, 2 or 3)");
}

TEST(Npy, RefusesATruncatedHeader) {
  std::string f = npyFile("{'descr': '<f4', 'fortran_order': False, 'shape': (1,), }", "");
  EXPECT_EQ(refusal(f.substr(0, 30)), ".npy header is truncated");
}

TEST(Npy, RefusesAHeaderThatIsNotADict) {
  EXPECT_EQ(refusal(npyFile("['descr']", "")), ".npy header is not a dict");
}

TEST(Npy, RefusesAnUnknownKey) {
  EXPECT_EQ(
      refusal(npyFile("{'descr': '<f4', 'order': 'C', 'fortran_order': False, 'shape': ()}", "")),
      ".npy header has an unknown key 'order'");
}

TEST(Npy, RefusesAMissingKey) {
  EXPECT_EQ(refusal(npyFile("{'descr': '<f4', 'shape': (1,)}", std::string(4, '\0'))),
            ".npy header lacks descr, fortran_order or shape");
}

TEST(Npy, RefusesFortranOrder) {
  EXPECT_EQ(refusal(npyFile("{'descr': '<f4', 'fortran_order': True, 'shape': (1,)}",
                            std::string(4, '\0'))),
            ".npy array is in Fortran order; save it C-contiguous (np.ascontiguousarray)");
}

TEST(Npy, RefusesBigEndianAndUnsupportedDtypes) {
  EXPECT_EQ(refusal(npyFile("{'descr': '>f4', 'fortran_order': False, 'shape': (1,)}",
                            std::string(4, '\0'))),
            ".npy dtype '>f4' is not supported (little-endian bool, integers, f2, f4, f8)");
  EXPECT_EQ(refusal(npyFile("{'descr': '<c8', 'fortran_order': False, 'shape': (1,)}",
                            std::string(8, '\0'))),
            ".npy dtype '<c8' is not supported (little-endian bool, integers, f2, f4, f8)");
}

TEST(Npy, RefusesAMalformedShape) {
  EXPECT_EQ(refusal(npyFile("{'descr': '<f4', 'fortran_order': False, 'shape': (-1,)}", "")),
            ".npy header's shape is malformed");
  EXPECT_EQ(refusal(npyFile("{'descr': '<f4', 'fortran_order': False, 'shape': 3}", "")),
            ".npy header's shape is not a tuple");
}

TEST(Npy, RefusesDataOfTheWrongSize) {
  EXPECT_EQ(refusal(npyFile("{'descr': '<f4', 'fortran_order': False, 'shape': (2, 2)}",
                            std::string(12, '\0'))),
            ".npy data holds 12 bytes; f32[2, 2] needs 16");
}

TEST(Npy, RefusesAShapeTooLargeToHold) {
  EXPECT_EQ(refusal(npyFile("{'descr': '<f4', 'fortran_order': False, 'shape': "
                            "(999999999999, 999999999999)}",
                            "")),
            ".npy shape [999999999999, 999999999999] is too large");
}

} // namespace
} // namespace graphvet
