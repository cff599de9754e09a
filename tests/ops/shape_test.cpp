// Type inference and kernel tests of the shape family (src/ir/ops/shape.cpp).
#include "kernel_test_util.h"
