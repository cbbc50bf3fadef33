// The program of one kernel: a workload scheduled by a trace (or by the
// default schedule when none is given) for a target, then lowered. What
// `lathe compile` emits and `lathe bench` measures, built the same way so
// that what is measured is what ships.
// Tests: tests/compiler/codegen/kernel_library_test.cc,
// tests/compiler/codegen/kernel_program_test.cc.
#pragma once

#include <string>

#include "absl/status/statusor.h"
#include "compiler/ir/program.h"
#include "compiler/schedule/trace.h"
#include "compiler/target/target.h"
#include "compiler/workload/workload.h"

namespace lathe {

struct KernelProgram {
  Program scheduled;  // after the trace, before lowering
  Program lowered;    // what code generation takes
  Trace trace;        // as replayed; the default schedule's when none was given
  bool default_schedule = false;
  // StructuralHashHex of `scheduled`: names the schedule in headers and
  // reports (equal hashes, equal programs).
  std::string structural_hash;
  double schedule_ms = 0;  // replay (or default schedule) and lowering
};

// Schedules and lowers `workload` for `target`. With trace == nullptr the
// default schedule is used. Errors: those of replay (the instruction that
// failed is named; callers prefix the trace's file) and of lowering.
absl::StatusOr<KernelProgram> MakeKernelProgram(const Workload& workload,
                                                const Trace* trace,
                                                const Target& target);

}  // namespace lathe
