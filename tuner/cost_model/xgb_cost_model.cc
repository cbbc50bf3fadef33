#include "tuner/cost_model/xgb_cost_model.h"

#include <xgboost/c_api.h>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <limits>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/string_view.h"
#include "base/status_macros.h"
#include "compiler/ir/structural_equal.h"

namespace lathe::tuner {
namespace {

// Save's output is a line "lathe-xgb 2 LENGTH HASH" and XGBoost's bytes:
// LENGTH of them, whose StableHash64 is HASH (hex). Load checks both before
// XGBoost's parser sees the bytes, because that parser trusts them: it
// accepted a model cut in half, reading past its end. Version 1 (the line
// "lathe-xgb 1" alone) is refused like any other bytes; a saved model is
// only a cache of what the records train.
constexpr absl::string_view kSaveMagic = "lathe-xgb 2 ";

// XGBoost reports failure as -1 and keeps the message per thread.
absl::Status XgbStatus(int rc, const char* call) {
  if (rc == 0) return absl::OkStatus();
  return absl::InternalError(
      absl::StrCat("xgboost: ", call, " failed: ", XGBGetLastError()));
}
#define LATHE_XGB_CALL(call, ...) \
  LATHE_RETURN_IF_ERROR(XgbStatus(call(__VA_ARGS__), #call))

struct DMatrixFree {
  void operator()(void* matrix) const { XGDMatrixFree(matrix); }
};
using DMatrixPtr = std::unique_ptr<void, DMatrixFree>;

// The rows in row-major order, after checking that they form a matrix of
// finite-or-missing numbers. `want_columns` < 0: any width.
absl::StatusOr<std::vector<float>> Flatten(
    const std::vector<std::vector<float>>& rows,
    const std::vector<size_t>& order, int want_columns, const char* what) {
  const size_t columns = rows[order[0]].size();
  if (want_columns >= 0 && columns != static_cast<size_t>(want_columns)) {
    return absl::InvalidArgumentError(
        absl::StrCat(what, ": rows have ", columns,
                     " features but the model was trained on ", want_columns));
  }
  if (columns == 0) {
    return absl::InvalidArgumentError(
        absl::StrCat(what, ": rows have no features"));
  }
  std::vector<float> flat;
  flat.reserve(rows.size() * columns);
  for (size_t r : order) {
    const std::vector<float>& row = rows[r];
    if (row.size() != columns) {
      return absl::InvalidArgumentError(
          absl::StrCat(what, ": row ", r, " has ", row.size(),
                       " features, row ", order[0], " has ", columns));
    }
    for (size_t c = 0; c < columns; ++c) {
      if (std::isinf(row[c])) {
        return absl::InvalidArgumentError(
            absl::StrCat(what, ": feature ", c, " of row ", r, " is infinite"));
      }
    }
    flat.insert(flat.end(), row.begin(), row.end());
  }
  return flat;
}

absl::StatusOr<DMatrixPtr> MakeDMatrix(const std::vector<float>& flat,
                                       size_t rows, size_t columns) {
  DMatrixHandle handle = nullptr;
  // NaN marks a missing feature, as XGBoost expects by default.
  LATHE_XGB_CALL(XGDMatrixCreateFromMat, flat.data(), rows, columns,
                 std::numeric_limits<float>::quiet_NaN(), &handle);
  return DMatrixPtr(handle);
}

absl::Status SetParams(
    BoosterHandle booster,
    const std::vector<std::pair<std::string, std::string>>& params) {
  for (const auto& [name, value] : params) {
    absl::Status status =
        XgbStatus(XGBoosterSetParam(booster, name.c_str(), value.c_str()),
                  "XGBoosterSetParam");
    if (!status.ok()) {
      return absl::Status(status.code(), absl::StrCat(status.message(), " (",
                                                      name, "=", value, ")"));
    }
  }
  return absl::OkStatus();
}

// Parameters that matter when predicting too (they are not part of the saved
// model, so a loaded booster needs them again).
std::vector<std::pair<std::string, std::string>> RuntimeParams(
    const XgbCostModelOptions& options) {
  return {{"nthread", absl::StrCat(options.num_threads)}, {"verbosity", "0"}};
}

}  // namespace

void XgbCostModel::BoosterFree::operator()(void* booster) const {
  XGBoosterFree(booster);
}

XgbCostModel::XgbCostModel(XgbCostModelOptions options) : options_(options) {}
XgbCostModel::~XgbCostModel() = default;
XgbCostModel::XgbCostModel(XgbCostModel&&) noexcept = default;
XgbCostModel& XgbCostModel::operator=(XgbCostModel&&) noexcept = default;

absl::Status XgbCostModel::Train(const TrainingSet& data) {
  // 1. Check the set.
  const size_t n = data.features.size();
  if (n == 0) {
    return absl::InvalidArgumentError("cost model: training set has no rows");
  }
  if (data.throughputs.size() != n || data.groups.size() != n) {
    return absl::InvalidArgumentError(
        absl::StrCat("cost model: training set has ", n, " feature rows, ",
                     data.throughputs.size(), " throughputs and ",
                     data.groups.size(), " groups"));
  }
  for (size_t i = 0; i < n; ++i) {
    if (!(data.throughputs[i] >= 0) || std::isinf(data.throughputs[i])) {
      return absl::InvalidArgumentError(absl::StrCat(
          "cost model: throughput of row ", i, " is ", data.throughputs[i],
          "; must be finite and >= 0 (0 for failures)"));
    }
  }

  // 2. XGBoost takes groups as sizes of consecutive runs of rows, so order
  // the rows by group (stably: the order inside a group is the caller's, and
  // the same input gives the same matrix).
  std::map<int, std::vector<size_t>> rows_of_group;
  for (size_t i = 0; i < n; ++i) rows_of_group[data.groups[i]].push_back(i);
  std::vector<size_t> order;
  order.reserve(n);
  std::vector<unsigned> group_sizes;
  std::vector<float> labels;
  labels.reserve(n);
  for (const auto& [group, rows] : rows_of_group) {
    group_sizes.push_back(static_cast<unsigned>(rows.size()));
    double best = 0;
    for (size_t r : rows) best = std::max(best, data.throughputs[r]);
    for (size_t r : rows) {
      order.push_back(r);
      labels.push_back(best > 0 ? static_cast<float>(data.throughputs[r] / best)
                                : 0.0f);
    }
  }
  LATHE_ASSIGN_OR_RETURN(std::vector<float> flat,
                         Flatten(data.features, order, /*want_columns=*/-1,
                                 "cost model: training set"));
  const size_t columns = flat.size() / n;

  // 3. The training matrix with its labels and groups.
  LATHE_ASSIGN_OR_RETURN(DMatrixPtr train, MakeDMatrix(flat, n, columns));
  LATHE_XGB_CALL(XGDMatrixSetFloatInfo, train.get(), "label", labels.data(), n);
  LATHE_XGB_CALL(XGDMatrixSetUIntInfo, train.get(), "group", group_sizes.data(),
                 group_sizes.size());

  // 4. A fresh booster (retraining sees the whole set, never a delta).
  BoosterHandle handle = nullptr;
  DMatrixHandle cache[] = {train.get()};
  LATHE_XGB_CALL(XGBoosterCreate, cache, 1, &handle);
  BoosterPtr booster(handle);
  std::vector<std::pair<std::string, std::string>> params =
      RuntimeParams(options_);
  params.insert(
      params.end(),
      {
          {"objective", options_.objective},
          {"tree_method", "hist"},
          {"eta", absl::StrCat(options_.learning_rate)},
          {"max_depth", absl::StrCat(options_.max_depth)},
          {"min_child_weight", absl::StrCat(options_.min_child_weight)},
          {"gamma", absl::StrCat(options_.min_split_loss)},
          {"lambda", absl::StrCat(options_.lambda)},
          {"max_bin", absl::StrCat(options_.max_bin)},
          {"subsample", absl::StrCat(options_.subsample)},
          {"colsample_bytree", absl::StrCat(options_.colsample_bytree)},
          // XGBoost's seed is signed 64-bit; keep all bits of ours.
          {"seed", absl::StrCat(static_cast<int64_t>(options_.seed))},
      });
  LATHE_RETURN_IF_ERROR(SetParams(booster.get(), params));

  // 5. Boost.
  for (int round = 0; round < options_.num_rounds; ++round) {
    LATHE_XGB_CALL(XGBoosterUpdateOneIter, booster.get(), round, train.get());
  }
  booster_ = std::move(booster);
  num_features_ = static_cast<int>(columns);
  return absl::OkStatus();
}

absl::StatusOr<std::vector<double>> XgbCostModel::Predict(
    const std::vector<std::vector<float>>& features) const {
  const size_t n = features.size();
  if (n == 0) return std::vector<double>();
  std::vector<size_t> order(n);
  for (size_t i = 0; i < n; ++i) order[i] = i;
  LATHE_ASSIGN_OR_RETURN(
      std::vector<float> flat,
      Flatten(features, order, trained() ? num_features_ : -1,
              "cost model: predict"));
  if (!trained()) return std::vector<double>(n, 0.0);

  LATHE_ASSIGN_OR_RETURN(
      DMatrixPtr matrix,
      MakeDMatrix(flat, n, static_cast<size_t>(num_features_)));
  // type 0: the raw score (for ranking objectives, the margin); all trees.
  const char* config =
      R"({"type": 0, "training": false, "iteration_begin": 0, )"
      R"("iteration_end": 0, "strict_shape": false})";
  const bst_ulong* shape = nullptr;
  bst_ulong dims = 0;
  const float* scores = nullptr;
  LATHE_XGB_CALL(XGBoosterPredictFromDMatrix, booster_.get(), matrix.get(),
                 config, &shape, &dims, &scores);
  size_t count = 1;
  for (bst_ulong d = 0; d < dims; ++d) count *= shape[d];
  if (count != n) {
    return absl::InternalError(
        absl::StrCat("xgboost: XGBoosterPredictFromDMatrix returned ", count,
                     " scores for ", n, " rows"));
  }
  // The buffer belongs to the booster until its next call: copy it now.
  return std::vector<double>(scores, scores + n);
}

absl::StatusOr<std::string> XgbCostModel::Save() const {
  if (!trained()) {
    return absl::FailedPreconditionError(
        "cost model: save: the model is not trained");
  }
  bst_ulong length = 0;
  const char* bytes = nullptr;
  LATHE_XGB_CALL(XGBoosterSaveModelToBuffer, booster_.get(),
                 R"({"format": "ubj"})", &length, &bytes);
  const std::string model(bytes, length);
  return absl::StrCat(kSaveMagic, model.size(), " ",
                      absl::Hex(StableHash64(model)), "\n", model);
}

absl::Status XgbCostModel::Load(const std::string& bytes) {
  const size_t end_of_line = bytes.find('\n');
  if (!absl::StartsWith(bytes, kSaveMagic) ||
      end_of_line == std::string::npos) {
    return absl::InvalidArgumentError(
        "cost model: load: not a saved XGBoost cost model of this version (no "
        "\"lathe-xgb 2\" "
        "line)");
  }
  std::vector<absl::string_view> fields =
      absl::StrSplit(absl::string_view(bytes).substr(
                         kSaveMagic.size(), end_of_line - kSaveMagic.size()),
                     ' ');
  const std::string model = bytes.substr(end_of_line + 1);
  size_t length = 0;
  uint64_t hash = 0;
  if (fields.size() != 2 || !absl::SimpleAtoi(fields[0], &length) ||
      !absl::SimpleHexAtoi(fields[1], &hash)) {
    return absl::InvalidArgumentError(
        "cost model: load: the \"lathe-xgb 2\" line does not give a length and "
        "a hash");
  }
  if (model.size() != length || StableHash64(model) != hash) {
    return absl::InvalidArgumentError(absl::StrCat(
        "cost model: load: the saved model is truncated or corrupt (",
        model.size(), " bytes of ", length,
        (model.size() == length ? ", hash differs)" : ")")));
  }
  BoosterHandle handle = nullptr;
  LATHE_XGB_CALL(XGBoosterCreate, nullptr, 0, &handle);
  BoosterPtr booster(handle);
  if (XGBoosterLoadModelFromBuffer(booster.get(), model.data(), model.size()) !=
      0) {
    // Bytes that XGBoost cannot read are bad input, not a Lathe bug.
    return absl::InvalidArgumentError(absl::StrCat(
        "cost model: load: xgboost: XGBoosterLoadModelFromBuffer failed: ",
        XGBGetLastError()));
  }
  LATHE_RETURN_IF_ERROR(SetParams(booster.get(), RuntimeParams(options_)));
  bst_ulong columns = 0;
  LATHE_XGB_CALL(XGBoosterGetNumFeature, booster.get(), &columns);
  if (columns == 0) {
    return absl::InvalidArgumentError(
        "cost model: load: the saved model has no features");
  }
  booster_ = std::move(booster);
  num_features_ = static_cast<int>(columns);
  return absl::OkStatus();
}

}  // namespace lathe::tuner
