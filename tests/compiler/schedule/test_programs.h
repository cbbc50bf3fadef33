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
  te::Tensor y =
      te::Compute("Y", {m, n}, {"i", "j"}, [&](const std::vector<Expr>& ax) {
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
  te::Tensor mx =
      te::ComputeReduction("M", {m}, {"i"}, [&](const std::vector<Expr>& ax) {
        return te::MaxOver(x({ax[0], rk.var}), {rk});
      });
  return te::CreateProgram("row_max", {x}, {mx}).value();
}

// S = sum_k A[k]: a reduction to a scalar (a buffer of shape [1]).
inline Program VectorSumProgram(int64_t n) {
  te::Tensor a = te::Placeholder("A", {n});
  te::ReduceAxis rk = te::MakeReduceAxis(n, "k");
  te::Tensor s = te::ComputeReduction(
      "S", {1}, {"i"},
      [&](const std::vector<Expr>&) { return te::Sum(a({rk.var}), {rk}); });
  return te::CreateProgram("vector_sum", {a}, {s}).value();
}

}  // namespace lathe::testing

namespace lathe::testing {

// Pad[i] = A[i - 1] inside, 0 on a border of 1; B[i] = Pad[i] + Pad[i + 1] +
// Pad[i + 2]: a padding stage and a 3-tap stencil reading it.
inline Program PadStencilProgram(int64_t n) {
  te::Tensor a = te::Placeholder("A", {n});
  te::Tensor pad =
      te::Compute("Pad", {n + 2}, {"i"}, [&](const std::vector<Expr>& ax) {
        return Select(ax[0] >= 1 && ax[0] < n + 1, a({ax[0] - 1}), Expr(0.0));
      });
  te::Tensor b = te::Compute("B", {n}, {"i"}, [&](const std::vector<Expr>& ax) {
    return pad({ax[0]}) + pad({ax[0] + 1}) + pad({ax[0] + 2});
  });
  return te::CreateProgram("pad_stencil", {a}, {b}).value();
}

// B[i, j] = A[i, j] + 1; C[i, j] = B[i, j] * 2; D[i, j] = C[i, j] - B[i, j]:
// a chain of element-wise stages where B has two consumers.
inline Program ElementwiseChainProgram(int64_t m, int64_t n) {
  te::Tensor a = te::Placeholder("A", {m, n});
  te::Tensor b =
      te::Compute("B", {m, n}, {"i", "j"}, [&](const std::vector<Expr>& ax) {
        return a({ax[0], ax[1]}) + 1.0;
      });
  te::Tensor c =
      te::Compute("C", {m, n}, {"i", "j"}, [&](const std::vector<Expr>& ax) {
        return b({ax[0], ax[1]}) * 2.0;
      });
  te::Tensor d =
      te::Compute("D", {m, n}, {"i", "j"}, [&](const std::vector<Expr>& ax) {
        return c({ax[0], ax[1]}) - b({ax[0], ax[1]});
      });
  return te::CreateProgram("elementwise_chain", {a}, {d}).value();
}

// B[i, j] = A[i, j] * 2; C[i, j] = B[max(i - 1, 0), j] + B[i, j]: the
// consumer reads its producer at a row inside a max. With C's i split, the
// max mixes the outer (fixed) and inner (varying) part under the outer loop,
// which has no region: compute_at(B) is refused there and accepted under the
// inner part.
inline Program ShiftedReadProgram(int64_t m, int64_t n) {
  te::Tensor a = te::Placeholder("A", {m, n});
  te::Tensor b =
      te::Compute("B", {m, n}, {"i", "j"}, [&](const std::vector<Expr>& ax) {
        return a({ax[0], ax[1]}) * 2.0;
      });
  te::Tensor c =
      te::Compute("C", {m, n}, {"i", "j"}, [&](const std::vector<Expr>& ax) {
        return b({Max(ax[0] - 1, IntImm(0)), ax[1]}) + b({ax[0], ax[1]});
      });
  return te::CreateProgram("shifted_read", {a}, {c}).value();
}

}  // namespace lathe::testing

