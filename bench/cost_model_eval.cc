// bench_cost_model: the cost model's pairwise accuracy on a tuning run's
// records, offline (bench/README.md, "Cost model").
//
// Reads every record of one task from a database that `lathe tune` or
// bench_tune filled, rebuilds each record's program from its trace
// (BuildCandidate: the features the tuner saw), and replays the tuner's
// protocol in commit order: batches of --batch records, each predicted by a
// model trained on every earlier record (failures as throughput 0) before
// it is added. It prints the mean accuracy over the batches by how many rows
// their model had trained on, for several model configurations, and the
// same on a random 5-fold split (records the model has not trained on,
// drawn uniformly instead of picked by the search). Pairs whose throughputs
// differ by less than --tolerance (relative) are also reported apart: the
// measurement cannot order them either.
//
//   bench_cost_model --db FILE --workload SPEC --target TARGET [--batch 32]
//                    [--tolerance 0.03] [--show-clashes]
// Not a test: it reads a database a tuning run produced.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <memory>
#include <numeric>
#include <random>
#include <string>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "compiler/codegen/target.h"
#include "compiler/schedule/trace.h"
#include "compiler/workload/spec.h"
#include "database/database.h"
#include "tuner/cost_model/cost_model.h"
#include "tuner/cost_model/xgb_cost_model.h"
#include "tuner/search/candidate.h"
#include "tuner/search/task.h"

