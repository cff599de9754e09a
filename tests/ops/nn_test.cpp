// The nn family's table (src/ir/ops/nn.cpp) and its shared layout helpers;
// each op's tests live beside it: conv_test.cpp, pool_test.cpp,
// norm_test.cpp, resize_test.cpp, lstm_test.cpp.
#include "ir/ops/families.h"
#include "ir/ops/nn_common.h"
#include "nn_test_util.h"

#include <set>

using namespace graphvet;
using namespace graphvet::testing;
using namespace graphvet::testing::nn;

TEST(NnFamily, EveryOpHasInferenceAndKernel) {
  std::set<std::string> names;
  for (const OpInfo &op : ops::nnOps()) {
    names.insert(std::string(op.type));
    EXPECT_NE(op.infer, nullptr) << op.type;
    EXPECT_NE(op.kernel, nullptr) << op.type;
    EXPECT_FALSE(op.nondeterministic) << op.type;
    EXPECT_TRUE(isNumericOp(op.type)) << op.type;
    EXPECT_EQ(&lookupOp(op.type), &op) << op.type;
  }
  EXPECT_EQ(names, (std::set<std::string>{
                       "AveragePool", "BatchNormalization", "Conv", "ConvInteger", "ConvTranspose",
                       "GlobalAveragePool", "GlobalMaxPool", "InstanceNormalization", "LSTM",
                       "LayerNormalization", "MaxPool", "MaxUnpool", "QLinearConv", "Resize"}));
  // Resize's scales and sizes and MaxUnpool's output_shape fix an output shape.
  for (const OpInfo &op : ops::nnOps())
    EXPECT_EQ(op.shapeOperands, op.type == "Resize"      ? 0b1100u
                                : op.type == "MaxUnpool" ? 0b100u
                                                         : 0u)
        << op.type;
}

TEST(NnFamily, LayoutMovesTheChannelAxisLast) {
  using ops::nn::Layout;
  Shape nhwc = {2, 5, 7, 3};
  EXPECT_EQ(ops::nn::logicalShape(Layout::NHWC, nhwc), (Shape{2, 3, 5, 7}));
  EXPECT_EQ(ops::nn::physicalShape(Layout::NHWC, Shape{2, 3, 5, 7}), nhwc);
  EXPECT_EQ(ops::nn::logicalShape(Layout::NCHW, nhwc), nhwc);
  // Logical strides of an NHWC buffer: n, c, h, w.
  EXPECT_EQ(ops::nn::logicalStrides(Layout::NHWC, nhwc), (std::vector<int64_t>{105, 1, 21, 3}));
  // The test helper agrees with the kernels' view.
  Tensor t = randomTensor(DType::F32, {2, 3, 5, 7}, 1);
  Tensor l = toChannelsLast(t);
  std::vector<int64_t> ls = ops::nn::logicalStrides(Layout::NHWC, l.shape());
  EXPECT_EQ(l.getDouble(1 * ls[0] + 2 * ls[1] + 4 * ls[2] + 6 * ls[3]),
            t.getDouble(((1 * 3 + 2) * 5 + 4) * 7 + 6));
  // Rank 2 (N, C): NHWC is NCHW.
  EXPECT_EQ(ops::nn::logicalShape(Layout::NHWC, Shape{4, 9}), (Shape{4, 9}));
}

TEST(NnFamily, WindowGeometry) {
  Node n = opNode("MaxPool", 1, {{"strides", ints({2})}, {"auto_pad", str("SAME_LOWER")}});
  std::string error;
  auto w = ops::nn::windowOf(n, {6}, {3}, {}, error);
  ASSERT_TRUE(w.has_value()) << error;
  EXPECT_EQ(w->out, (std::vector<int64_t>{3}));
  EXPECT_EQ(w->padBegin, (std::vector<int64_t>{1})); // total 1: SAME_LOWER pads the start
  EXPECT_EQ(w->padEnd, (std::vector<int64_t>{0}));
  Node c = opNode("MaxPool", 1, {{"strides", ints({2})}, {"pads", ints({1, 1})}});
  ops::nn::Window cw = *ops::nn::windowOf(c, {4}, {2}, {true}, error);
  // out = ceil((4 + 2 - 2) / 2) + 1 = 3; the last window is [input, padding].
  EXPECT_EQ(cw.out, (std::vector<int64_t>{3}));
  std::vector<int64_t> taps;
  std::vector<std::vector<int64_t>> all;
  for (int64_t o = 0; o < 3; ++o) {
    ops::nn::windowTapsAt(cw, {o}, {1}, taps);
    all.push_back(taps);
  }
  EXPECT_EQ(all, (std::vector<std::vector<int64_t>>{{-1, 0}, {1, 2}, {3, -1}}));
  ops::nn::Window pw =
      *ops::nn::windowOf(opNode("MaxPool", 1, {{"strides", ints({3})}}), {4}, {2}, {true}, error);
  ops::nn::windowTapsAt(pw, {1}, {1}, taps);
  EXPECT_EQ(taps, (std::vector<int64_t>{3, -2})); // 4 lies past the input (ceil_mode)
  // 2-D: taps row-major over the kernel, offsets via the given strides.
  Node d = opNode("MaxPool", 1, {{"pads", ints({1, 0, 0, 0})}});
  ops::nn::Window dw = *ops::nn::windowOf(d, {3, 3}, {2, 2}, {}, error);
  ops::nn::windowTapsAt(dw, {0, 1}, {10, 1}, taps);
  EXPECT_EQ(taps, (std::vector<int64_t>{-1, -1, 1, 2}));
}
