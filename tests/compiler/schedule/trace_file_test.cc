// Tests of compiler/schedule/trace_file.h: both forms read, errors that
// name the file, and a file past kMaxTraceBytes refused without reading it
// whole.
#include "compiler/schedule/trace_file.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "absl/strings/match.h"
#include "compiler/schedule/traced_schedule.h"
#include "compiler/workload/spec.h"
#include "proto/trace_limits.h"
#include "tests/support/temp_folder.h"

namespace lathe {
namespace {

// A trace with a split and its sampled-free decisions: the same in both
// forms.
Trace SomeTrace() {
  Workload workload = ParseWorkloadSpec("matmul:M=8,N=6,K=4").value();
  TracedSchedule sch(workload.InitialProgram().value());
  std::vector<LoopRV> loops = sch.GetLoops(sch.GetBlock("C").value()).value();
  EXPECT_TRUE(sch.Split(loops[0], {Factor{}, Factor{int64_t{2}}}).ok());
  Trace trace = sch.trace();
  trace.workload = workload.CanonicalForm();
  return trace;
}

TEST(TraceFile, ReadsTheJsonAndTheTextForm) {
  test_support::TempFolder folder;
  const Trace trace = SomeTrace();
  std::ofstream(folder.File("t.json")) << "\n  " << trace.ToJson();
  std::ofstream(folder.File("t.trace")) << trace.ToText();
  absl::StatusOr<Trace> json = ReadTraceFile(folder.File("t.json"));
  ASSERT_TRUE(json.ok()) << json.status();
  EXPECT_EQ(json->ToText(), trace.ToText());
  EXPECT_EQ(json->workload, trace.workload);
  absl::StatusOr<Trace> text = ReadTraceFile(folder.File("t.trace"));
  ASSERT_TRUE(text.ok()) << text.status();
  EXPECT_EQ(text->ToText(), trace.ToText());
}

TEST(TraceFile, ErrorsNameTheFile) {
  test_support::TempFolder folder;
  std::ofstream(folder.File("bad.trace")) << "r0 = get_block(";
  absl::StatusOr<Trace> bad = ReadTraceFile(folder.File("bad.trace"));
  EXPECT_FALSE(bad.ok());
  EXPECT_TRUE(absl::StrContains(bad.status().message(),
                                "trace file " + folder.File("bad.trace")))
      << bad.status();
  absl::StatusOr<Trace> missing = ReadTraceFile(folder.File("none.json"));
  EXPECT_EQ(missing.status().code(), absl::StatusCode::kNotFound);
}

TEST(TraceFile, RefusesAFilePastItsBound) {
  test_support::TempFolder folder;
  const std::string path = folder.File("huge.json");
  std::ofstream(path) << "{";
  std::filesystem::resize_file(path, kMaxTraceBytes + 1);  // sparse
  absl::StatusOr<Trace> huge = ReadTraceFile(path);
  EXPECT_EQ(huge.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(absl::StrContains(huge.status().message(), "kMaxTraceBytes"))
      << huge.status();
}

}  // namespace
}  // namespace lathe