namespace lathe::testing {

// Hand-built programs (te puts every stage in its own nest; these put two
// stages under one loop, as compute_at would, to test data-parallelism).

struct TestIter {
  Expr var;
  int64_t extent;
  IterType type;
  Expr value;
};

inline std::unique_ptr<BlockNode> MakeTestBlock(
    const std::string& name, const std::vector<TestIter>& iters, StmtPtr body,
    StmtPtr init = nullptr) {
  auto block = std::make_unique<BlockNode>();
  block->name = name;
  for (const TestIter& it : iters) {
    block->iter_vars.push_back(IterVar{it.var, it.extent, it.type});
    block->iter_values.push_back(it.value);
  }
  block->body = std::move(body);
  block->init = std::move(init);
  return block;
}

inline Program MakeTestProgram(const std::string& name,
                               std::vector<BufferPtr> inputs,
                               std::vector<BufferPtr> outputs,
                               std::vector<BufferPtr> intermediates,
                               StmtPtr body) {
  Program p;
  p.name = name;
  p.inputs = std::move(inputs);
  p.outputs = std::move(outputs);
  p.root = std::make_unique<BlockNode>();
  p.root->name = "root";
  p.root->alloc_buffers = std::move(intermediates);
  p.root->body = std::move(body);
  return p;
}

// for i in range(n):
//   block B(vb = i): B[vb] = A[vb] * 2
//   block C(vc = i): C[vc] = B[vc] + B[max(vc - 1, 0)]
// C reads what the previous iteration of i wrote: correct in serial order,
// wrong if the iterations of i ran at once.
inline Program NeighborReadProgram(int64_t n) {
  BufferPtr a = MakeBuffer("A", DType::Float32(), {n});
  BufferPtr b = MakeBuffer("B", DType::Float32(), {n});
  BufferPtr c = MakeBuffer("C", DType::Float32(), {n});
  Expr i = Var("i"), vb = Var("vb"), vc = Var("vc");
  std::vector<StmtPtr> stages;
  stages.push_back(
      MakeTestBlock("B", {{vb, n, IterType::kSpatial, i}},
                    MakeStore(b, {vb}, Load(a, {vb}) * Expr(2.0))));
  stages.push_back(MakeTestBlock(
      "C", {{vc, n, IterType::kSpatial, i}},
      MakeStore(c, {vc}, Load(b, {vc}) + Load(b, {Max(vc - 1, 0)}))));
  return MakeTestProgram("neighbor_read", {a}, {c}, {b},
                         MakeFor(i, n, MakeSeq(std::move(stages))));
}

// for i in range(n):
//   block C(vc = i) [alloc T[1] when private_scratch]:
//     T[0] = A[vc] + 1; C[vc] = T[0] * 2
// Without private_scratch, T is allocated at the root: one element that
// every iteration of i overwrites.
inline Program ScratchProgram(int64_t n, bool private_scratch) {
  BufferPtr a = MakeBuffer("A", DType::Float32(), {n});
  BufferPtr t = MakeBuffer("T", DType::Float32(), {1});
  BufferPtr c = MakeBuffer("C", DType::Float32(), {n});
  Expr i = Var("i"), vc = Var("vc");
  std::vector<StmtPtr> stores;
  stores.push_back(MakeStore(t, {Expr(0)}, Load(a, {vc}) + Expr(1.0)));
  stores.push_back(MakeStore(c, {vc}, Load(t, {Expr(0)}) * Expr(2.0)));
  auto block = MakeTestBlock("C", {{vc, n, IterType::kSpatial, i}},
                             MakeSeq(std::move(stores)));
  std::vector<BufferPtr> root_buffers;
  (private_scratch ? block->alloc_buffers : root_buffers).push_back(t);
  return MakeTestProgram(private_scratch ? "private_scratch" : "shared_scratch",
                         {a}, {c}, root_buffers,
                         MakeFor(i, n, std::move(block)));
}

// A tiled producer and consumer, as compute_at leaves them:
// for i_0 in range(tiles):
//   for ax in range(tile + halo):
//     block B(vb = i_0 * tile + ax): B[vb] = A[vb] * 2
//   for i_1 in range(tile):
//     block C(vc = i_0 * tile + i_1): C[vc] = B[vc] + B[vc + halo]
// With halo > 0, consecutive iterations of i_0 both write the elements of B
// where their tiles overlap.
inline Program TiledStagesProgram(int64_t tiles, int64_t tile, int64_t halo) {
  int64_t n = tiles * tile;
  BufferPtr a = MakeBuffer("A", DType::Float32(), {n + halo});
  BufferPtr b = MakeBuffer("B", DType::Float32(), {n + halo});
  BufferPtr c = MakeBuffer("C", DType::Float32(), {n});
  Expr i0 = Var("i_0"), ax = Var("ax"), i1 = Var("i_1"), vb = Var("vb"),
       vc = Var("vc");
  std::vector<StmtPtr> stages;
  stages.push_back(MakeFor(
      ax, tile + halo,
      MakeTestBlock("B", {{vb, n + halo, IterType::kSpatial, i0 * tile + ax}},
                    MakeStore(b, {vb}, Load(a, {vb}) * Expr(2.0)))));
  stages.push_back(MakeFor(
      i1, tile,
      MakeTestBlock("C", {{vc, n, IterType::kSpatial, i0 * tile + i1}},
                    MakeStore(c, {vc}, Load(b, {vc}) + Load(b, {vc + halo})))));
  return MakeTestProgram("tiled_stages", {a}, {c}, {b},
                         MakeFor(i0, tiles, MakeSeq(std::move(stages))));
}

// for i in range(m):
//   for j in range(n):
//     block S(vi = i, vj = j):
//       S[vi, vj] = A[vi, vj] + select(vi > 0, S[max(vi - 1, 0), min(vj + 1, n
//       - 1)], 0)
// A wavefront: each row reads the previous row one column to the right, so
// i must stay outside j.
inline Program WavefrontProgram(int64_t m, int64_t n) {
  BufferPtr a = MakeBuffer("A", DType::Float32(), {m, n});
  BufferPtr s = MakeBuffer("S", DType::Float32(), {m, n});
  Expr i = Var("i"), j = Var("j"), vi = Var("vi"), vj = Var("vj");
  Expr above = Load(s, {Max(vi - 1, 0), Min(vj + 1, n - 1)});
  StmtPtr store = MakeStore(
      s, {vi, vj}, Load(a, {vi, vj}) + Select(vi > 0, above, Expr(0.0)));
  auto block = MakeTestBlock(
      "S", {{vi, m, IterType::kSpatial, i}, {vj, n, IterType::kSpatial, j}},
      std::move(store));
  return MakeTestProgram("wavefront", {a}, {s}, {},
                         MakeFor(i, m, MakeFor(j, n, std::move(block))));
}

}  // namespace lathe::testing
