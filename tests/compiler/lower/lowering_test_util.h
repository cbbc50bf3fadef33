// Helpers of the lowering tests: workloads, schedules, and running a program
// in the interpreter against the reference.
#pragma once

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "compiler/interp/allclose.h"
#include "compiler/interp/interpreter.h"
#include "compiler/interp/random_fill.h"
#include "compiler/ir/printer.h"
#include "compiler/workload/reference.h"
#include "compiler/workload/spec.h"

namespace lathe::testing {

inline Program InitialProgramOf(const std::string& spec) {
  absl::StatusOr<Workload> workload = ParseWorkloadSpec(spec);
  EXPECT_TRUE(workload.ok()) << workload.status();
  absl::StatusOr<Program> program = workload->InitialProgram();
  EXPECT_TRUE(program.ok()) << program.status();
  return *std::move(program);
}

// Runs program on random inputs and compares its outputs with the workload's
// reference.
inline absl::Status MatchesReference(const std::string& spec,
                                     const Program& program) {
  absl::StatusOr<Workload> workload = ParseWorkloadSpec(spec);
  if (!workload.ok()) return workload.status();
  std::vector<TensorData> inputs;
  for (size_t i = 0; i < workload->inputs().size(); ++i) {
    inputs.push_back(TensorData::Like(*workload->inputs()[i].buffer()));
    FillRandom(&inputs.back(), 1000 + i);
  }
  absl::StatusOr<std::vector<TensorData>> expected =
      RunReference(*workload, inputs);
  if (!expected.ok()) return expected.status();
  std::vector<TensorData> outputs;
  for (const te::Tensor& out : workload->outputs()) {
    outputs.push_back(TensorData::Like(*out.buffer()));
  }
  std::vector<TensorData*> args;
  for (TensorData& in : inputs) args.push_back(&in);
  for (TensorData& out : outputs) args.push_back(&out);
  absl::Status ran = Interpret(program, args);
  if (!ran.ok()) return ran;
  for (size_t o = 0; o < outputs.size(); ++o) {
    absl::Status close = CheckAllClose(outputs[o], (*expected)[o], 1e-4, 1e-5,
                                       workload->outputs()[o].name());
    if (!close.ok()) return close;
  }
  return absl::OkStatus();
}

inline bool Contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

}  // namespace lathe::testing
