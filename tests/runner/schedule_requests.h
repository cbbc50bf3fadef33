// Measurement requests for the runner's tests: a workload's default
// schedule as an explicit trace, in variants that lower to different
// programs (by the vector width the schedule assumes).
#pragma once

#include <string>
#include <vector>

#include "compiler/codegen/cpu_target.h"
#include "compiler/codegen/kernel_program.h"
#include "compiler/schedule/default_schedule.h"
#include "compiler/schedule/trace.h"
#include "compiler/workload/spec.h"
#include "gtest/gtest.h"
#include "proto/measure.pb.h"

namespace lathe::runner::test_support {

struct ScheduleRequest {
  proto::MeasureRequest request;
  std::string structural_hash;  // what the trace replays to, computed here
};

// The default schedule of `spec` for a host target of `num_threads`, with
// loops vectorized by `vector_width` lanes (0: the target's), timed briefly.
inline ScheduleRequest DefaultScheduleRequest(const std::string& spec,
                                              int num_threads = 1,
                                              int vector_width = 0) {
  ScheduleRequest r;
  absl::StatusOr<Workload> workload = ParseWorkloadSpec(spec);
  EXPECT_TRUE(workload.ok()) << workload.status();
  if (!workload.ok()) return r;
  Target target = HostTarget(num_threads);
  DefaultScheduleOptions options;
  options.vector_width =
      vector_width > 0 ? vector_width : target.VectorLanesF32();
  options.num_threads = num_threads;
  absl::StatusOr<Trace> trace =
      DefaultSchedule(*workload->InitialProgram(), options);
  EXPECT_TRUE(trace.ok()) << trace.status();
  if (!trace.ok()) return r;
  trace->workload = workload->CanonicalForm();
  absl::StatusOr<KernelProgram> kernel =
      MakeKernelProgram(*workload, &*trace, target);
  EXPECT_TRUE(kernel.ok()) << kernel.status();
  if (kernel.ok()) r.structural_hash = kernel->structural_hash;
  r.request.set_workload(workload->CanonicalForm());
  trace->ToProto(r.request.mutable_trace());
  r.request.set_target(target.ToString());
  r.request.set_min_time_s(0.01);
  r.request.set_min_repeats(3);
  r.request.set_check_seed(5);
  return r;
}

// `request` with its trace broken: the first split's factor set to
// `factor` (< 1), which replay refuses ("split: ... factor 0 is not
// positive").
inline proto::MeasureRequest WithBadSplit(proto::MeasureRequest request,
                                          int factor = 0) {
  for (proto::TraceInstruction& inst :
       *request.mutable_trace()->mutable_instructions()) {
    if (inst.kind() == "split") {
      inst.mutable_inputs(2)->set_int_value(factor);
      return request;
    }
  }
  ADD_FAILURE() << "the trace has no split";
  return request;
}

// Four different programs of `spec` for `num_threads` threads: its default
// schedule vectorized by 4, 8, 16 and 2 lanes.
inline std::vector<ScheduleRequest> FourSchedules(const std::string& spec,
                                                  int num_threads) {
  std::vector<ScheduleRequest> programs;
  for (int lanes : {4, 8, 16, 2}) {
    programs.push_back(DefaultScheduleRequest(spec, num_threads, lanes));
  }
  return programs;
}

}  // namespace lathe::runner::test_support
