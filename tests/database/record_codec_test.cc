// Tests of database/record_codec.h: fingerprints, validation, time summaries.
#include "database/record_codec.h"

#include <cmath>
#include <functional>
#include <limits>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "gtest/gtest.h"
#include "tests/database/test_records.h"

namespace lathe::db {
namespace {

using testing::DefaultTarget;
using testing::MakeRecord;
using testing::MakeTarget;

proto::Record Sample() {
  proto::Record record =
      MakeRecord("w1", DefaultTarget(), "h1", {3e-3, 1e-3, 2e-3});
  record.set_job("job-1");
  return record;
}

TEST(Fingerprint, IsThirtyTwoHexDigits) {
  const std::string fingerprint = Fingerprint(Sample());
  ASSERT_EQ(fingerprint.size(), 32u);
  for (char c : fingerprint)
    EXPECT_TRUE(std::isxdigit(c) && !std::isupper(c)) << fingerprint;
}

TEST(Fingerprint, EqualForEqualContentAndIgnoresTheRowId) {
  proto::Record a = Sample();
  proto::Record b = Sample();
  EXPECT_EQ(Fingerprint(a), Fingerprint(b));
  b.set_id(12345);
  EXPECT_EQ(Fingerprint(a), Fingerprint(b));
}

TEST(Fingerprint, ChangesWithEachField) {
  const std::vector<std::pair<std::string, std::function<void(proto::Record&)>>>
      changes = {
          {"workload_key", [](proto::Record& r) { r.set_workload_key("w2"); }},
          {"workload",
           [](proto::Record& r) { r.set_workload("another form"); }},
          {"target.canonical",
           [](proto::Record& r) {
             *r.mutable_target() = MakeTarget("znver4", {"avx2", "fma"}, 8);
           }},
          {"trace decision",
           [](proto::Record& r) {
             r.mutable_trace()->mutable_decisions(0)->set_values(1, 32);
           }},
          {"trace instruction",
           [](proto::Record& r) {
             r.mutable_trace()->mutable_instructions(1)->set_kind("Fuse");
           }},
          {"structural_hash",
           [](proto::Record& r) { r.set_structural_hash("h2"); }},
          {"times_s value", [](proto::Record& r) { r.set_times_s(0, 4e-3); }},
          {"times_s count", [](proto::Record& r) { r.add_times_s(2e-3); }},
          {"times_s order",
           [](proto::Record& r) { r.mutable_times_s()->SwapElements(0, 1); }},
          {"median_s",
           [](proto::Record& r) { r.set_median_s(r.median_s() * 2); }},
          {"spread", [](proto::Record& r) { r.set_spread(r.spread() + 0.5); }},
          {"status",
           [](proto::Record& r) { r.set_status(proto::MEASURE_WRONG_RESULT); }},
          {"error", [](proto::Record& r) { r.set_error("oops"); }},
          {"runner", [](proto::Record& r) { r.set_runner("remote:other"); }},
          {"lathe_version",
           [](proto::Record& r) { r.set_lathe_version("0.2.0"); }},
          {"measured_at_unix_ms",
           [](proto::Record& r) { r.set_measured_at_unix_ms(1); }},
          {"job", [](proto::Record& r) { r.set_job("job-2"); }},
      };
  const std::string original = Fingerprint(Sample());
  std::set<std::string> seen = {original};
  for (const auto& [field, change] : changes) {
    proto::Record changed = Sample();
    change(changed);
    const std::string fingerprint = Fingerprint(changed);
    EXPECT_NE(fingerprint, original) << field;
    // Every change gives its own fingerprint, not one shared "changed" value.
    EXPECT_TRUE(seen.insert(fingerprint).second) << field;
  }
}

TEST(Fingerprint, IsStableAcrossVersionsAndMachines) {
  // Fingerprints are stored in database files and compared across shards:
  // the scheme may never change. The expected value was computed by an
  // independent implementation of the documented scheme (FNV-1a 128 over
  // length-prefixed fields, integers and doubles as 8 little-endian bytes).
  proto::Record record;
  record.set_workload_key("k");
  record.set_workload("f");
  record.mutable_target()->set_canonical("t");
  record.set_structural_hash("h");
  record.add_times_s(0.5);
  record.set_median_s(0.5);
  record.set_status(proto::MEASURE_OK);
  record.set_runner("r");
  record.set_lathe_version("v");
  record.set_measured_at_unix_ms(7);
  EXPECT_EQ(Fingerprint(record), "f44427c7a361a0c4a3153c6b3b1e3c15");
}

TEST(Fingerprint, LengthPrefixesKeepFieldBoundaries) {
  proto::Record a = Sample();
  proto::Record b = Sample();
  a.set_runner("ab");
  a.set_lathe_version("c");
  b.set_runner("a");
  b.set_lathe_version("bc");
  EXPECT_NE(Fingerprint(a), Fingerprint(b));
}

TEST(ValidateRecord, AcceptsAGoodRecordOfEveryStatus) {
  EXPECT_TRUE(ValidateRecord(Sample()).ok()) << ValidateRecord(Sample());
  for (proto::MeasureStatus status :
       {proto::MEASURE_BUILD_ERROR, proto::MEASURE_RUN_ERROR,
        proto::MEASURE_TIMEOUT, proto::MEASURE_WRONG_RESULT}) {
    proto::Record record = Sample();
    record.set_status(status);
    EXPECT_TRUE(ValidateRecord(record).ok())
        << status << ": " << ValidateRecord(record);
    // A failed build has no times at all.
    record.clear_times_s();
    record.set_median_s(0);
    EXPECT_TRUE(ValidateRecord(record).ok())
        << status << ": " << ValidateRecord(record);
  }
}

TEST(ValidateRecord, NamesTheFieldAtFault) {
  const std::vector<
      std::tuple<std::string, std::function<void(proto::Record&)>, std::string>>
      faults = {
          {"empty key", [](proto::Record& r) { r.clear_workload_key(); },
           "workload_key"},
          {"empty form", [](proto::Record& r) { r.clear_workload(); },
           "workload"},
          {"empty target",
           [](proto::Record& r) { r.mutable_target()->clear_canonical(); },
           "target.canonical"},
          {"no kind",
           [](proto::Record& r) { r.mutable_target()->clear_kind(); },
           "target.kind"},
          {"empty hash", [](proto::Record& r) { r.clear_structural_hash(); },
           "structural_hash"},
          {"no status", [](proto::Record& r) { r.clear_status(); }, "status"},
          {"unknown status",
           [](proto::Record& r) {
             r.set_status(static_cast<proto::MeasureStatus>(42));
           },
           "status 42"},
          {"negative time", [](proto::Record& r) { r.set_times_s(1, -1e-3); },
           "times_s[1]"},
          {"zero time", [](proto::Record& r) { r.set_times_s(2, 0); },
           "times_s[2]"},
          {"NaN time",
           [](proto::Record& r) {
             r.set_times_s(0, std::numeric_limits<double>::quiet_NaN());
           },
           "times_s[0]"},
          {"OK without times", [](proto::Record& r) { r.clear_times_s(); },
           "no times_s"},
          {"OK with zero median", [](proto::Record& r) { r.set_median_s(0); },
           "median_s"},
          {"OK with infinite median",
           [](proto::Record& r) {
             r.set_median_s(std::numeric_limits<double>::infinity());
           },
           "median_s"},
          {"OK with a median not of its times",
           [](proto::Record& r) { r.set_median_s(1.5e-3); }, "not the median"},
      };
  for (const auto& [what, fault, field] : faults) {
    proto::Record record = Sample();
    fault(record);
    absl::Status status = ValidateRecord(record);
    EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument)
        << what << ": " << status;
    EXPECT_NE(status.message().find(field), absl::string_view::npos)
        << what << ": " << status;
  }
}

TEST(SummarizeTimes, OddCountTakesTheMiddleTime) {
  proto::Record record;
  for (double t : {5.0, 1.0, 3.0}) record.add_times_s(t);
  SummarizeTimes(record);
  EXPECT_EQ(record.median_s(), 3.0);
  // p10 and p90 are ranks round(0.2) = 0 and round(1.8) = 2.
  EXPECT_DOUBLE_EQ(record.spread(), (5.0 - 1.0) / 3.0);
  // The repeats keep their order; only the summary is sorted.
  EXPECT_EQ(record.times_s(0), 5.0);
}

TEST(SummarizeTimes, EvenCountAveragesTheMiddleTwo) {
  proto::Record record;
  for (double t : {4.0, 1.0, 2.0, 10.0}) record.add_times_s(t);
  SummarizeTimes(record);
  EXPECT_EQ(record.median_s(), 3.0);
  // Ranks round(0.3) = 0 and round(2.7) = 3.
  EXPECT_DOUBLE_EQ(record.spread(), (10.0 - 1.0) / 3.0);
}

TEST(SummarizeTimes, SpreadIgnoresOutliersBeyondTheTenthPercentiles) {
  proto::Record record;
  // Twenty-one times: 1..19 and two wild ones; p10 and p90 are ranks 2 and 18.
  record.add_times_s(1000.0);
  for (int i = 1; i <= 19; ++i) record.add_times_s(static_cast<double>(i));
  record.add_times_s(0.001);
  SummarizeTimes(record);
  EXPECT_EQ(record.median_s(), 10.0);
  EXPECT_DOUBLE_EQ(record.spread(), (18.0 - 2.0) / 10.0);
}

TEST(SummarizeTimes, OneTimeAndNoTimes) {
  proto::Record one;
  one.add_times_s(2.5);
  SummarizeTimes(one);
  EXPECT_EQ(one.median_s(), 2.5);
  EXPECT_EQ(one.spread(), 0);

  proto::Record none;
  none.set_median_s(7);
  none.set_spread(1);
  SummarizeTimes(none);
  EXPECT_EQ(none.median_s(), 0);
  EXPECT_EQ(none.spread(), 0);
}

TEST(SummarizeTimes, ItsMedianPassesValidation) {
  proto::Record record = Sample();
  record.clear_times_s();
  for (double t : {0.1, 0.7, 0.3, 0.2}) record.add_times_s(t);
  SummarizeTimes(record);
  EXPECT_TRUE(ValidateRecord(record).ok()) << ValidateRecord(record);
}

}  // namespace
}  // namespace lathe::db
