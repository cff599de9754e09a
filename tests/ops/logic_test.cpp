// Type inference and kernel tests of the logic family (src/ir/ops/logic.cpp).
#include "kernel_test_util.h"
