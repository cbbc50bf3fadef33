#include "tuner/features/program_features.h"

#include <algorithm>
#include <cmath>

#include "tuner/features/allocation_features.h"
#include "tuner/features/arithmetic_features.h"
#include "tuner/features/buffer_access_features.h"
#include "tuner/features/feature_group.h"
#include "tuner/features/gpu_features.h"
#include "tuner/features/loop_features.h"
#include "tuner/features/loop_nest_features.h"
#include "tuner/features/program_level_features.h"
#include "tuner/features/reuse_features.h"
#include "tuner/features/store_context.h"

namespace lathe::tuner {
namespace {

// The per-store features of every group, in the order of the row.
const std::vector<StoreFeatureSpec>& StoreSpecs() {
  static const auto* specs = [] {
    auto* all = new std::vector<StoreFeatureSpec>;
    for (const auto* group :
         {&ArithmeticFeatureSpecs(), &LoopFeatureSpecs(),
          &LoopNestFeatureSpecs(), &BufferAccessFeatureSpecs(),
          &ReuseFeatureSpecs(), &AllocationStoreFeatureSpecs()}) {
      all->insert(all->end(), group->begin(), group->end());
    }
    return all;
  }();
  return *specs;
}

// One store's row: the groups' raw values side by side.
void StoreRow(const ProgramWalk& walk, const StoreContext& store, double* row) {
  ExtractArithmeticFeatures(store, row);
  row += ArithmeticFeatureSpecs().size();
  ExtractLoopFeatures(store, row);
  row += LoopFeatureSpecs().size();
  ExtractLoopNestFeatures(store, row);
  row += LoopNestFeatureSpecs().size();
  ExtractBufferAccessFeatures(store, row);
  row += BufferAccessFeatureSpecs().size();
  ExtractReuseFeatures(store, row);
  row += ReuseFeatureSpecs().size();
  ExtractAllocationStoreFeatures(walk, store, row);
}

float Finite(double x) {
  const float f = static_cast<float>(x);
  return std::isfinite(f) ? f : 0.0f;
}

}  // namespace

const std::vector<std::string>& FeatureNames() {
  static const auto* names = [] {
    auto* out = new std::vector<std::string>;
    for (const StoreFeatureSpec& spec : StoreSpecs()) {
      out->push_back(spec.name + (spec.aggregation == Aggregation::kExtensive
                                      ? ".sum"
                                      : ".mean"));
      out->push_back(spec.name + ".max");
    }
    for (const std::string& n : AllocationProgramFeatureNames())
      out->push_back(n);
    for (const std::string& n : ProgramLevelFeatureNames()) out->push_back(n);
    return out;
  }();
  return *names;
}

std::vector<std::string> FeatureNamesFor(const Target& target) {
  std::vector<std::string> names = FeatureNames();
  if (target.IsCuda()) {
    names.insert(names.end(), GpuFeatureNames().begin(),
                 GpuFeatureNames().end());
  }
  return names;
}

std::vector<float> ExtractProgramFeatures(const Program& lowered,
                                          const Target& target) {
  const ProgramWalk walk = WalkProgram(lowered);
  const std::vector<StoreFeatureSpec>& specs = StoreSpecs();
  const size_t width = specs.size();
  // 1. Rows, folded as they come: sum, max and the execution-weighted sum.
  std::vector<double> row(width), sum(width, 0), max(width, 0),
      weighted(width, 0);
  double total_weight = 0;
  for (const StoreContext& store : walk.stores) {
    StoreRow(walk, store, row.data());
    const double w = store.executions;
    total_weight += w;
    for (size_t j = 0; j < width; ++j) {
      const double x = std::isfinite(row[j]) ? std::max(0.0, row[j]) : 0.0;
      sum[j] += x;
      max[j] = std::max(max[j], x);
      weighted[j] += w * x;
    }
  }
  // A program whose stores never run (all guarded off) still gets means.
  const bool by_weight = total_weight > 0;
  const double stores =
      static_cast<double>(std::max<size_t>(1, walk.stores.size()));
  // 2. Aggregates, then scaling (feature_group.h).
  std::vector<float> out;
  out.reserve(FeatureNames().size());
  for (size_t j = 0; j < width; ++j) {
    const double mean =
        by_weight ? weighted[j] / total_weight : sum[j] / stores;
    switch (specs[j].aggregation) {
      case Aggregation::kExtensive:
        out.push_back(Finite(Log2p1(sum[j])));
        out.push_back(Finite(Log2p1(max[j])));
        break;
      case Aggregation::kIntensive:
        out.push_back(Finite(Log2p1(mean)));
        out.push_back(Finite(Log2p1(max[j])));
        break;
      case Aggregation::kFraction:
        out.push_back(Finite(mean));
        out.push_back(Finite(max[j]));
        break;
    }
  }
  // 3. Whole-program groups.
  size_t at = out.size();
  out.resize(FeatureNames().size());
  ExtractAllocationProgramFeatures(walk, target, out.data() + at);
  at += AllocationProgramFeatureNames().size();
  ExtractProgramLevelFeatures(lowered, walk, target, out.data() + at);
  if (target.IsCuda()) {
    at = out.size();
    out.resize(at + GpuFeatureNames().size());
    ExtractGpuFeatures(walk, target, out.data() + at);
  }
  for (float& f : out) f = Finite(f);
  return out;
}

}  // namespace lathe::tuner
