// Dtype sets and the source dtype generator.
#include "props/typed_dtype.h"

#include "props/gen_util.h"

namespace graphvet::props {

unsigned dtypeCount(DTypeSet s) {
  unsigned n = 0;
  for (int i = 0; i < kNumDTypes; ++i)
    n += inSet(s, static_cast<DType>(i)) ? 1 : 0;
  return n;
}

DType pickDType(DTypeSet s, unsigned c) {
  if (c == 0 && inSet(s, DType::F32))
    return DType::F32;
  unsigned n = dtypeCount(s);
  unsigned want = n == 0 ? 0 : c % n;
  for (int i = 0; i < kNumDTypes; ++i) {
    auto t = static_cast<DType>(i);
    if (inSet(s, t) && want-- == 0)
      return t;
  }
  return DType::F32;
}

rc::Gen<DType> genDType() {
  return gen::weighted<DType>({{50, DType::F32},
                               {9, DType::F16},
                               {7, DType::BF16},
                               {7, DType::F64},
                               {6, DType::I64},
                               {6, DType::I32},
                               {4, DType::Bool},
                               {3, DType::I8},
                               {3, DType::U8},
                               {1, DType::I16},
                               {1, DType::U16},
                               {2, DType::U32},
                               {1, DType::U64}});
}

} // namespace graphvet::props
