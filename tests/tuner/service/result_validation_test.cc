#include "tuner/service/result_validation.h"

#include <gtest/gtest.h>

#include <limits>
#include <string>

namespace lathe::service {
namespace {

proto::MeasureResult Good() {
  proto::MeasureResult result;
  result.set_status(proto::MEASURE_OK);
  result.add_times_s(1e-4);
  result.add_times_s(1.2e-4);
  result.set_structural_hash("0123456789abcdef");
  result.set_build_ms(12);
  result.set_run_ms(3);
  return result;
}

void ExpectRefused(const proto::MeasureResult& result,
                   const std::string& field) {
  absl::Status st = ValidateReportedResult(result);
  EXPECT_EQ(st.code(), absl::StatusCode::kInvalidArgument) << field;
  EXPECT_EQ(st.message().substr(0, field.size()), field) << st;
}

TEST(ResultValidationTest, WellFormedResultsPass) {
  EXPECT_TRUE(ValidateReportedResult(Good()).ok());
  proto::MeasureResult simulated = Good();
  simulated.clear_structural_hash();  // the tuner's hash is used
  EXPECT_TRUE(ValidateReportedResult(simulated).ok());
  proto::MeasureResult failed;
  failed.set_status(proto::MEASURE_BUILD_ERROR);
  failed.set_error("lowering: no");
  EXPECT_TRUE(ValidateReportedResult(failed).ok());
}

TEST(ResultValidationTest, TimesMustBeFiniteAndWithinBounds) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const double inf = std::numeric_limits<double>::infinity();
  for (double t : {nan, inf, -inf, -1e-3, 0.0, 1e-300, kMaxReportedTimeS * 2}) {
    proto::MeasureResult r = Good();
    r.set_times_s(1, t);
    ExpectRefused(r, "result.times_s[1]");
  }
  proto::MeasureResult empty = Good();
  empty.clear_times_s();
  ExpectRefused(empty, "result.times_s");
  proto::MeasureResult many = Good();
  for (int i = 0; i < kMaxReportedSamples; ++i) many.add_times_s(1e-3);
  ExpectRefused(many, "result.times_s");
  proto::MeasureResult edge = Good();
  edge.set_times_s(0, kMinReportedTimeS);
  edge.set_times_s(1, kMaxReportedTimeS);
  EXPECT_TRUE(ValidateReportedResult(edge).ok());
}

TEST(ResultValidationTest, StatusMustBeKnown) {
  proto::MeasureResult unset = Good();
  unset.set_status(proto::MEASURE_STATUS_UNSPECIFIED);
  ExpectRefused(unset, "result.status");
  proto::MeasureResult unknown = Good();
  unknown.set_status(static_cast<proto::MeasureStatus>(77));
  ExpectRefused(unknown, "result.status");
}

TEST(ResultValidationTest, HashIsExactlySixteenLowerCaseHexDigits) {
  for (std::string hash :
       {std::string("0123456789ABCDEF"), std::string("0123456789abcde"),
        std::string("0123456789abcdef0"), std::string("\x1b[2J0123456789ab"),
        std::string("0123456789abcde\0", 16)}) {
    proto::MeasureResult r = Good();
    r.set_structural_hash(hash);
    ExpectRefused(r, "result.structural_hash");
  }
}

TEST(ResultValidationTest, DurationsAreBounded) {
  proto::MeasureResult r = Good();
  r.set_build_ms(-1);
  ExpectRefused(r, "result.build_ms");
  r = Good();
  r.set_run_ms(std::numeric_limits<double>::quiet_NaN());
  ExpectRefused(r, "result.run_ms");
  r = Good();
  r.set_check_ms(1e300);
  ExpectRefused(r, "result.check_ms");
  // A long message (a compiler's) is no reason to refuse: it is cut later.
  r = Good();
  r.set_error(std::string(kMaxReportedErrorBytes + 1, 'x'));
  EXPECT_TRUE(ValidateReportedResult(r).ok());
}

}  // namespace
}  // namespace lathe::service
