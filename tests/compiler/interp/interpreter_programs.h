// Builders of hand-made programs for the interpreter's tests
// (interpreter_test.cc, interpreter_errors_test.cc): blocks, programs,
// elementwise loops, filled tensors and a matmul.
// Tests: tests/compiler/interp/interpreter_test.cc.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "compiler/interp/interpreter.h"
#include "compiler/ir/program.h"
#include "compiler/te/tensor.h"

namespace lathe::interp_testing {

inline std::unique_ptr<BlockNode> MakeBlock(const std::string& name,
                                            std::vector<IterVar> iter_vars,
                                            std::vector<Expr> iter_values,
                                            StmtPtr body) {
  auto block = std::make_unique<BlockNode>();
  block->name = name;
  block->iter_vars = std::move(iter_vars);
  block->iter_values = std::move(iter_values);
  block->body = std::move(body);
  return block;
}

inline Program MakeProgram(const std::string& name,
                           std::vector<BufferPtr> inputs,
                           std::vector<BufferPtr> outputs, StmtPtr body,
                           std::vector<BufferPtr> root_allocs = {}) {
  Program p;
  p.name = name;
  p.inputs = std::move(inputs);
  p.outputs = std::move(outputs);
  p.root = std::make_unique<BlockNode>();
  p.root->name = "root";
  p.root->alloc_buffers = std::move(root_allocs);
  p.root->body = std::move(body);
  return p;
}

// for i in range(loop_extent): block NAME(vi = spatial(iter_extent, value(i))):
//   out[vi] = fn(vi)
struct ElementwiseSpec {
  int64_t loop_extent = 4;
  int64_t iter_extent = 4;
  std::function<Expr(const Expr& i)> iter_value = [](const Expr& i) {
    return i;
  };
  std::function<Expr(const Expr& vi)> value;
  std::function<Expr(const Expr& i, const Expr& vi)> predicate;  // optional
};

inline Program Elementwise(const BufferPtr& in, const BufferPtr& out,
                           const ElementwiseSpec& spec) {
  Expr i = Var("i");
  Expr vi = Var("vi");
  auto block =
      MakeBlock(out->name, {{vi, spec.iter_extent, IterType::kSpatial}},
                {spec.iter_value(i)}, MakeStore(out, {vi}, spec.value(vi)));
  if (spec.predicate) block->predicate = spec.predicate(i, vi);
  return MakeProgram("f", {in}, {out},
                     MakeFor(i, spec.loop_extent, std::move(block)));
}

inline TensorData Filled(const BufferPtr& b,
                         const std::vector<double>& values) {
  TensorData t = TensorData::Like(*b);
  EXPECT_EQ(static_cast<size_t>(t.size()), values.size());
  t.values = values;
  return t;
}

inline te::Tensor MatmulOutput(const te::Tensor& a, const te::Tensor& b) {
  te::ReduceAxis k = te::MakeReduceAxis(a.shape()[1], "k");
  return te::ComputeReduction(
      "C", {a.shape()[0], b.shape()[1]}, {"i", "j"},
      [&](const std::vector<Expr>& ax) {
        return te::Sum(a({ax[0], k.var}) * b({k.var, ax[1]}), {k});
      });
}

inline Program Matmul(int64_t m, int64_t n, int64_t k) {
  te::Tensor a = te::Placeholder("A", {m, k});
  te::Tensor b = te::Placeholder("B", {k, n});
  return te::CreateProgram("matmul", {a, b}, {MatmulOutput(a, b)}).value();
}

// for i in range(2):
//   block outer(vi = spatial(2, i)):
//     alloc T: float32[2] local
//     for j in range(2):
//       block inner(vj = spatial(2, j)): T[vj] = A[vi, vj] * 3
//     for j2 in range(2):
//       block out(vj = spatial(2, j2)): B[vi, vj] = T[vj] + 1
// With `write_t_only_first_time`, inner writes T only when vi == 0, so the
// second instance of outer reads a fresh, unwritten T.
inline Program NestedLocalAlloc(bool write_t_only_first_time) {
  BufferPtr a = MakeBuffer("A", DType::Float32(), {2, 2});
  BufferPtr b = MakeBuffer("B", DType::Float32(), {2, 2});
  BufferPtr t = MakeBuffer("T", DType::Float32(), {2}, BufferScope::kLocal);
  Expr i = Var("i"), vi = Var("vi"), j = Var("j"), vj = Var("vj"),
       j2 = Var("j2"), vj2 = Var("vj2");
  StmtPtr write_t = MakeStore(t, {vj}, Load(a, {vi, vj}) * 3.0);
  if (write_t_only_first_time) write_t = MakeIf(vi == 0, std::move(write_t));
  auto inner = MakeBlock("inner", {{vj, 2, IterType::kSpatial}}, {j},
                         std::move(write_t));
  auto out = MakeBlock("out", {{vj2, 2, IterType::kSpatial}}, {j2},
                       MakeStore(b, {vi, vj2}, Load(t, {vj2}) + 1.0));
  std::vector<StmtPtr> body;
  body.push_back(MakeFor(j, 2, std::move(inner)));
  body.push_back(MakeFor(j2, 2, std::move(out)));
  auto outer = MakeBlock("outer", {{vi, 2, IterType::kSpatial}}, {i},
                         MakeSeq(std::move(body)));
  outer->alloc_buffers = {t};
  return MakeProgram("nested", {a}, {b}, MakeFor(i, 2, std::move(outer)));
}

}  // namespace lathe::interp_testing
