// Element types of tensors (tensor-semantics.md §1): their names, sizes and
// the exact conversions between their bytes and host numbers. Every numeric
// path of graphvet (literals, kernels, casts, input filling, comparisons)
// reads and writes elements through these functions, so that a value has one
// meaning everywhere: little-endian bytes, IEEE binary16/bfloat16/binary32/
// binary64 with signed zeros, infinities, NaN payloads and subnormals.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace graphvet {

enum class DType : uint8_t { Bool, I8, U8, I16, U16, I32, U32, I64, U64, F16, BF16, F32, F64 };
inline constexpr int kNumDTypes = 13;

/// The `.graph` spelling (`f32`, `bool`, ...) of a dtype, and back.
std::string_view dtypeName(DType t);
std::optional<DType> parseDType(std::string_view name);
uint32_t dtypeBytes(DType t);
bool isFloat(DType t); ///< f16, bf16, f32, f64
/// Significand bits, the implicit one included, of a float dtype (f16 11,
/// bf16 8, f32 24, f64 53); 0 for the others.
int significandBits(DType t);
/// The smallest positive normal value of a float dtype (2^-14 for f16,
/// 2^-126 for f32 and bf16, 2^-1022 for f64); 0 for integers and bool.
double smallestNormal(DType t);
bool isInteger(DType t); ///< i8..u64 (not bool)
bool isSignedInteger(DType t);
/// Smallest and largest values of an integer dtype (bool: 0, 1).
int64_t intMin(DType t);
uint64_t intMax(DType t);

/// binary16 and bfloat16 from and to double. From double rounds once to
/// nearest even (overflow to ±inf, subnormals kept); NaN stays NaN with the
/// top payload bits kept; to double is exact.
uint16_t f16FromDouble(double d);
double f16ToDouble(uint16_t h);
uint16_t bf16FromDouble(double d);
double bf16ToDouble(uint16_t h);

/// An element of a float dtype as a double (exact); of an integer or bool
/// dtype, its value converted to double (exact up to 2^53).
double loadDouble(DType t, const uint8_t *p);
/// Stores `d` rounded once to the float dtype `t` (round to nearest even).
/// For integer and bool dtypes use storeInt/storeBool.
void storeDouble(DType t, uint8_t *p, double d);
/// An integer or bool element as int64 (u64 above INT64_MAX wraps; use
/// loadUInt for those).
int64_t loadInt(DType t, const uint8_t *p);
uint64_t loadUInt(DType t, const uint8_t *p);
/// Stores the low bits of `v` (two's-complement wrap); bool stores v != 0.
void storeInt(DType t, uint8_t *p, int64_t v);
/// True when a bool element is true (any nonzero byte, tensor-semantics §1).
inline bool loadBool(const uint8_t *p) {
  return *p != 0;
}

/// True when the element at `p` is a NaN (float dtypes only).
bool isNaNElement(DType t, const uint8_t *p);
/// Equality of two elements as the refinement check sees it: bit for bit,
/// except that every NaN equals every other NaN.
bool elementsEqual(DType t, const uint8_t *a, const uint8_t *b);
/// Distance in units in the last place between two float elements of the
/// same dtype (0 when bitwise equal or both NaN; UINT64_MAX when exactly one
/// is NaN).
uint64_t ulpDistance(DType t, const uint8_t *a, const uint8_t *b);

/// The shortest text that reads back (parseElement) to the same bits:
/// `1.5`, `-0.0`, `1e-08`, `inf`, `-inf`, `nan` (the canonical quiet NaN
/// only); integers in decimal; bools as 0/1. nullopt for a NaN other than
/// the canonical one (its payload needs the `hex` form).
std::optional<std::string> formatElement(DType t, const uint8_t *p);
/// Parses one element's text into `p`, correctly rounded for float dtypes;
/// `error` says why on failure (out of range, not a number of this dtype).
bool parseElement(DType t, std::string_view text, uint8_t *p, std::string &error);
/// The shortest text of a double that reads back to the same double and is
/// recognisably a float (contains `.`, `e`, or is inf/-inf/nan).
std::string formatFloatAttr(double d);

} // namespace graphvet
