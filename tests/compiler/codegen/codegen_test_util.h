// Helpers of the codegen tests: hand-built lowered programs.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "compiler/codegen/cpu_target.h"
#include "compiler/ir/program.h"
#include "gtest/gtest.h"

namespace lathe::testing {

inline Program MakeLoweredProgram(const std::string& name,
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

// An allocation-scope block (lowered_form.h) around body.
inline StmtPtr MakeAllocScope(const std::string& name,
                              std::vector<BufferPtr> buffers, StmtPtr body) {
  auto block = std::make_unique<BlockNode>();
  block->name = name;
  block->alloc_buffers = std::move(buffers);
  block->body = std::move(body);
  return block;
}

inline Target Host(int threads = 1) { return HostTarget(threads); }

// B[i] = A[i] * 2 + 1 over a prime extent.
inline Program ScalarLoop(int64_t n, ForKind kind = ForKind::kSerial) {
  BufferPtr a = MakeBuffer("A", DType::Float32(), {n});
  BufferPtr b = MakeBuffer("B", DType::Float32(), {n});
  Expr i = Var("i");
  return MakeLoweredProgram(
      "scalar", {a}, {b},
      MakeFor(i, n, MakeStore(b, {i}, Load(a, {i}) * Expr(2.0) + Expr(1.0)),
              kind));
}

// C[i, j] = sum_k A[i, k] * B[k, j], the inner loop j of kind jkind.
inline Program Matmul(int64_t m, int64_t n, int64_t k,
                      ForKind jkind = ForKind::kSerial,
                      ForKind ikind = ForKind::kSerial) {
  BufferPtr a = MakeBuffer("A", DType::Float32(), {m, k});
  BufferPtr b = MakeBuffer("B", DType::Float32(), {k, n});
  BufferPtr c = MakeBuffer("C", DType::Float32(), {m, n});
  Expr i = Var("i"), j = Var("j"), kk = Var("k"), j2 = Var("j2");
  std::vector<StmtPtr> body;
  body.push_back(MakeFor(j2, n, MakeStore(c, {i, j2}, Expr(0.0)), jkind));
  body.push_back(MakeFor(
      kk, k,
      MakeFor(j, n,
              MakeStore(c, {i, j},
                        Load(c, {i, j}) + Load(a, {i, kk}) * Load(b, {kk, j})),
              jkind)));
  return MakeLoweredProgram("matmul", {a, b}, {c},
                            MakeFor(i, m, MakeSeq(std::move(body)), ikind));
}

}  // namespace lathe::testing
