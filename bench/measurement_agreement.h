// How far a tuning run's labels belong to the programs rather than to the
// moment they were measured: batches the cost model was judged on
// (TuneReport::judged_batches), measured again after tuning, compared pair
// by pair with the labels and with the model's scores (bench_tune).
//
// Why: late in a run the search's batches can be programs within a fraction
// of a percent of each other (bench/README.md, "Why the code is as it is").
// No model orders such pairs more reliably than a second measurement does,
// so the model's accuracy on those batches means little without the
// measurement's agreement with itself beside it.
// Tests: tests/bench/measurement_agreement_test.cc.
#pragma once

#include <vector>

namespace lathe::bench {

struct RemeasuredBatch {
  std::vector<double> predicted;    // the model's scores, as it was judged
  std::vector<double> throughputs;  // the labels it was judged by
  // The same programs measured again (any unit where higher is faster);
  // <= 0: the program failed this time and is left out of every figure.
  std::vector<double> again;
};

struct Agreement {
  int batches = 0;  // batches with at least one pair compared
  // Means over those batches of the share of pairs in the same order:
  double label_vs_again = 0;  // the labels against the re-measurement
  double model_vs_label = 0;  // the model against the labels (its accuracy)
  double model_vs_again = 0;  // the model against the re-measurement
  // The share of all pairs compared whose labels differ by less than
  // `close` of the faster.
  double close_share = 0;
};

// Each share is tuner::PairwiseAccuracy with the second side named as the
// truth: pairs equal in it are left out, pairs tied in the first count half.
// Batches whose vectors differ in length, or with fewer than two programs
// measured again, are skipped.
Agreement MeasureAgreement(const std::vector<RemeasuredBatch>& batches,
                           double close = 0.01);

}  // namespace lathe::bench
