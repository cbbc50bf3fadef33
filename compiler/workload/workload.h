// A workload: one tensor computation at concrete shapes, the unit that Lathe
// tunes, stores and looks up.
//
// A workload comes either from the operator registry (registry.h), through a
// spec such as `matmul:M=512,N=512,K=512` (spec.h), or from a custom
// einsum-like expression with dims (custom_workload.h). It holds the te
// tensors of its definition (inputs and outputs in C ABI order), builds the
// initial loop program, and has a canonical form and a key.
//
// Canonical form (what the key hashes, and what the database stores):
// - registry operators: `NAME:key=value,...` with every declared parameter,
//   defaults filled in, keys sorted by byte order (upper case before lower
//   case), integers in plain decimal, dtype by its full name:
//   `matmul:K=512,M=512,N=512,dtype=float32`.
// - custom workloads: `custom:EXPR|DIMS` with EXPR the canonical text of the
//   parsed statements (custom_ast.h) and DIMS the dims sorted by name:
//   `custom:C[i,j] += A[i,k] * B[k,j]|i=512,j=512,k=512` (custom tensors
//   are float32).
// Both forms are specs: ParseWorkloadSpec(w.CanonicalForm()) gives back a
// workload with the same canonical form. Two specs that differ only in the
// order of parameters, in spacing, in leading zeros or in spelling defaults
// out have the same canonical form.
//
// Key: the 16 lower-case hex digits of StableHash64 (structural_equal.h) of
// the canonical form. Changing either changes every stored key: the golden
// keys in the tests are there to catch that.
// Tests: tests/compiler/workload/spec_test.cc, custom_workload_test.cc.
#pragma once

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "compiler/ir/program.h"
#include "compiler/te/tensor.h"

namespace lathe {

struct CustomDefinition;  // custom_workload.h

class Workload {
 public:
  // Made by ParseWorkloadSpec, MakeWorkload and ParseCustomWorkload, which
  // validate everything first; `custom` is set for custom workloads only.
  Workload(std::string op, std::map<std::string, std::string> params,
           std::vector<te::Tensor> inputs, std::vector<te::Tensor> outputs,
           std::string canonical_form,
           std::shared_ptr<const CustomDefinition> custom = nullptr);

  // The operator name ("matmul"), or "custom".
  const std::string& op() const { return op_; }
  bool is_custom() const { return custom_ != nullptr; }
  // Every parameter in canonical text, defaults included; for custom
  // workloads, the dims.
  const std::map<std::string, std::string>& params() const { return params_; }
  // Tensors in C ABI order: inputs in definition order, then outputs.
  const std::vector<te::Tensor>& inputs() const { return inputs_; }
  const std::vector<te::Tensor>& outputs() const { return outputs_; }
  // The parsed and checked definition of a custom workload; null otherwise.
  const CustomDefinition* custom() const { return custom_.get(); }

  // Whether input i (in C ABI order) is a constant, layout-free input: a
  // custom workload's input declared `const` (custom_ast.h). Never for
  // registry operators.
  bool IsLayoutFreeInput(size_t i) const;

  // The initial program (one loop nest per stage), named after op(), with
  // the layout-free inputs listed in Program::layout_free_inputs. Each
  // call builds a fresh program; the buffers are shared between them.
  absl::StatusOr<Program> InitialProgram() const;
  const std::string& CanonicalForm() const { return canonical_form_; }
  // 16 lower-case hex digits, see the top of this file.
  std::string Key() const;

 private:
  std::string op_;
  std::map<std::string, std::string> params_;
  std::vector<te::Tensor> inputs_;
  std::vector<te::Tensor> outputs_;
  std::string canonical_form_;
  std::shared_ptr<const CustomDefinition> custom_;
};

// The key of a canonical form (what Workload::Key returns).
std::string WorkloadKey(const std::string& canonical_form);

}  // namespace lathe
