// Tests of measuring a batch in rounds (tuner/search/measurement_rounds.h);
// the tuner's use of them: tuner_test.cc (MeasuresEachBatchInRounds...).
#include "tuner/search/measurement_rounds.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "compiler/codegen/cpu_target.h"
#include "compiler/workload/spec.h"

namespace lathe::tuner {
namespace {

TEST(SettingsOfRound, SplitsTheTimeAndRoundsTheRepeatsUp) {
  const RoundSettings two = SettingsOfRound(0.1, 5, 200, 2);
  EXPECT_DOUBLE_EQ(two.min_time_s, 0.05);
  EXPECT_EQ(two.min_repeats, 3);  // 2 x 3 >= 5
  EXPECT_EQ(two.max_repeats, 100);
  const RoundSettings one = SettingsOfRound(0.1, 5, 200, 1);
  EXPECT_DOUBLE_EQ(one.min_time_s, 0.1);
  EXPECT_EQ(one.min_repeats, 5);
  EXPECT_EQ(one.max_repeats, 200);
}

TEST(SettingsOfRound, EveryRoundTakesAtLeastOneSample) {
  const RoundSettings many = SettingsOfRound(0.1, 1, 2, 4);
  EXPECT_EQ(many.min_repeats, 1);
  EXPECT_GE(many.max_repeats, many.min_repeats);
  // "No limit" stays no limit; rounds below 1 are one round.
  EXPECT_EQ(SettingsOfRound(0.1, 3, 0, 2).max_repeats, 0);
  EXPECT_DOUBLE_EQ(SettingsOfRound(0.1, 3, 0, 0).min_time_s, 0.1);
}

TEST(RequestOfRound, AsksForTheRoundsShareOfTheTaskWithoutATrace) {
  const Task task = MakeTask(ParseWorkloadSpec("matmul:M=32,N=48,K=16").value(),
                             HostTarget(2), 1)
                        .value();
  const RoundSettings settings = SettingsOfRound(0.1, 5, 200, 2);
  const proto::MeasureRequest request =
      RequestOfRound(task, settings, /*flush_cache=*/true);
  EXPECT_EQ(request.workload(), task.workload.CanonicalForm());
  EXPECT_EQ(request.target(), task.target.ToString());
  EXPECT_DOUBLE_EQ(request.min_time_s(), 0.05);
  EXPECT_EQ(request.min_repeats(), 3);
  EXPECT_EQ(request.max_repeats(), 100);
  EXPECT_TRUE(request.flush_cache());
  EXPECT_FALSE(RequestOfRound(task, settings, false).flush_cache());
  // The same inputs for every candidate: the worker keeps one reference.
  EXPECT_EQ(request.check_seed(), 1u);
  EXPECT_FALSE(request.has_trace());
  EXPECT_TRUE(request.inject_fault().empty());
}

TEST(OrderOfRound, AlternatesDirection) {
  const std::vector<size_t> ok = {0, 2, 3, 7};
  EXPECT_EQ(OrderOfRound(ok, 0), ok);
  EXPECT_EQ(OrderOfRound(ok, 1), (std::vector<size_t>{7, 3, 2, 0}));
  EXPECT_EQ(OrderOfRound(ok, 2), ok);
}

proto::MeasureResult Ok(std::initializer_list<double> times, double run_ms) {
  proto::MeasureResult result;
  result.set_status(proto::MEASURE_OK);
  result.set_structural_hash("abc");
  result.set_runner("r1");
  for (double t : times) result.add_times_s(t);
  result.set_run_ms(run_ms);
  return result;
}

TEST(CandidatesOfRound, EveryCandidateFirstThenThoseStillOkBackwards) {
  std::vector<std::optional<proto::MeasureResult>> results(4);
  EXPECT_EQ(CandidatesOfRound(results, 0), (std::vector<size_t>{0, 1, 2, 3}));
  proto::MeasureResult wrong;
  wrong.set_status(proto::MEASURE_WRONG_RESULT);
  results[0] = Ok({1e-3}, 1);
  results[1] = wrong;
  results[3] = Ok({2e-3}, 1);  // 2 was never measured (stopped)
  EXPECT_EQ(CandidatesOfRound(results, 1), (std::vector<size_t>{3, 0}));
  EXPECT_EQ(CandidatesOfRound(results, 2), (std::vector<size_t>{0, 3}));
}

// A later round times again only the programs within kLaterRoundsWithin of
// the batch's fastest sample so far; 0 keeps every OK one.
TEST(CandidatesOfRound, LaterRoundsOnlyForTheCandidatesCloseToTheFastest) {
  std::vector<std::optional<proto::MeasureResult>> results(5);
  ASSERT_EQ(kLaterRoundsWithin, 2.0);
  results[0] = Ok({3.0e-3, 1.9e-3}, 1);  // within 2x of 1e-3 by its fastest
  results[1] = Ok({1.0e-3}, 1);          // the fastest
  results[2] = Ok({2.1e-3}, 1);          // behind
  results[3] = Ok({2.0e-3}, 1);          // exactly 2x: kept
  results[4] = Ok({9.0e-3}, 1);
  EXPECT_EQ(CandidatesOfRound(results, 1), (std::vector<size_t>{3, 1, 0}));
  EXPECT_EQ(CandidatesOfRound(results, 2), (std::vector<size_t>{0, 1, 3}));
  EXPECT_EQ(CandidatesOfRound(results, 1, /*within=*/0),
            (std::vector<size_t>{4, 3, 2, 1, 0}));
  EXPECT_EQ(CandidatesOfRound(results, 1, /*within=*/10),
            (std::vector<size_t>{4, 3, 2, 1, 0}));
  // A failed program's samples do not count: 1.9e-3 is the fastest now.
  results[1]->set_status(proto::MEASURE_WRONG_RESULT);
  EXPECT_EQ(CandidatesOfRound(results, 1), (std::vector<size_t>{3, 2, 0}));
}

TEST(BuildAheadOf, TheNextCandidatesOfTheRoundSoonestFirst) {
  const std::vector<size_t> order = {7, 2, 5, 0, 3, 6, 1};  // a round's order
  ASSERT_EQ(kBuildAheadHints, 4);
  EXPECT_EQ(BuildAheadOf(order, 0), (std::vector<size_t>{2, 5, 0, 3}));
  EXPECT_EQ(BuildAheadOf(order, 4), (std::vector<size_t>{6, 1}));
  EXPECT_TRUE(BuildAheadOf(order, 6).empty());
  EXPECT_TRUE(BuildAheadOf({}, 0).empty());
}

TEST(MergeRound, KeepsTheSamplesOfEveryRound) {
  proto::MeasureResult into = Ok({2.2e-3, 2.3e-3}, 5);
  into.set_check_ms(3);
  proto::MeasureResult later = Ok({2.0e-3, 2.1e-3}, 4);
  later.set_check_ms(0.5);
  MergeRound(later, 1, &into);
  EXPECT_EQ(into.status(), proto::MEASURE_OK);
  ASSERT_EQ(into.times_s_size(), 4);
  EXPECT_DOUBLE_EQ(into.times_s(2), 2.0e-3);
  EXPECT_DOUBLE_EQ(into.run_ms(), 9);
  EXPECT_DOUBLE_EQ(into.check_ms(), 3.5);
  EXPECT_EQ(into.runner(), "r1");  // provenance of the first round
}

TEST(MergeRound, AFailureInALaterRoundIsTheResult) {
  proto::MeasureResult into = Ok({2.2e-3, 2.3e-3}, 5);
  proto::MeasureResult later;
  later.set_status(proto::MEASURE_TIMEOUT);
  later.set_error("timed out after 30.0 s");
  later.set_run_ms(30000);
  MergeRound(later, 1, &into);
  EXPECT_DOUBLE_EQ(into.run_ms(),
                   30005);  // the time the failed round took counts
  EXPECT_EQ(into.status(), proto::MEASURE_TIMEOUT);
  EXPECT_EQ(into.error(), "round 2: timed out after 30.0 s");
  EXPECT_EQ(into.times_s_size(), 0);  // no time of a program that failed
  EXPECT_EQ(into.structural_hash(), "abc");

  proto::MeasureResult unset = Ok({1e-3}, 1);
  MergeRound(proto::MeasureResult(), 2, &unset);
  EXPECT_EQ(unset.status(), proto::MEASURE_RUN_ERROR);
  EXPECT_EQ(unset.error(), "round 3: ");
}

// A batch measured again as the tuner measures it: round 0 over every
// program with a trace, later rounds backwards over those still OK, each
// request naming the next programs of its round, later rounds merged.
TEST(MeasureBatchInRounds, MeasuresLikeTheTunerAndMergesTheRounds) {
  const Task task = MakeTask(ParseWorkloadSpec("matmul:M=32,N=48,K=16").value(),
                             HostTarget(1), 1)
                        .value();
  std::vector<proto::Trace> traces(4);
  for (size_t i = 0; i < traces.size(); ++i)
    traces[i].set_workload(std::to_string(i));
  // Program 2 has no trace: never measured. Program 1 fails in round 0.
  const std::vector<const proto::Trace*> batch = {&traces[0], &traces[1],
                                                  nullptr, &traces[3]};
  std::vector<std::string> asked;  // "round:program:hints"
  int round = 0;
  auto measure = [&](const proto::MeasureRequest& request)
      -> absl::StatusOr<proto::MeasureResult> {
    std::string hints;
    for (const proto::Trace& t : request.build_ahead()) hints += t.workload();
    const std::string program = request.trace().workload();
    if (asked.size() == 3) round = 1;  // 3 programs in round 0
    asked.push_back(absl::StrCat(round, ":", program, ":", hints));
    proto::MeasureResult r;
    r.set_status(program == "1" ? proto::MEASURE_RUN_ERROR : proto::MEASURE_OK);
    r.add_times_s(round == 0 ? 2e-3 : 1e-3);
    return r;
  };
  const RoundSettings settings = SettingsOfRound(0.1, 5, 200, 2);
  absl::StatusOr<std::vector<std::optional<proto::MeasureResult>>> results =
      MeasureBatchInRounds(task, batch, settings, 2, false,
                           /*build_ahead=*/true, measure);
  ASSERT_TRUE(results.ok()) << results.status();
  EXPECT_EQ(asked, (std::vector<std::string>{"0:0:13", "0:1:3", "0:3:", "1:3:0",
                                             "1:0:"}));
  ASSERT_EQ(results->size(), 4u);
  EXPECT_FALSE((*results)[2].has_value());
  EXPECT_EQ((*results)[1]->status(), proto::MEASURE_RUN_ERROR);
  ASSERT_EQ((*results)[0]->times_s_size(), 2);
  EXPECT_DOUBLE_EQ((*results)[0]->times_s(1), 1e-3);

  // Without building ahead, no hints; a failing measurer is the error.
  asked.clear();
  round = 0;
  ASSERT_TRUE(
      MeasureBatchInRounds(task, batch, settings, 2, false, false, measure)
          .ok());
  for (const std::string& a : asked) EXPECT_EQ(a.back(), ':') << a;
  auto broken =
      [](const proto::MeasureRequest&) -> absl::StatusOr<proto::MeasureResult> {
    return absl::UnavailableError("no worker");
  };
  EXPECT_EQ(MeasureBatchInRounds(task, batch, settings, 2, false, true, broken)
                .status()
                .code(),
            absl::StatusCode::kUnavailable);
}

}  // namespace
}  // namespace lathe::tuner
