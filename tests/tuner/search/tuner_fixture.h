// The fixture of the tuning loop's tests (tuner_test.cc,
// tuner_rounds_test.cc, tuner_stop_test.cc): a database in a temporary
// folder, small tasks and fast options, and a deterministic stand-in for
// measurement.
// Tests: tests/tuner/search/tuner_test.cc.
#pragma once

#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "compiler/codegen/cpu_target.h"
#include "compiler/ir/structural_equal.h"
#include "compiler/schedule/replay.h"
#include "compiler/target/target_info.h"
#include "compiler/workload/spec.h"
#include "database/database.h"
#include "tests/support/temp_folder.h"
#include "tuner/search/tuner.h"

namespace lathe::tuner::tuner_testing {

class TunerTest : public ::testing::Test {
 protected:
  std::unique_ptr<db::Database> OpenDb(const std::string& name) {
    db::OpenOptions options;
    options.mode = db::OpenOptions::Mode::kCreate;
    options.durable = false;
    return db::Database::Open(folder_.File(name), options).value();
  }

  static Task SmallTask(const std::string& spec = "matmul:M=32,N=48,K=16") {
    return MakeTask(ParseWorkloadSpec(spec).value(), HostTarget(1), 1).value();
  }

  static TuneOptions FastOptions() {
    TuneOptions options;
    options.max_trials = 24;
    options.batch_size = 8;
    options.search.population = 24;
    options.search.generations = 2;
    options.min_time_s = 0.005;
    options.min_repeats = 3;
    options.remeasure_top = 0;
    options.lathe_version = "test";
    return options;
  }

  // One batch of 8, measured once, then its 3 fastest measured again.
  static TuneOptions NearTiesOptions() {
    TuneOptions options = FastOptions();
    options.max_trials = 8;
    options.batch_size = 8;
    options.measure_rounds = 1;
    options.remeasure_top = 3;
    options.near_tie = 100;  // the 3 fastest all count as ties
    return options;
  }

  test_support::TempFolder folder_;
};

// A deterministic stand-in for measurement: the time is a function of the
// program (its structural hash, found by replaying the trace).
inline absl::StatusOr<proto::MeasureResult> FakeMeasure(
    const proto::MeasureRequest& request) {
  Workload workload = ParseWorkloadSpec(request.workload()).value();
  Trace trace = Trace::FromProto(request.trace()).value();
  auto scheduled = ReplayTrace(trace, workload.InitialProgram().value());
  proto::MeasureResult result;
  if (!scheduled.ok()) {
    result.set_status(proto::MEASURE_BUILD_ERROR);
    return result;
  }
  const uint64_t hash = StructuralHash((*scheduled)->program());
  result.set_status(proto::MEASURE_OK);
  result.set_structural_hash(StructuralHashHex((*scheduled)->program()));
  const double t = 1e-4 * (1 + static_cast<double>(hash % 1000) / 100);
  for (int i = 0; i < 3; ++i) result.add_times_s(t);
  return result;
}

inline std::vector<std::string> Hashes(const TuneReport& report) {
  std::vector<std::string> hashes;
  for (const TuneReport::Trial& t : report.history)
    hashes.push_back(t.structural_hash);
  return hashes;
}

// How the search of the next batch runs beside the measurement of one.
enum class Mode { kAfter, kOverlap, kWhileBuilding };

inline void SetMode(Mode mode, TuneOptions& options) {
  options.overlap = mode == Mode::kOverlap;
  options.search_while_building = mode == Mode::kWhileBuilding;
}
}  // namespace lathe::tuner::tuner_testing
