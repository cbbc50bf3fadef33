// Workload specs: `NAME:key=value,key=value` -> a Workload.
//
//   matmul:M=512,N=512,K=512
//   conv2d_nchw:N=1,C=64,H=56,W=56,K=64,R=3,S=3,pad=1
//   custom:C[i,j] += A[i,k] * B[k,j]|i=512,j=512,k=512
//
// NAME is a registry operator (registry.h) or `custom` followed by an
// expression and its dims separated by '|' (custom_workload.h); the
// canonical form of every workload is itself a spec (workload.h). Spaces
// around names, keys and values are ignored; parameter order is free.
// Tests: tests/compiler/workload/spec_test.cc.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "compiler/workload/workload.h"

namespace lathe {

// Errors (InvalidArgument), each naming the culprit and what is accepted:
// bad syntax (no name, an entry that is not key=value, a stray ','), an
// unknown operator (the known ones are listed), an unknown parameter (the
// accepted ones are listed), a parameter given twice, a missing required
// parameter, a value of the wrong kind (zero, negative, non-integer, an
// unsupported dtype), a value over kMaxParamValue, parameters inconsistent
// together (groups not dividing C), an empty output, a tensor over
// kMaxTensorElements.
absl::StatusOr<Workload> ParseWorkloadSpec(absl::string_view spec);

// The same from an operator name and its parameters as (key, value) texts,
// as a spec would give them.
absl::StatusOr<Workload> MakeWorkload(
    absl::string_view op,
    const std::vector<std::pair<std::string, std::string>>& params);

}  // namespace lathe
