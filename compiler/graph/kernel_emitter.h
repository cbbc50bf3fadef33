// The builder of a fused group's custom workload text: the operators'
// emitters (op_registry.h) append statements to it, kernel_partition.cc sets
// up each node's operands and reads the result.
//
// The text is a multi-statement custom expression (docs/workloads.md) with
// input declarations, e.g.
//
//   input in0[1,64,56,56]; input in1[64,64,3,3] const;
//   t0[v0,v1,v2,v3] += in0?[v0,v4,v2+v5-1,v3+v6-1] * in1[v1,v4,v5,v6];
//   out[v7,v8,v9,v10] = max(t0[v7,v8,v9,v10], 0)
//
// Naming is positional and deterministic, so identical groups give
// identical text: inputs are in0, in1, ... in order of first read (only
// those read become kernel arguments); intermediates t0, t1, ...; the
// group's output `out`; index variables v0, v1, ... in order of creation,
// each used by one statement. A scalar is a tensor of shape [1] read at [0].
// A group input that is a graph constant (an initializer or a folded
// constant, read by name rather than inlined as a literal) is declared
// `const`: layout-free (custom_ast.h), so its kernel may pack it once.
// Tests: tests/compiler/graph/kernel_emitter_test.cc.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "compiler/graph/graph.h"

namespace lathe::graph {

// One input of the node being emitted.
struct KernelOperand {
  bool present = false;  // false for an absent optional input
  int value = kNoValue;  // the graph value
  TensorType type;
  std::string name;          // the tensor's name in the text; "" for literals
  bool group_input = false;  // read from outside the group (declared)
  std::optional<double> literal;         // a float32 scalar constant
  const TensorData* constant = nullptr;  // the data of a constant value
};

class KernelEmitter {
 public:
  // --- set up by the partition, per node ---
  // Registers the node's operands and the name of its first output.
  void BeginNode(std::vector<KernelOperand> operands, TensorType output_type,
                 std::string output_name);

  // --- used by operator emitters ---
  size_t num_inputs() const { return operands_.size(); }
  bool has_input(size_t i) const {
    return i < operands_.size() && operands_[i].present;
  }
  const KernelOperand& input(size_t i) const { return operands_[i]; }
  const TensorType& output_type() const { return output_type_; }
  const std::string& output_name() const { return output_name_; }

  // A fresh intermediate tensor name.
  std::string NewTensor();
  // Fresh index variables for a shape (one of extent 1 for a scalar).
  std::vector<std::string> NewVars(const std::vector<int64_t>& shape);
  std::string NewVar(int64_t extent);
  // Appends a statement "LHS[vars] OP EXPR".
  void Add(const std::string& tensor, const std::vector<std::string>& vars,
           const std::string& assign, const std::string& expr);

  // The text of a read of operand i at the given index texts: its literal,
  // `name[idx,...]`, `name[0]` for a scalar. `padded` makes it a zero-padded
  // read (`name?[...]`); only group inputs allow it (FailedPrecondition).
  absl::StatusOr<std::string> Read(size_t i,
                                   const std::vector<std::string>& index,
                                   bool padded = false);
  // A read of operand i broadcast (numpy rules) to the output variables.
  // Reads of a tensor that is not float32 are FailedPrecondition.
  absl::StatusOr<std::string> ReadBroadcast(
      size_t i, const std::vector<std::string>& vars,
      const std::vector<int64_t>& shape);
  // A read of a tensor this node defined with NewTensor.
  static std::string ReadTensor(const std::string& tensor,
                                const std::vector<std::string>& index);
  // Declares the pad value of group input i (max pooling reads -FLT_MAX).
  absl::Status SetPadValue(size_t i, double pad);

  // Affine index text: sum of coef*var plus constant ("2*v1+v4-1").
  static std::string Affine(
      const std::vector<std::pair<int64_t, std::string>>& terms,
      int64_t constant);
  // A literal in an expression (negative ones parenthesized).
  static std::string Literal(double value);

  // --- read by the partition ---
  // Group inputs in declaration order (the C ABI order): value ids.
  const std::vector<int>& declared_values() const { return declared_values_; }
  // The whole text: declarations, then statements.
  std::string Text() const;
  // The dims text: "v0=1,v1=64,...".
  std::string DimsText() const;

 private:
  std::string DeclaredName(const KernelOperand& operand);

  std::vector<KernelOperand> operands_;
  TensorType output_type_;
  std::string output_name_;
  std::vector<int> declared_values_;
  std::vector<std::vector<int64_t>> declared_shapes_;
  std::vector<bool> declared_constants_;       // graph constants: `const`
  std::map<int, std::string> declared_names_;  // value -> name
  std::map<int, double> pad_values_;           // value -> pad
  std::vector<std::string> statements_;
  std::vector<std::pair<std::string, int64_t>> vars_;
  int num_tensors_ = 0;
};

}  // namespace lathe::graph
