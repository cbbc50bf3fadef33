// Small programs for schedule tests, built directly with the te API so the
// tests do not depend on the workload registry.
#pragma once

#include "compiler/te/tensor.h"

namespace lathe::testing {

// C[i, j] = sum_k A[i, k] * B[k, j]
inline Program MatmulProgram(int64_t m, int64_t n, int64_t k) {
  te::Tensor a = te::Placeholder("A", {m, k});
  te::Tensor b = te::Placeholder("B", {k, n});
  te::ReduceAxis rk = te::MakeReduceAxis(k, "k");
  te::Tensor c = te::ComputeReduction(
      "C", {m, n}, {"i", "j"}, [&](const std::vector<Expr>& ax) {
        return te::Sum(a({ax[0], rk.var}) * b({rk.var, ax[1]}), {rk});
      });
  return te::CreateProgram("matmul", {a, b}, {c}).value();
}

// B[i] = A[i] * 2; C[i] = B[i] + 1: a producer and a consumer.
inline Program TwoStageProgram(int64_t n) {
  te::Tensor a = te::Placeholder("A", {n});
  te::Tensor b = te::Compute("B", {n}, {"i"}, [&](const std::vector<Expr>& ax) {
    return a({ax[0]}) * 2.0;
  });
  te::Tensor c = te::Compute("C", {n}, {"i"}, [&](const std::vector<Expr>& ax) {
    return b({ax[0]}) + 1.0;
  });
  return te::CreateProgram("two_stage", {a}, {c}).value();
}

// Y = relu(X · Wᵀ + bias): a reduction with two elementwise consumers.
inline Program DenseBiasReluProgram(int64_t m, int64_t n, int64_t k) {
  te::Tensor x = te::Placeholder("X", {m, k});
  te::Tensor w = te::Placeholder("W", {n, k});
  te::Tensor bias = te::Placeholder("bias", {n});
  te::ReduceAxis rk = te::MakeReduceAxis(k, "k");
  te::Tensor mm = te::ComputeReduction(
      "T_dense", {m, n}, {"i", "j"}, [&](const std::vector<Expr>& ax) {
        return te::Sum(x({ax[0], rk.var}) * w({ax[1], rk.var}), {rk});
      });
  te::Tensor biased = te::Compute("T_bias", {m, n}, {"i", "j"},
                                  [&](const std::vector<Expr>& ax) {
                                    return mm({ax[0], ax[1]}) + bias({ax[1]});
                                  });
  te::Tensor y = te::Compute("Y", {m, n}, {"i", "j"}, [&](const std::vector<Expr>& ax) {
    return Max(biased({ax[0], ax[1]}), Expr(0.0));
  });
  return te::CreateProgram("dense", {x, w, bias}, {y}).value();
}

}  // namespace lathe::testing

namespace lathe::testing {

// M[i] = max_k X[i, k]: the row maximum of a softmax.
inline Program RowMaxProgram(int64_t m, int64_t n) {
  te::Tensor x = te::Placeholder("X", {m, n});
  te::ReduceAxis rk = te::MakeReduceAxis(n, "k");
  te::Tensor mx = te::ComputeReduction(
      "M", {m}, {"i"}, [&](const std::vector<Expr>& ax) {
        return te::MaxOver(x({ax[0], rk.var}), {rk});
      });
  return te::CreateProgram("row_max", {x}, {mx}).value();
}

// S = sum_k A[k]: a reduction to a scalar (a buffer of shape [1]).
inline Program VectorSumProgram(int64_t n) {
  te::Tensor a = te::Placeholder("A", {n});
  te::ReduceAxis rk = te::MakeReduceAxis(n, "k");
  te::Tensor s = te::ComputeReduction("S", {1}, {"i"}, [&](const std::vector<Expr>&) {
    return te::Sum(a({rk.var}), {rk});
  });
  return te::CreateProgram("vector_sum", {a}, {s}).value();
}

}  // namespace lathe::testing
