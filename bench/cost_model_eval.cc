// bench_cost_model: the cost model's pairwise accuracy on a tuning run's
// records, offline (bench/README.md, "bench_cost_model").
//
// Reads every record of one task from a database that `lathe tune` or
// bench_tune filled, rebuilds each record's program from its trace
// (BuildCandidate: the features the tuner saw), and replays the tuner's
// protocol in commit order: batches of --batch records, each predicted by a
// model trained on every earlier record (failures as throughput 0) before
// it is added. It prints the mean accuracy over the batches by how many rows
// their model had trained on, for several model configurations, and the
// same on a random 5-fold split (records the model has not trained on,
// drawn uniformly instead of picked by the search), and the model of the
// first 500 rows judged on all later rows at once. Pairs whose throughputs
// differ by less than --tolerance (relative) are also reported apart: the
// measurement cannot order them either.
//
//   bench_cost_model --db FILE --workload SPEC --target TARGET [--batch 32]
//                    [--tolerance 0.03] [--configs NAME,NAME] [--show-clashes]
//                    [--show-errors N] [--show-buckets] [--print-lowered
//                    RECORD_ID]
//                    [--label fastest|median|Q] [--judge fastest|median|Q]
//                    [--train-groups task|batch] [--drop-features PREFIX,...]
//                    [--split-seed N] [--self-select K] [--show-batches]
//                    [--judge-file FILE]
// --configs runs only the named configurations ("default", ...);
// --show-errors prints the N records whose held-out predicted rank (5-fold,
// default model) is furthest from their measured rank, to see what the
// features miss; --show-buckets the accuracy by how far apart the pair's
// throughputs are; --print-lowered a record's trace and lowered program.
// --label is the throughput the model trains on, --judge the one its
// predictions are judged by (default: the label): "fastest" repeat, as the
// tuner (tuner/search/training_label.h), "median", or a quantile Q of the
// repeats. --train-groups batch trains with one query group per batch
// (pairs only of programs measured together, so that contention over a
// whole batch cancels) instead of one per task. --drop-features zeroes
// every feature whose name starts with one of the prefixes (an ablation).
// --split-seed draws another random 5-fold split (default 1).
// --self-select K replays the search's choice instead (SelfSelect below):
// the model's own picks among later records, by one model and by K.
// --show-batches prints each online batch's accuracy. --judge-file judges
// the rows it names by other measurements: lines "ROW SECONDS" (ROW: the
// record's position in commit order, from 0), e.g. the fastest of several
// re-measurements spread over time (bench/README.md, "Why the code is as it
// is").
// Not a test: it reads a database a tuning run produced.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <map>
#include <memory>
#include <numeric>
#include <random>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "compiler/codegen/cpu_target.h"
#include "compiler/ir/printer.h"
#include "compiler/lower/pipeline.h"
#include "compiler/schedule/replay.h"
#include "compiler/schedule/trace.h"
#include "compiler/workload/spec.h"
#include "database/database.h"
#include "tuner/cost_model/cost_model.h"
#include "tuner/cost_model/xgb_cost_model.h"
#include "tuner/features/program_features.h"
#include "tuner/search/candidate.h"
#include "tuner/search/task.h"
#include "tuner/search/training_label.h"

