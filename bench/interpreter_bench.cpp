// The interpreter's cost per element (issue 30): each kernel on N elements
// through evaluateNode, on its fast path and on the reference loops a fast
// path must equal bit for bit (KernelContext::referenceLoops: one dtype
// dispatch and one index computation per element), and a whole interpreter
// run (memory plan, seeded fill, kernel, observation) of a one-op graph.
// items/s is elements per second; its inverse is the cost per element.
#include "ir/op_def.h"
#include "ir/parser.h"
#include "ir/tensor.h"
#include "oracle/inlined.h"
#include "oracle/interpreter.h"
#include "oracle/memory_plan.h"

#include <benchmark/benchmark.h>
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

namespace {

using namespace graphvet;

/// A tensor of `type` with every element set to a small varied value.
Tensor filled(const TensorType &type) {
  Tensor t(type);
  for (int64_t i = 0; i < t.size(); ++i)
    t.setDouble(i, static_cast<double>((i * 7919) % 113) / 16.0 - 3.0);
  return t;
}

/// One node of `op` over inputs of `types`, evaluated per iteration.
struct KernelCase {
  Module module;
  std::vector<Tensor> inputs;
  int64_t elements = 0; ///< elements of the (first) output: the work unit
};

KernelCase kernelCase(const std::string &op, const std::string &attrs,
                      const std::vector<TensorType> &types) {
  std::string args;
  for (size_t k = 0; k < types.size(); ++k)
    args += fmt::format("{}x{}", k ? ", " : "", k);
  std::string text = "graph g {\n";
  for (size_t k = 0; k < types.size(); ++k)
    text += fmt::format("  x{} = Data() {{index = {}, out0.dtype = {}, out0.shape = [{}]}}\n", k, k,
                        dtypeName(types[k].dtype), fmt::join(types[k].shape, ", "));
  text += fmt::format("  y = {}({}){}\n  out = NetOutput(y)\n}}\n", op, args,
                      attrs.empty() ? "" : " {" + attrs + "}");
  ParseResult parsed = parseModule(text);
  if (!parsed.module) {
    fmt::print(stderr, "interpreter_bench: the case does not parse:\n{}", text);
    std::abort();
  }
  KernelCase c{std::move(*parsed.module), {}, 0};
  for (const TensorType &t : types)
    c.inputs.push_back(filled(t));
  return c;
}

void runKernel(benchmark::State &state, const KernelCase &c, bool reference) {
  const Graph &g = c.module.root();
  const Node &n = g.node(g.find("y"));
  std::vector<const Tensor *> ptrs;
  for (const Tensor &t : c.inputs)
    ptrs.push_back(&t);
  std::string error;
  int64_t elements = 0;
  for (auto _ : state) {
    auto out = evaluateNode(n, ptrs, error, nullptr, reference);
    if (!out) {
      state.SkipWithError(error.c_str());
      return;
    }
    elements = (*out)[0].size();
    benchmark::DoNotOptimize(out->data());
  }
  state.SetItemsProcessed(state.iterations() * elements);
}

TensorType vec(DType t, int64_t n) {
  return TensorType{t, {n}};
}

// Element-wise: N elements; the argument is N.
void BM_AddF32(benchmark::State &s, bool ref) {
  runKernel(s, kernelCase("Add", "", {vec(DType::F32, s.range(0)), vec(DType::F32, s.range(0))}),
            ref);
}
void BM_AddF16(benchmark::State &s, bool ref) {
  runKernel(s, kernelCase("Add", "", {vec(DType::F16, s.range(0)), vec(DType::F16, s.range(0))}),
            ref);
}
void BM_ReluF32(benchmark::State &s, bool ref) {
  runKernel(s, kernelCase("Relu", "", {vec(DType::F32, s.range(0))}), ref);
}
void BM_CastF32ToF16(benchmark::State &s, bool ref) {
  runKernel(s, kernelCase("Cast", "to = f16", {vec(DType::F32, s.range(0))}), ref);
}
void BM_ReduceSumF32(benchmark::State &s, bool ref) {
  int64_t n = s.range(0);
  runKernel(s, kernelCase("ReduceSum", "axes = [1], keepdims = 0", {{DType::F32, {n / 64, 64}}}),
            ref);
  s.SetItemsProcessed(s.iterations() * n); // per input element
}
// MatMul [M, K] x [K, N] with M = K = N = the argument: items are
// multiply-adds (M * N * K).
void BM_MatMulF32(benchmark::State &s, bool ref) {
  int64_t n = s.range(0);
  runKernel(s, kernelCase("MatMul", "", {{DType::F32, {n, n}}, {DType::F32, {n, n}}}), ref);
  s.SetItemsProcessed(s.iterations() * n * n * n);
}
// Conv 3x3, 16 -> 16 channels over an argument x argument image: items are
// multiply-adds.
void BM_ConvF32(benchmark::State &s, bool ref) {
  int64_t h = s.range(0);
  runKernel(s,
            kernelCase("Conv", "kernel_shape = [3, 3], pads = [1, 1, 1, 1]",
                       {{DType::F32, {1, 16, h, h}}, {DType::F32, {16, 16, 3, 3}}}),
            ref);
  s.SetItemsProcessed(s.iterations() * 16 * 16 * 9 * h * h);
}

#define KERNEL_BENCH(NAME, ...)                                                                    \
  BENCHMARK_CAPTURE(NAME, fast, false)->__VA_ARGS__->Unit(benchmark::kMicrosecond);                \
  BENCHMARK_CAPTURE(NAME, reference, true)->__VA_ARGS__->Unit(benchmark::kMicrosecond)

KERNEL_BENCH(BM_AddF32, Arg(1 << 10)->Arg(1 << 16)->Arg(1 << 20));
KERNEL_BENCH(BM_AddF16, Arg(1 << 10)->Arg(1 << 16)->Arg(1 << 20));
KERNEL_BENCH(BM_ReluF32, Arg(1 << 10)->Arg(1 << 16)->Arg(1 << 20));
KERNEL_BENCH(BM_CastF32ToF16, Arg(1 << 10)->Arg(1 << 16)->Arg(1 << 20));
KERNEL_BENCH(BM_ReduceSumF32, Arg(1 << 10)->Arg(1 << 16)->Arg(1 << 20));
KERNEL_BENCH(BM_MatMulF32, Arg(16)->Arg(64)->Arg(128));
KERNEL_BENCH(BM_ConvF32, Arg(8)->Arg(32));

/// A whole interpreter run of Relu over N f32 elements: memory plan and
/// inlining once, then per iteration a seeded fill, the kernel and the
/// observation of the output.
void BM_InterpreterRunRelu(benchmark::State &state) {
  int64_t n = state.range(0);
  ParseResult parsed = parseModule(
      fmt::format("graph g {{\n  x = Data() {{index = 0, out0.dtype = f32, out0.shape = [{}]}}\n"
                  "  y = Relu(x)\n  out = NetOutput(y)\n}}\n",
                  n));
  const Module &m = *parsed.module;
  oracle::MemoryPlan plan = oracle::MemoryPlan::build(m);
  oracle::InlinedModule inl = oracle::InlinedModule::build(m, plan);
  oracle::Interpreter interp(m, plan, inl);
  uint64_t seed = 1;
  for (auto _ : state) {
    auto outcome = interp.runOnce(seed++);
    benchmark::DoNotOptimize(&outcome);
  }
  state.SetItemsProcessed(state.iterations() * n);
}
BENCHMARK(BM_InterpreterRunRelu)
    ->Arg(1 << 10)
    ->Arg(1 << 16)
    ->Arg(1 << 20)
    ->Unit(benchmark::kMicrosecond);

} // namespace

BENCHMARK_MAIN();
