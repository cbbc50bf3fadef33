// Helpers shared by the database tests (tests/database/): records and
// targets to commit, temporary folders, file contents.
#pragma once

#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstring>
#include <fstream>
#include <functional>
#include <iterator>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "database/database.h"
#include "database/record_codec.h"
#include "gtest/gtest.h"
#include "proto/record.pb.h"
#include "tests/support/temp_folder.h"

namespace lathe::db::testing {

// Asserts inside a test body; prints the status when it is not OK.
#define LATHE_ASSERT_OK(expr)                           \
  do {                                                  \
    const absl::Status assert_status_ = (expr);         \
    ASSERT_TRUE(assert_status_.ok()) << assert_status_; \
  } while (false)
#define LATHE_EXPECT_OK(expr)                           \
  do {                                                  \
    const absl::Status expect_status_ = (expr);         \
    EXPECT_TRUE(expect_status_.ok()) << expect_status_; \
  } while (false)

// A target of `kind` with these features (kept sorted, as TargetInfo asks)
// and threads; the canonical string is built from them, so two targets are
// the same exactly when their parts are.
inline proto::TargetInfo MakeTarget(const std::string& cpu,
                                    std::vector<std::string> features,
                                    int threads,
                                    const std::string& kind = "llvm") {
  std::sort(features.begin(), features.end());
  proto::TargetInfo target;
  target.set_kind(kind);
  target.set_cpu(cpu);
  for (const std::string& feature : features) target.add_features(feature);
  target.set_num_threads(threads);
  target.set_canonical(absl::StrCat(kind, " -mcpu=", cpu,
                                    " -mattr=", absl::StrJoin(features, ","),
                                    " -num-threads=", threads));
  target.set_device(absl::StrCat(cpu, " test machine"));
  return target;
}

inline proto::TargetInfo DefaultTarget() {
  return MakeTarget("znver4", {"avx2", "fma"}, 4);
}

// The canonical form belongs to the key: a key always has the same form.
inline std::string WorkloadForm(const std::string& key) {
  return absl::StrCat("form of ", key);
}

// A small trace whose decision carries `seed`, so records of different
// seeds differ in their trace as a real search's would.
inline proto::Trace MakeTrace(const std::string& workload_key, int64_t seed) {
  proto::Trace trace;
  trace.set_format_version(1);
  trace.set_workload(workload_key);
  proto::TraceInstruction* sample = trace.add_instructions();
  sample->set_kind("SamplePerfectTile");
  sample->add_inputs()->set_rv(0);
  sample->add_outputs(1);
  sample->add_outputs(2);
  proto::TraceAttr* attr = sample->add_attrs();
  attr->set_name("n");
  attr->set_int_value(2);
  proto::TraceInstruction* split = trace.add_instructions();
  split->set_kind("Split");
  split->add_inputs()->set_rv(0);
  split->add_inputs()->set_rv(1);
  split->add_inputs()->set_none(true);
  proto::TraceDecision* decision = trace.add_decisions();
  decision->set_instruction(0);
  decision->add_values(seed);
  decision->add_values(64);
  return trace;
}

// A record of (workload_key, target) for the program `hash`, its median and
// spread summarized from `times` as the measuring side does.
inline proto::Record MakeRecord(
    const std::string& workload_key, const proto::TargetInfo& target,
    const std::string& hash, std::vector<double> times,
    proto::MeasureStatus status = proto::MEASURE_OK) {
  proto::Record record;
  record.set_workload_key(workload_key);
  record.set_workload(WorkloadForm(workload_key));
  *record.mutable_target() = target;
  int64_t seed = 0;
  for (char c : hash) seed = seed * 31 + static_cast<unsigned char>(c);
  *record.mutable_trace() = MakeTrace(workload_key, seed % 1000);
  record.set_structural_hash(hash);
  for (double t : times) record.add_times_s(t);
  SummarizeTimes(record);
  record.set_status(status);
  if (status != proto::MEASURE_OK) record.set_error("failed on purpose");
  record.set_runner("local:test");
  record.set_lathe_version("0.1.0-test");
  record.set_measured_at_unix_ms(1700000000000);
  return record;
}

// An OK record whose median is `median_s` exactly.
inline proto::Record OkRecord(const std::string& workload_key,
                              const proto::TargetInfo& target,
                              const std::string& hash, double median_s) {
  return MakeRecord(workload_key, target, hash,
                    {median_s * 0.99, median_s, median_s * 1.02});
}

// The record as the database returns it: without its row id.
inline proto::Record WithoutId(proto::Record record) {
  record.clear_id();
  return record;
}

// Protobuf messages compare by their serialization (deterministic: no maps).
inline std::string Bytes(const google::protobuf::Message& message) {
  std::string out;
  message.SerializeToString(&out);
  return out;
}

inline OpenOptions Mode(OpenOptions::Mode mode) {
  OpenOptions options;
  options.mode = mode;
  // Tests do not need to survive power loss; fsync only slows them.
  options.durable = false;
  return options;
}
inline OpenOptions CreateMode() { return Mode(OpenOptions::Mode::kCreate); }
inline OpenOptions ReadWriteMode() {
  return Mode(OpenOptions::Mode::kReadWrite);
}
inline OpenOptions ReadOnlyMode() { return Mode(OpenOptions::Mode::kReadOnly); }

// Temporary folders: tests/support/temp_folder.h.
using ::lathe::test_support::TempFolder;

inline bool FileExists(const std::string& path) {
  struct stat info;
  return stat(path.c_str(), &info) == 0;
}

inline std::string ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in),
                     std::istreambuf_iterator<char>());
}

inline void WriteFile(const std::string& path, const std::string& bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

inline int64_t FileSize(const std::string& path) {
  struct stat info;
  return stat(path.c_str(), &info) == 0 ? static_cast<int64_t>(info.st_size)
                                        : -1;
}

// Creates a database at `path` holding `records`, and closes it (the last
// connection's close checkpoints the log and removes -wal and -shm).
inline absl::Status CreateDatabase(const std::string& path,
                                   const std::vector<proto::Record>& records) {
  absl::StatusOr<std::unique_ptr<Database>> db =
      Database::Open(path, CreateMode());
  if (!db.ok()) return db.status();
  if (records.empty()) return absl::OkStatus();
  absl::StatusOr<CommitResult> committed = (*db)->Commit(records);
  return committed.status();
}

}  // namespace lathe::db::testing
