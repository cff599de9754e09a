// Type inference and kernel tests of the elementwise family (src/ir/ops/elementwise.cpp).
#include "kernel_test_util.h"