namespace lathe {
namespace {

[[noreturn]] void Die(const std::string& message) {
  std::fprintf(stderr, "bench_cost_model: %s\n", message.c_str());
  std::exit(1);
}

// The seed of the random 5-fold split (--split-seed): another split tells
// how far the 5-fold figure moves by chance.
unsigned g_split_seed = 1;
bool g_show_batches = false;  // --show-batches

struct Row {
  std::vector<float> features;
  double throughput = 0;  // what the model trains on (--label)
  double judged = 0;      // what its predictions are judged by (--judge)
  int train_group = 0;    // its query group in training (--train-groups)
  int64_t record_id = 0;
  std::string decisions;  // the trace's, for --show-clashes
  std::string lowered_hash;
  Trace trace;  // the record's, to rebuild the program
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
      config("before: depth 6 100 rounds eta 0.2 every feature",
             [](Options& o) {
               o.max_depth = 6, o.num_rounds = 100, o.learning_rate = 0.2,
               o.colsample_bytree = 1;
             }),
      config("every feature per tree",
             [](Options& o) { o.colsample_bytree = 1; }),
      config("depth 3", [](Options& o) { o.max_depth = 3; }),
      config("depth 5", [](Options& o) { o.max_depth = 5; }),
      config("300 rounds eta 0.1",
             [](Options& o) { o.num_rounds = 300, o.learning_rate = 0.1; }),
      config("subsample 0.8", [](Options& o) { o.subsample = 0.8; }),
      config("bins 256", [](Options& o) { o.max_bin = 256; }),
      config("reg:squarederror",
             [](Options& o) { o.objective = "reg:squarederror"; }),
  };
}

// Buckets of pairs by how much slower the slower program is than the
// faster: the measurement's noise decides the first, the features the last.
constexpr double kBucketBounds[] = {0.05, 0.2, 0.5};
constexpr int kBuckets = 4;

struct Accuracy {
  double strict = 0;    // every pair of different throughputs
  double tolerant = 0;  // pairs within the tolerance left out
  // Summed over every judged set (not averaged): right and pairs by bucket.
  double right[kBuckets] = {};
  double pairs[kBuckets] = {};
};

void AddBuckets(const std::vector<double>& predicted,
                const std::vector<double>& throughputs, Accuracy* out) {
  for (size_t i = 0; i < predicted.size(); ++i) {
    for (size_t j = i + 1; j < predicted.size(); ++j) {
      const size_t fast = throughputs[i] >= throughputs[j] ? i : j;
      const size_t slow = fast == i ? j : i;
      if (!(throughputs[fast] > throughputs[slow])) continue;
      const double gap = 1 - throughputs[slow] / throughputs[fast];
      int b = 0;
      while (b < kBuckets - 1 && gap >= kBucketBounds[b]) ++b;
      out->pairs[b] += 1;
      out->right[b] += predicted[fast] > predicted[slow]   ? 1
                       : predicted[fast] < predicted[slow] ? 0
                                                           : 0.5;
    }
  }
}

void AddAccuracy(const Accuracy& a, double weight, Accuracy* sum) {
  sum->strict += a.strict * weight;
  sum->tolerant += a.tolerant * weight;
  for (int b = 0; b < kBuckets; ++b) {
    sum->right[b] += a.right[b];
    sum->pairs[b] += a.pairs[b];
  }
}

std::string BucketText(const Accuracy& a) {
  std::string out = " [by gap <5%/5-20%/20-50%/>50%:";
  for (int b = 0; b < kBuckets; ++b) {
    absl::StrAppend(&out, b ? "/" : " ",
                    a.pairs[b] > 0
                        ? absl::StrFormat("%.2f", a.right[b] / a.pairs[b])
                        : "-");
  }
  absl::StrAppend(&out, " of ");
  for (int b = 0; b < kBuckets; ++b)
    absl::StrAppend(&out, b ? "/" : "", a.pairs[b]);
  return out + "]";
}

// A model of `options` trained on rows `train`, judged on rows `test`.
Accuracy TrainAndJudge(const tuner::XgbCostModelOptions& options,
                       const std::vector<Row>& rows,
                       const std::vector<size_t>& train,
                       const std::vector<size_t>& test, double tolerance) {
  auto subset = [&](const std::vector<size_t>& which, bool judge) {
    tuner::TrainingSet set;
    for (size_t i : which) {
      set.features.push_back(rows[i].features);
      set.throughputs.push_back(judge ? rows[i].judged : rows[i].throughput);
      set.groups.push_back(judge ? 0 : rows[i].train_group);
    }
    return set;
  };
  tuner::XgbCostModel model(options);
  if (absl::Status s = model.Train(subset(train, false)); !s.ok())
    Die(std::string(s.message()));
  const tuner::TrainingSet judged = subset(test, true);
  absl::StatusOr<std::vector<double>> predicted =
      model.Predict(judged.features);
  if (!predicted.ok()) Die("prediction failed");
  Accuracy a;
  a.strict =
      tuner::PairwiseAccuracy(*predicted, judged.throughputs, judged.groups);
  a.tolerant = tuner::PairwiseAccuracy(*predicted, judged.throughputs,
                                       judged.groups, tolerance);
  AddBuckets(*predicted, judged.throughputs, &a);
  return a;
}

// GFLOP/s of a record by `how`: "fastest" (the fastest repeat, what the
// tuner trains on: tuner/search/training_label.h), "median" (the record's
// median) or a quantile of its repeats in [0, 1].
double Label(const tuner::Task& task, const proto::Record& record,
             const std::string& how) {
  if (how == "fastest") return tuner::TrainingThroughput(task.flops, record);
  if (record.status() != proto::MEASURE_OK || !(record.median_s() > 0))
    return 0;
  double seconds = record.median_s();
  if (how != "median") {
    double q = 0;
    if (!absl::SimpleAtod(how, &q) || q < 0 || q > 1)
      Die("--label/--judge: fastest, median or 0..1");
    std::vector<double> times(record.times_s().begin(), record.times_s().end());
    std::sort(times.begin(), times.end());
    if (!times.empty())
      seconds = times[static_cast<size_t>(
          q * static_cast<double>(times.size() - 1) + 0.5)];
  }
  return seconds > 0 ? static_cast<double>(task.flops) / seconds * 1e-9 : 0;
}

std::vector<size_t> Range(size_t begin, size_t end) {
  std::vector<size_t> out(end - begin);
  std::iota(out.begin(), out.end(), begin);
  return out;
}

void Evaluate(const Config& config, const std::vector<Row>& rows, int batch,
              double tolerance, bool buckets) {
  // Online, as the tuner: each batch judged by a model of every earlier row,
  // averaged in bands of trained rows.
  const std::vector<size_t> bands = {1, 128, 256, 500};
  std::map<size_t, std::pair<Accuracy, int>> sums;
  Accuracy late;  // every batch after 256 rows, for the buckets
  for (size_t start = static_cast<size_t>(batch); start < rows.size();
       start += batch) {
    const Accuracy a = TrainAndJudge(
        config.options, rows, Range(0, start),
        Range(start, std::min(rows.size(), start + batch)), tolerance);
    size_t band = 0;
    for (size_t b : bands) {
      if (start >= b) band = b;
    }
    AddAccuracy(a, 1, &sums[band].first);
    ++sums[band].second;
    if (g_show_batches) {
      std::printf("  batch of rows %zu-%zu: %.3f/%.3f\n", start,
                  std::min(rows.size(), start + batch) - 1, a.strict,
                  a.tolerant);
    }
    if (start >= 256) AddAccuracy(a, 1, &late);
  }
  std::printf("%-28s online:", config.name.c_str());
  for (size_t b : bands) {
    const auto& [sum, n] = sums[b];
    std::printf("  %4zu+: %.3f/%.3f (%d)", b, n ? sum.strict / n : std::nan(""),
                n ? sum.tolerant / n : std::nan(""), n);
  }
  // Random 5-fold split of every record.
  std::vector<size_t> order = Range(0, rows.size());
  std::mt19937 rng(g_split_seed);
  std::shuffle(order.begin(), order.end(), rng);
  Accuracy cv;
  for (size_t fold = 0; fold < 5; ++fold) {
    std::vector<size_t> train, test;
    for (size_t i = 0; i < order.size(); ++i)
      (i % 5 == fold ? test : train).push_back(order[i]);
    AddAccuracy(TrainAndJudge(config.options, rows, train, test, tolerance),
                0.2, &cv);
  }
  std::printf("   5-fold: %.3f/%.3f", cv.strict, cv.tolerant);
  // The model as it stands after the first 500 rows, judged on every row
  // measured after them at once: records it has not trained on, picked by
  // the search, with pairs across batches (the online figure pairs only
  // programs of one batch, which the search picked as close to each other).
  constexpr size_t kForward = 500;
  if (rows.size() > kForward) {
    const Accuracy next =
        TrainAndJudge(config.options, rows, Range(0, kForward),
                      Range(kForward, rows.size()), tolerance);
    std::printf("   first 500 -> the rest: %.3f/%.3f (%zu rows)", next.strict,
                next.tolerant, rows.size() - kForward);
  }
  std::printf("\n");
  if (buckets) {
    std::printf("  online 256+:%s\n", BucketText(late).c_str());
    std::printf("  5-fold:     %s\n", BucketText(cv).c_str());
  }
}

// Why the search's own batches score lower than random held-out records:
// the search measures the programs its model predicts best, so a batch is
// rich in programs the model overrates. Replayed on the run's records: from
// 500 rows on, every 64 rows, the model of the earlier rows picks the
// `batch` best-predicted of the later rows, and is judged on its pick. With
// `ensemble` > 1 the prediction is the mean of that many models, each
// trained on a bootstrap sample of the rows (a guess at what would make the
// picks less overrated).
void SelfSelect(const Config& config, const std::vector<Row>& rows, int batch,
                double tolerance, int ensemble) {
  Accuracy sum;
  int picks = 0;
  std::mt19937 rng(g_split_seed);
  for (size_t start = 500; start + static_cast<size_t>(batch) <= rows.size();
       start += 64) {
    const std::vector<size_t> pool = Range(start, rows.size());
    tuner::TrainingSet candidates;
    for (size_t i : pool) candidates.features.push_back(rows[i].features);
    std::vector<double> mean(pool.size(), 0);
    for (int k = 0; k < ensemble; ++k) {
      tuner::TrainingSet train;
      for (size_t n = 0; n < start; ++n) {
        const size_t i = ensemble == 1 ? n
                                       : std::uniform_int_distribution<size_t>(
                                             0, start - 1)(rng);
        train.features.push_back(rows[i].features);
        train.throughputs.push_back(rows[i].throughput);
        train.groups.push_back(rows[i].train_group);
      }
      tuner::XgbCostModelOptions options = config.options;
      options.seed = static_cast<uint64_t>(k);
      tuner::XgbCostModel model(options);
      if (absl::Status s = model.Train(train); !s.ok())
        Die(std::string(s.message()));
      absl::StatusOr<std::vector<double>> predicted =
          model.Predict(candidates.features);
      if (!predicted.ok()) Die("prediction failed");
      // Ranks, not scores: a pairwise model's scores have no common scale.
      std::vector<size_t> order = Range(0, pool.size());
      std::sort(order.begin(), order.end(), [&](size_t a, size_t b) {
        return (*predicted)[a] < (*predicted)[b];
      });
      for (size_t r = 0; r < order.size(); ++r)
        mean[order[r]] += static_cast<double>(r);
    }
    std::vector<size_t> order = Range(0, pool.size());
    std::sort(order.begin(), order.end(),
              [&](size_t a, size_t b) { return mean[a] > mean[b]; });
    std::vector<double> predicted, judged;
    for (int k = 0; k < batch; ++k) {
      predicted.push_back(mean[order[static_cast<size_t>(k)]]);
      judged.push_back(rows[pool[order[static_cast<size_t>(k)]]].judged);
    }
    const std::vector<int> groups(predicted.size(), 0);
    Accuracy a;
    a.strict = tuner::PairwiseAccuracy(predicted, judged, groups);
    a.tolerant = tuner::PairwiseAccuracy(predicted, judged, groups, tolerance);
    AddAccuracy(a, 1, &sum);
    ++picks;
  }
  if (picks == 0) return;
  std::printf(
      "%-28s self-selected batches after 500 rows, ensemble of %d: %.3f/%.3f "
      "(%d)\n",
      config.name.c_str(), ensemble, sum.strict / picks, sum.tolerant / picks,
      picks);
}

// The records whose held-out predicted rank is furthest from their measured
// rank: each record is scored by the default model of the 5-fold split that
// did not train on it, and ranks are percentiles within its fold.
void ShowErrors(const std::vector<Row>& rows, int count) {
  std::vector<size_t> order = Range(0, rows.size());
  std::mt19937 rng(g_split_seed);
  std::shuffle(order.begin(), order.end(), rng);
  std::vector<double> measured_rank(rows.size()), predicted_rank(rows.size());
  for (size_t fold = 0; fold < 5; ++fold) {
    std::vector<size_t> train, test;
    for (size_t i = 0; i < order.size(); ++i)
      (i % 5 == fold ? test : train).push_back(order[i]);
    tuner::TrainingSet set;
    for (size_t i : train) {
      set.features.push_back(rows[i].features);
      set.throughputs.push_back(rows[i].throughput);
      set.groups.push_back(rows[i].train_group);
    }
    tuner::XgbCostModel model;
    if (absl::Status s = model.Train(set); !s.ok())
      Die(std::string(s.message()));
    std::vector<std::vector<float>> judged;
    for (size_t i : test) judged.push_back(rows[i].features);
    absl::StatusOr<std::vector<double>> predicted = model.Predict(judged);
    if (!predicted.ok()) Die("prediction failed");
    auto percentile = [&](auto value, std::vector<double>* out) {
      std::vector<size_t> by = Range(0, test.size());
      std::stable_sort(by.begin(), by.end(),
                       [&](size_t a, size_t b) { return value(a) < value(b); });
      for (size_t r = 0; r < by.size(); ++r) {
        (*out)[test[by[r]]] =
            static_cast<double>(r) / static_cast<double>(by.size() - 1);
      }
    };
    percentile([&](size_t k) { return rows[test[k]].judged; }, &measured_rank);
    percentile([&](size_t k) { return (*predicted)[k]; }, &predicted_rank);
  }
  std::vector<size_t> worst = Range(0, rows.size());
  std::stable_sort(worst.begin(), worst.end(), [&](size_t a, size_t b) {
    return std::fabs(predicted_rank[a] - measured_rank[a]) >
           std::fabs(predicted_rank[b] - measured_rank[b]);
  });
  std::printf(
      "held-out rank errors (rank percentile in the fold, measured -> "
      "predicted):\n");
  for (int k = 0; k < count && k < static_cast<int>(worst.size()); ++k) {
    const Row& row = rows[worst[static_cast<size_t>(k)]];
    std::printf("  record %lld, %.1f GFLOP/s, rank %.2f -> %.2f: %s\n",
                static_cast<long long>(row.record_id), row.throughput,
                measured_rank[worst[static_cast<size_t>(k)]],
                predicted_rank[worst[static_cast<size_t>(k)]],
                row.decisions.c_str());
  }
}

int Main(int argc, char** argv) {
  std::string db_path, spec, target_text = "host";
  int batch = 32;
  double tolerance = 0.03;
  bool show_clashes = false;
  int show_errors = 0;
  bool show_buckets = false;
  int self_select = 0;
  std::vector<int64_t> print_lowered;
  std::vector<std::string> config_names;
  std::string label = "fastest", judge = "", train_groups = "task", judge_file;
  std::vector<std::string> drop_prefixes;
  for (int i = 1; i < argc; ++i) {
    const std::string flag = argv[i];
    if (flag == "--show-clashes") {
      show_clashes = true;
      continue;
    }
    if (flag == "--show-buckets") {
      show_buckets = true;
      continue;
    }
    if (flag == "--show-batches") {
      g_show_batches = true;
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
      if (!absl::SimpleAtoi(value, &batch) || batch < 2)
        Die("--batch: a count >= 2");
    } else if (flag == "--split-seed") {
      if (!absl::SimpleAtoi(value, &g_split_seed))
        Die("--split-seed: a number");
    } else if (flag == "--drop-features") {
      drop_prefixes = absl::StrSplit(value, ',');
    } else if (flag == "--train-groups") {
      train_groups = value;
      if (value != "task" && value != "batch")
        Die("--train-groups: task or batch");
    } else if (flag == "--label") {
      label = value;
    } else if (flag == "--judge") {
      judge = value;
    } else if (flag == "--judge-file") {
      judge_file = value;
    } else if (flag == "--configs") {
      config_names = absl::StrSplit(value, ',');
    } else if (flag == "--show-errors") {
      if (!absl::SimpleAtoi(value, &show_errors) || show_errors < 0)
        Die("--show-errors: a count");
    } else if (flag == "--print-lowered") {
      int64_t id = 0;
      if (!absl::SimpleAtoi(value, &id)) Die("--print-lowered: a record id");
      print_lowered.push_back(id);
    } else if (flag == "--self-select") {
      if (!absl::SimpleAtoi(value, &self_select) || self_select < 1)
        Die("--self-select: a count");
    } else if (flag == "--tolerance") {
      if (!absl::SimpleAtod(value, &tolerance) || tolerance < 0)
        Die("--tolerance: >= 0");
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
  absl::StatusOr<std::unique_ptr<db::Database>> db =
      db::Database::Open(db_path, open);
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
    row.trace = *trace;
    row.features = std::move(candidate->features);
    row.record_id = record.id();
    row.lowered_hash = candidate->lowered_hash;
    for (const auto& [instruction, values] : trace->decisions) {
      absl::StrAppend(&row.decisions, instruction, ":",
                      absl::StrJoin(values, ","), " ");
    }
    row.throughput = Label(*task, record, label);
    row.judged = Label(*task, record, judge.empty() ? label : judge);
    row.train_group =
        train_groups == "batch" ? static_cast<int>(rows.size()) / batch : 0;
    rows.push_back(std::move(row));
  }
  if (!judge_file.empty()) {
    std::ifstream in(judge_file);
    if (!in) Die("--judge-file: cannot read " + judge_file);
    size_t index = 0, judged = 0;
    double seconds = 0;
    while (in >> index >> seconds) {
      if (index >= rows.size() || !(seconds > 0))
        Die("--judge-file: bad line " + std::to_string(index));
      rows[index].judged = static_cast<double>(task->flops) / seconds * 1e-9;
      ++judged;
    }
    std::printf("%zu rows judged by %s\n", judged, judge_file.c_str());
  }
  std::printf(
      "%zu records of %s (%d skipped: no longer replay); batches of %d; "
      "accuracy strict/within-%.0f%%-excluded (batches)\n",
      rows.size(), spec.c_str(), skipped, batch, tolerance * 100);
  if (rows.size() < static_cast<size_t>(2 * batch)) Die("too few records");
  if (!drop_prefixes.empty()) {
    const std::vector<std::string>& names = tuner::FeatureNames();
    int dropped = 0;
    for (size_t f = 0; f < names.size(); ++f) {
      bool drop = false;
      for (const std::string& prefix : drop_prefixes) {
        drop = drop || absl::StartsWith(names[f], prefix);
      }
      if (!drop) continue;
      ++dropped;
      for (Row& row : rows) row.features[f] = 0;
    }
    std::printf("%d features zeroed (--drop-features)\n", dropped);
  }

  {
    // What the search pays per candidate for its features, apart from the
    // replay and the lowering it needs anyway.
    double extract_s = 0;
    for (const Row& row : rows) {
      absl::StatusOr<std::unique_ptr<TracedSchedule>> scheduled =
          ReplayTrace(row.trace, task->initial, row.trace.decisions, 0);
      if (!scheduled.ok()) Die("replay failed");
      absl::StatusOr<Program> lowered = LowerProgram((*scheduled)->program());
      if (!lowered.ok()) Die("lowering failed");
      const auto start = std::chrono::steady_clock::now();
      const std::vector<float> features =
          tuner::ExtractProgramFeatures(*lowered, task->target);
      extract_s += std::chrono::duration<double>(
                       std::chrono::steady_clock::now() - start)
                       .count();
      if (drop_prefixes.empty() && features != row.features) {
        Die("features differ between two extractions");
      }
      for (int64_t id : print_lowered) {
        if (id == row.record_id) {
          std::printf("record %lld (%.1f GFLOP/s), trace:\n%s\nlowered:\n%s\n",
                      static_cast<long long>(id), row.throughput,
                      row.trace.ToText().c_str(),
                      PrintProgram(*lowered).c_str());
        }
      }
    }
    std::printf(
        "%zu features per program; feature extraction %.1f us per program\n",
        rows[0].features.size(),
        extract_s / static_cast<double>(rows.size()) * 1e6);
  }

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
    std::printf("%zu distinct lowered programs among %zu records\n",
                lowered.size(), rows.size());
    std::printf(
        "%zu distinct feature rows (%zu records share theirs); training-set "
        "accuracy "
        "of the default model %.3f\n",
        same.size(), shared,
        TrainAndJudge({}, rows, Range(0, rows.size()), Range(0, rows.size()), 0)
            .strict);
  }
  if (show_errors > 0) ShowErrors(rows, show_errors);
  for (const Config& config : Configs()) {
    if (!config_names.empty() &&
        std::find(config_names.begin(), config_names.end(), config.name) ==
            config_names.end()) {
      continue;
    }
    if (self_select > 0) {
      SelfSelect(config, rows, batch, tolerance, 1);
      if (self_select > 1)
        SelfSelect(config, rows, batch, tolerance, self_select);
      continue;
    }
    Evaluate(config, rows, batch, tolerance, show_buckets);
  }
  return 0;
}

}  // namespace
}  // namespace lathe

int main(int argc, char** argv) { return lathe::Main(argc, argv); }
