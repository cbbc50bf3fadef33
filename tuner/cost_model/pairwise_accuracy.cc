// PairwiseAccuracy (declared in cost_model.h): the share of same-task pairs
// that the predicted scores order like the measured throughputs.
// Tests: tests/tuner/cost_model/pairwise_accuracy_test.cc.
#include <cstddef>
#include <map>
#include <vector>

#include "base/check.h"
#include "tuner/cost_model/cost_model.h"

namespace lathe::tuner {

double PairwiseAccuracy(const std::vector<double>& predicted,
                        const std::vector<double>& throughputs,
                        const std::vector<int>& groups, double tolerance) {
  LATHE_CHECK(predicted.size() == throughputs.size() &&
                  predicted.size() == groups.size(),
              "pairwise accuracy: ", predicted.size(), " predictions, ",
              throughputs.size(), " throughputs and ", groups.size(),
              " groups must be as many");
  // An ordered map, so that the sum below is accumulated in the same order
  // every run (the result is then bit-for-bit reproducible).
  std::map<int, std::vector<size_t>> rows_of_group;
  for (size_t i = 0; i < groups.size(); ++i) {
    rows_of_group[groups[i]].push_back(i);
  }

  // Quadratic in the size of a task, which is fine for a metric over a few
  // thousand measured programs per task. A pair the model scores equal counts
  // half right, as a coin flip would order it: an untrained model (all
  // scores 0) gets exactly 0.5. NaN scores compare neither way and count as
  // ties too, so the result is never NaN.
  double right = 0;
  size_t pairs = 0;
  for (const auto& [group, rows] : rows_of_group) {
    for (size_t a = 0; a < rows.size(); ++a) {
      for (size_t b = a + 1; b < rows.size(); ++b) {
        const size_t i = rows[a];
        const size_t j = rows[b];
        // Equal throughputs (or, with a tolerance, close ones) say nothing
        // about which program is faster.
        if (!(throughputs[i] < throughputs[j]) &&
            !(throughputs[j] < throughputs[i])) {
          continue;
        }
        const size_t fast = throughputs[i] > throughputs[j] ? i : j;
        const size_t slow = fast == i ? j : i;
        if (throughputs[fast] - throughputs[slow] <=
            tolerance * throughputs[fast])
          continue;
        ++pairs;
        if (predicted[fast] > predicted[slow]) {
          right += 1;
        } else if (!(predicted[fast] < predicted[slow])) {
          right += 0.5;
        }
      }
    }
  }
  return pairs == 0 ? 0.5 : right / static_cast<double>(pairs);
}

}  // namespace lathe::tuner
