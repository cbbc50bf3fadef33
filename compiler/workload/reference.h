// Reference evaluation of workloads: the results every compiled candidate is
// checked against before its time counts.
//
// Registry operators use their plain nested loops (ops/*.cc); custom
// workloads evaluate their parsed statements (custom_eval.h). Neither goes
// through the loop IR, so a bug there cannot hide in both sides of a check.
// Accumulation is in double and only outputs are rounded to their dtype, so
// compare compiled results with a tolerance.
// Tests: tests/compiler/workload/reference_test.cc.
#pragma once

#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "compiler/interp/tensor_data.h"
#include "compiler/workload/workload.h"

namespace lathe {

// Computes the workload's outputs from its inputs, both in C ABI order.
// Errors (InvalidArgument): a wrong number of tensors, a null tensor, a
// shape or dtype that differs from the workload's tensor, values whose
// count does not match the shape.
absl::Status RunReference(const Workload& workload,
                          const std::vector<const TensorData*>& inputs,
                          const std::vector<TensorData*>& outputs);

// Allocates the outputs and runs the reference.
absl::StatusOr<std::vector<TensorData>> RunReference(
    const Workload& workload, const std::vector<TensorData>& inputs);

}  // namespace lathe
