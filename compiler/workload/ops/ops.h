// The operator families of the registry, one Make...Op() per operator.
//
// Private to compiler/workload: registry.cc lists these, one line each. Each
// family's file holds, for each of its operators, the parameter list, the te
// definition (in the layouts of docs/architecture.md) and the plain-loop
// reference.
// Tests: tests/compiler/workload/ops_test.cc, reference_test.cc.
#pragma once

#include "compiler/workload/registry.h"

namespace lathe::ops {

// matmul.cc
OperatorDef MakeMatmulOp();
OperatorDef MakeBatchMatmulOp();
OperatorDef MakeDenseOp();
// conv2d.cc
OperatorDef MakeConv2dNchwOp();
OperatorDef MakeConv2dNhwcOp();
// pool2d.cc
OperatorDef MakeMaxPool2dOp();
OperatorDef MakeAvgPool2dOp();
// softmax.cc
OperatorDef MakeSoftmaxOp();
// elementwise.cc
OperatorDef MakeAddOp();
OperatorDef MakeReluOp();

// The dtype parameter every operator takes.
ParamSpec DTypeParam();

}  // namespace lathe::ops
