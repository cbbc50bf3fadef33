// The tensor-expression API: how workloads are defined.
//
// A workload is a small graph of tensors: placeholders (the inputs) and
// computed tensors, each defined element-wise over its spatial axes, possibly
// reducing (sum, max, min) over reduction axes. CreateProgram lowers the graph
// to the initial loop program: one loop nest and one block per computed
// tensor, in dependency order; intermediates are allocated by the root block.
//
//   te::Tensor A = te::Placeholder("A", {M, K});
//   te::Tensor B = te::Placeholder("B", {K, N});
//   te::ReduceAxis k = te::MakeReduceAxis(K, "k");
//   te::Tensor C = te::ComputeReduction("C", {M, N}, {"i", "j"},
//       [&](const std::vector<Expr>& ax) {
//         return te::Sum(A({ax[0], k.var}) * B({k.var, ax[1]}), {k});
//       });
//   Program p = te::CreateProgram("matmul", {A, B}, {C});
//
// Tests: tests/compiler/te/tensor_test.cc.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "compiler/ir/program.h"

namespace lathe::te {

struct StageDef;

class Tensor {
 public:
  Tensor() = default;
  Tensor(BufferPtr buffer, std::shared_ptr<const StageDef> def)
      : buffer_(std::move(buffer)), def_(std::move(def)) {}

  // An element of this tensor, as an expression (a Load).
  Expr operator()(std::vector<Expr> indices) const;

  const BufferPtr& buffer() const { return buffer_; }
  const std::string& name() const { return buffer_->name; }
  const std::vector<int64_t>& shape() const { return buffer_->shape; }
  DType dtype() const { return buffer_->dtype; }
  // Null for placeholders.
  const std::shared_ptr<const StageDef>& def() const { return def_; }

 private:
  BufferPtr buffer_;
  std::shared_ptr<const StageDef> def_;
};

struct ReduceAxis {
  Expr var;
  int64_t extent = 1;
};

enum class ReduceKind { kSum, kMax, kMin };

struct Reduction {
  ReduceKind kind = ReduceKind::kSum;
  Expr source;
  std::vector<ReduceAxis> axes;
};

// How a computed tensor is defined: over spatial axis variables, either a
// plain value or a reduction.
struct StageDef {
  std::vector<Expr> axes;  // spatial variables, one per dimension
  std::vector<std::string> axis_names;
  Expr value;                  // defined when not a reduction
  Reduction reduction;         // used when value is undefined
  std::vector<Tensor> inputs;  // tensors read by value or reduction.source
};

Tensor Placeholder(const std::string& name, std::vector<int64_t> shape,
                   DType dtype = DType::Float32());
ReduceAxis MakeReduceAxis(int64_t extent, const std::string& name);
Reduction Sum(Expr source, std::vector<ReduceAxis> axes);
Reduction MaxOver(Expr source, std::vector<ReduceAxis> axes);
Reduction MinOver(Expr source, std::vector<ReduceAxis> axes);

// axis_names name the loops of the stage ("i", "j"); when empty, "i0", "i1".
Tensor Compute(const std::string& name, std::vector<int64_t> shape,
               std::vector<std::string> axis_names,
               const std::function<Expr(const std::vector<Expr>&)>& fn);
Tensor ComputeReduction(
    const std::string& name, std::vector<int64_t> shape,
    std::vector<std::string> axis_names,
    const std::function<Reduction(const std::vector<Expr>&)>& fn);

// The identity of a reduction (0, -inf, +inf) and its combiner.
Expr ReduceIdentity(ReduceKind kind, DType dtype);
Expr ReduceCombine(ReduceKind kind, Expr acc, Expr value);

// The initial program: stages in dependency order, one loop nest each.
// Errors: an output that is also an input, a tensor read by a stage but not
// reachable from the inputs, duplicate tensor names.
absl::StatusOr<Program> CreateProgram(const std::string& name,
                                      const std::vector<Tensor>& inputs,
                                      const std::vector<Tensor>& outputs);

}  // namespace lathe::te
