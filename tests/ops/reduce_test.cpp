// Type inference and kernel tests of the reduce family (src/ir/ops/reduce.cpp).
#include "kernel_test_util.h"