namespace lathe {
namespace {

[[noreturn]] void Die(const std::string& message) {
  std::fprintf(stderr, "bench_cost_model: %s\n", message.c_str());
  std::exit(1);
}

struct Row {
  std::vector<float> features;
  double throughput = 0;
  int64_t record_id = 0;
  std::string decisions;  // the trace's, for --show-clashes
  std::string lowered_hash;
};

struct Config {
  std::string name;
  tuner::XgbCostModelOptions options;
};

std::vector<Config> Configs() {
  using Options = tuner::XgbCostModelOptions;
  auto config = [](std::string name, void (*set)(Options&)) {
    Config c{std::move(name), {}};
    set(c.options);
    return c;
  };
  return {
      config("default", [](Options&) {}),
      config("rounds 300 eta 0.1", [](Options& o) { o.num_rounds = 300, o.learning_rate = 0.1; }),
      config("depth 4", [](Options& o) { o.max_depth = 4; }),
      config("depth 10 min_child 2", [](Options& o) { o.max_depth = 10, o.min_child_weight = 2; }),
      config("bins 256", [](Options& o) { o.max_bin = 256; }),
      config("rounds 50 eta 0.3", [](Options& o) { o.num_rounds = 50, o.learning_rate = 0.3; }),
      config("reg:squarederror", [](Options& o) { o.objective = "reg:squarederror"; }),
      config("rank:ndcg", [](Options& o) { o.objective = "rank:ndcg"; }),
  };
}

struct Accuracy {
  double strict = 0;    // every pair of different throughputs
  double tolerant = 0;  // pairs within the tolerance left out
};

// A model of `options` trained on rows `train`, judged on rows `test`.
Accuracy TrainAndJudge(const tuner::XgbCostModelOptions& options, const std::vector<Row>& rows,
                       const std::vector<size_t>& train, const std::vector<size_t>& test,
                       double tolerance) {
  auto subset = [&](const std::vector<size_t>& which) {
    tuner::TrainingSet set;
    for (size_t i : which) {
      set.features.push_back(rows[i].features);
      set.throughputs.push_back(rows[i].throughput);
      set.groups.push_back(0);
    }
    return set;
  };
  tuner::XgbCostModel model(options);
  if (!model.Train(subset(train)).ok()) Die("training failed");
  const tuner::TrainingSet judged = subset(test);
  absl::StatusOr<std::vector<double>> predicted = model.Predict(judged.features);
  if (!predicted.ok()) Die("prediction failed");
  return {tuner::PairwiseAccuracy(*predicted, judged.throughputs, judged.groups),
          tuner::PairwiseAccuracy(*predicted, judged.throughputs, judged.groups, tolerance)};
}

std::vector<size_t> Range(size_t begin, size_t end) {
  std::vector<size_t> out(end - begin);
  std::iota(out.begin(), out.end(), begin);
  return out;
}

void Evaluate(const Config& config, const std::vector<Row>& rows, int batch, double tolerance) {
  // Online, as the tuner: each batch judged by a model of every earlier row,
  // averaged in bands of trained rows.
  const std::vector<size_t> bands = {1, 128, 256, 500};
  std::map<size_t, std::pair<Accuracy, int>> sums;
  for (size_t start = static_cast<size_t>(batch); start < rows.size(); start += batch) {
    const Accuracy a =
        TrainAndJudge(config.options, rows, Range(0, start),
                      Range(start, std::min(rows.size(), start + batch)), tolerance);
    size_t band = 0;
    for (size_t b : bands) {
      if (start >= b) band = b;
    }
    sums[band].first.strict += a.strict;
    sums[band].first.tolerant += a.tolerant;
    ++sums[band].second;
  }
  std::printf("%-28s online:", config.name.c_str());
  for (size_t b : bands) {
    const auto& [sum, n] = sums[b];
    std::printf("  %4zu+: %.3f/%.3f (%d)", b, n ? sum.strict / n : std::nan(""),
                n ? sum.tolerant / n : std::nan(""), n);
  }
  // Random 5-fold split of every record.
  std::vector<size_t> order = Range(0, rows.size());
  std::mt19937 rng(1);
  std::shuffle(order.begin(), order.end(), rng);
  Accuracy cv;
  for (size_t fold = 0; fold < 5; ++fold) {
    std::vector<size_t> train, test;
    for (size_t i = 0; i < order.size(); ++i) (i % 5 == fold ? test : train).push_back(order[i]);
    const Accuracy a = TrainAndJudge(config.options, rows, train, test, tolerance);
    cv.strict += a.strict / 5;
    cv.tolerant += a.tolerant / 5;
  }
  std::printf("   5-fold: %.3f/%.3f\n", cv.strict, cv.tolerant);
}

int Main(int argc, char** argv) {
  std::string db_path, spec, target_text = "host";
  int batch = 32;
  double tolerance = 0.03;
  bool show_clashes = false;
  for (int i = 1; i < argc; ++i) {
    const std::string flag = argv[i];
    if (flag == "--show-clashes") {
      show_clashes = true;
      continue;
    }
    if (i + 1 >= argc) Die(flag + " needs a value");
    const std::string value = argv[++i];
    if (flag == "--db") {
      db_path = value;
    } else if (flag == "--workload") {
      spec = value;
    } else if (flag == "--target") {
      target_text = value;
    } else if (flag == "--batch") {
      if (!absl::SimpleAtoi(value, &batch) || batch < 2) Die("--batch: a count >= 2");
    } else if (flag == "--tolerance") {
      if (!absl::SimpleAtod(value, &tolerance) || tolerance < 0) Die("--tolerance: >= 0");
    } else {
      Die("unknown flag " + flag);
    }
  }
  if (db_path.empty() || spec.empty()) Die("--db and --workload are required");
  absl::StatusOr<Workload> workload = ParseWorkloadSpec(spec);
  if (!workload.ok()) Die(std::string(workload.status().message()));
  absl::StatusOr<Target> target = ParseTarget(target_text);
  if (!target.ok()) Die(std::string(target.status().message()));
  absl::StatusOr<tuner::Task> task = tuner::MakeTask(*workload, *target, 1);
  if (!task.ok()) Die(std::string(task.status().message()));
  db::OpenOptions open;
  open.mode = db::OpenOptions::Mode::kReadOnly;
  absl::StatusOr<std::unique_ptr<db::Database>> db = db::Database::Open(db_path, open);
  if (!db.ok()) Die(std::string(db.status().message()));
  absl::StatusOr<std::vector<proto::Record>> records =
      (*db)->RecordsOfTask(task->key, task->target.ToString());
  if (!records.ok()) Die(std::string(records.status().message()));

  std::vector<Row> rows;
  int skipped = 0;
  for (const proto::Record& record : *records) {
    absl::StatusOr<Trace> trace = Trace::FromProto(record.trace());
    if (!trace.ok()) {
      ++skipped;
      continue;
    }
    absl::StatusOr<tuner::Candidate> candidate =
        tuner::BuildCandidate(*task, -1, *trace, trace->decisions, 0);
    if (!candidate.ok()) {
      ++skipped;
      continue;
    }
    Row row;
    row.features = std::move(candidate->features);
    row.record_id = record.id();
    row.lowered_hash = candidate->lowered_hash;
    for (const auto& [instruction, values] : trace->decisions) {
      absl::StrAppend(&row.decisions, instruction, ":", absl::StrJoin(values, ","), " ");
    }
    row.throughput = record.status() == proto::MEASURE_OK && record.median_s() > 0
                         ? static_cast<double>(task->flops) / record.median_s() * 1e-9
                         : 0;
    rows.push_back(std::move(row));
  }
  std::printf("%zu records of %s (%d skipped: no longer replay); batches of %d; "
              "accuracy strict/within-%.0f%%-excluded (batches)\n",
              rows.size(), spec.c_str(), skipped, batch, tolerance * 100);
  if (rows.size() < static_cast<size_t>(2 * batch)) Die("too few records");

  {
    // Programs the features cannot tell apart put a ceiling on any model.
    std::map<std::vector<float>, std::vector<const Row*>> same;
    for (const Row& row : rows) same[row.features].push_back(&row);
    size_t shared = 0;
    int shown = 0;
    for (const auto& [features, group] : same) {
      if (group.size() < 2) continue;
      shared += group.size();
      if (show_clashes && shown++ < 5) {
        std::printf("same features:\n");
        for (const Row* row : group) {
          std::printf("  record %lld, %.1f GFLOP/s, %s: %s\n",
                      static_cast<long long>(row->record_id), row->throughput,
                      row->lowered_hash.c_str(), row->decisions.c_str());
        }
      }
    }
    std::map<std::string, int> lowered;
    for (const Row& row : rows) ++lowered[row.lowered_hash];
    std::printf("%zu distinct lowered programs among %zu records\n", lowered.size(), rows.size());
    std::printf("%zu distinct feature rows (%zu records share theirs); training-set accuracy "
                "of the default model %.3f\n",
                same.size(), shared,
                TrainAndJudge({}, rows, Range(0, rows.size()), Range(0, rows.size()), 0).strict);
  }
  for (const Config& config : Configs()) Evaluate(config, rows, batch, tolerance);
  return 0;
}

}  // namespace
}  // namespace lathe

int main(int argc, char** argv) { return lathe::Main(argc, argv); }
