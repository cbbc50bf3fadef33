// Two tuning runs (tuner::Tune) of one task on one database at once, each on
// its own thread and connection, as the daemon runs two jobs: with a shared
// ClaimRegistry they never measure the same program, both spend their whole
// budgets, and the cost model saved last learned from both.
#include <chrono>
#include <condition_variable>
#include <map>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include <sqlite3.h>

#include "database/sqlite_connection.h"
#include "tests/tuner/search/tuner_fixture.h"
#include "tuner/search/tuner.h"
#include "tuner/service/claim_registry.h"

namespace lathe::service {
namespace {

using tuner::TuneOptions;
using tuner::TuneReport;

// Holds each run's first measurement until the other run has dispatched its
// first batch too: both batches are searched and dispatched before anything
// is measured or committed, whatever the threads' timing.
class Rendezvous {
 public:
  // False when the other run did not arrive within a minute.
  bool Arrive() {
    std::unique_lock<std::mutex> lock(mutex_);
    ++arrived_;
    changed_.notify_all();
    return changed_.wait_for(lock, std::chrono::seconds(60),
                             [this] { return arrived_ >= 2; });
  }

 private:
  std::mutex mutex_;
  std::condition_variable changed_;
  int arrived_ = 0;
};

class ConcurrentTuneTest : public tuner::tuner_testing::TunerTest {
 protected:
  struct Outcome {
    std::vector<TuneReport> reports;
    std::map<std::string, int> measured;  // structural hash -> times
    bool overlapped = true;               // both arrived at the rendezvous
  };

  // Two runs with the same options and seed on database "shared.db".
  Outcome RunTwo(tuner::ConcurrentRuns* concurrent) {
    TuneOptions options = FastOptions();
    options.measure_rounds = 1;  // one measurement per trial
    options.concurrent = concurrent;
    Outcome out;
    out.reports.resize(2);
    std::mutex mutex;
    Rendezvous rendezvous;
    std::vector<std::unique_ptr<db::Database>> dbs;
    for (int r = 0; r < 2; ++r) dbs.push_back(OpenDb("shared.db"));
    std::vector<std::thread> threads;
    for (int r = 0; r < 2; ++r) {
      threads.emplace_back([&, r] {
        std::vector<tuner::Task> tasks = {SmallTask()};
        bool first = true;  // only this thread measures for run r
        tuner::MeasureFn measure = [&](const proto::MeasureRequest& request)
            -> absl::StatusOr<proto::MeasureResult> {
          if (first) {
            first = false;
            if (!rendezvous.Arrive()) {
              std::lock_guard<std::mutex> lock(mutex);
              out.overlapped = false;
            }
          }
          absl::StatusOr<proto::MeasureResult> result =
              tuner::tuner_testing::FakeMeasure(request);
          std::lock_guard<std::mutex> lock(mutex);
          ++out.measured[result->structural_hash()];
          return result;
        };
        absl::StatusOr<TuneReport> report =
            tuner::Tune(tasks, *dbs[r], measure, options);
        ASSERT_TRUE(report.ok()) << report.status();
        out.reports[r] = *std::move(report);
      });
    }
    for (std::thread& t : threads) t.join();
    return out;
  }

  // The `records` column of the cost model saved in "shared.db".
  int64_t SavedModelRecords() {
    auto connection =
        db::Connection::Open(folder_.File("shared.db"), SQLITE_OPEN_READONLY)
            .value();
    return connection->QueryInt("SELECT records FROM cost_models").value();
  }
};

TEST_F(ConcurrentTuneTest, TwoRunsOfOneTaskNeverMeasureAProgramTwice) {
  ClaimRegistry registry;
  Outcome out = RunTwo(&registry);
  ASSERT_TRUE(out.overlapped);
  const int64_t budget = FastOptions().max_trials;
  for (const TuneReport& report : out.reports) {
    EXPECT_EQ(report.trials, budget);
    EXPECT_FALSE(report.interrupted);
  }
  EXPECT_EQ(out.measured.size(), static_cast<size_t>(2 * budget));
  for (const auto& [hash, times] : out.measured)
    EXPECT_EQ(times, 1) << "program " << hash << " measured " << times
                        << " times";
  // The run that committed last read every record of the other before its
  // last retraining, and its model, saved last, learned from both runs.
  EXPECT_EQ(
      std::max(out.reports[0].concurrent_rows, out.reports[1].concurrent_rows),
      budget);
  EXPECT_EQ(SavedModelRecords(), 2 * budget);
  // Every claim is forgotten once both runs are done (their records are in
  // the database for whoever comes next).
  EXPECT_EQ(registry.tasks(), 0);
  // Every batch of both runs is a row, committed with its records and
  // numbered in that transaction: the runs (both without a job, so one
  // numbering) took each index once, 0..n-1 in commit order, and each
  // run's report holds the rows it committed.
  const tuner::Task task = SmallTask();
  const std::vector<db::TuningBatch> rows =
      OpenDb("shared.db")->Batches(task.key, task.target.ToString()).value();
  ASSERT_EQ(rows.size(),
            static_cast<size_t>(2 * budget / FastOptions().batch_size));
  for (size_t i = 0; i < rows.size(); ++i)
    EXPECT_EQ(rows[i].index, static_cast<int64_t>(i));
  for (const TuneReport& report : out.reports) {
    for (const TuneReport::JudgedBatch& judged : report.judged_batches) {
      ASSERT_GE(judged.row.index, 0);
      ASSERT_LT(judged.row.index, static_cast<int64_t>(rows.size()));
      const db::TuningBatch& row = rows[judged.row.index];
      EXPECT_EQ(row.finished_ms, judged.row.finished_ms);
      EXPECT_EQ(row.accuracy, judged.row.accuracy);
      EXPECT_EQ(row.trained_on, judged.row.trained_on);
    }
  }
}

// The same two runs without the registry: what the test above rules out
// does happen (both searches, seeded alike, pick the same first batch).
TEST_F(ConcurrentTuneTest, WithoutClaimsTheSameProgramsAreMeasuredTwice) {
  Outcome out = RunTwo(nullptr);
  ASSERT_TRUE(out.overlapped);
  int twice = 0;
  for (const auto& [hash, times] : out.measured) twice += times > 1;
  EXPECT_GE(twice, FastOptions().batch_size);
}

}  // namespace
}  // namespace lathe::service
