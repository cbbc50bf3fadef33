#include "bench/measurement_agreement.h"

#include <algorithm>
#include <cmath>
#include <cstddef>

#include "tuner/cost_model/cost_model.h"

namespace lathe::bench {

Agreement MeasureAgreement(const std::vector<RemeasuredBatch>& batches,
                           double close) {
  Agreement sum;
  size_t pairs = 0, close_pairs = 0;
  for (const RemeasuredBatch& batch : batches) {
    const size_t n = batch.predicted.size();
    if (batch.throughputs.size() != n || batch.again.size() != n) continue;
    std::vector<double> predicted, labels, again;
    for (size_t i = 0; i < n; ++i) {
      if (!(batch.again[i] > 0)) continue;
      predicted.push_back(batch.predicted[i]);
      labels.push_back(batch.throughputs[i]);
      again.push_back(batch.again[i]);
    }
    if (labels.size() < 2) continue;
    const std::vector<int> one_task(labels.size(), 0);
    ++sum.batches;
    sum.label_vs_again += tuner::PairwiseAccuracy(again, labels, one_task);
    sum.model_vs_label += tuner::PairwiseAccuracy(predicted, labels, one_task);
    sum.model_vs_again += tuner::PairwiseAccuracy(predicted, again, one_task);
    for (size_t i = 0; i < labels.size(); ++i) {
      for (size_t j = i + 1; j < labels.size(); ++j) {
        ++pairs;
        const double faster = std::max(labels[i], labels[j]);
        if (std::abs(labels[i] - labels[j]) < close * faster) ++close_pairs;
      }
    }
  }
  if (sum.batches > 0) {
    sum.label_vs_again /= sum.batches;
    sum.model_vs_label /= sum.batches;
    sum.model_vs_again /= sum.batches;
    sum.close_share =
        static_cast<double>(close_pairs) / static_cast<double>(pairs);
  }
  return sum;
}

}  // namespace lathe::bench
