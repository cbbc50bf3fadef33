// The reference evaluation of custom workloads: the checked statements
// evaluated directly, element by element, without the loop IR.
//
// Private to compiler/workload (reference.h is the public entry point).
// Tests: tests/compiler/workload/reference_test.cc.
#pragma once

#include <vector>

#include "compiler/interp/tensor_data.h"
#include "compiler/workload/custom_workload.h"

namespace lathe {

// Precondition: the inputs and outputs match the definition's input and
// output tensors in count and shape (RunReference checks it). Intermediates
// are held in double; outputs are rounded to their dtype.
void EvaluateCustomDefinition(const CustomDefinition& definition,
                              const std::vector<const TensorData*>& inputs,
                              const std::vector<TensorData*>& outputs);

}  // namespace lathe
