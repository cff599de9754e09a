// Type inference and kernel tests of the nn family (src/ir/ops/nn.cpp).
#include "kernel_test_util.h"
