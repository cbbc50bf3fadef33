#include "tuner/features/buffer_access_features.h"

#include "absl/strings/str_cat.h"
#include "tuner/features/access_geometry.h"

namespace lathe::tuner {
namespace {

constexpr int kSlotFeatures = 9;

void AddSlotSpecs(const std::string& slot,
                  std::vector<StoreFeatureSpec>* specs) {
  const std::string p = absl::StrCat("buf.", slot, ".");
  specs->push_back({p + "bytes", Aggregation::kExtensive});
  specs->push_back({p + "unique_bytes", Aggregation::kExtensive});
  specs->push_back({p + "lines", Aggregation::kExtensive});
  specs->push_back({p + "unique_lines", Aggregation::kExtensive});
  specs->push_back({p + "stride", Aggregation::kIntensive});
  specs->push_back({p + "inner_contiguous", Aggregation::kFraction});
  specs->push_back({p + "inner_broadcast", Aggregation::kFraction});
  specs->push_back({p + "local", Aggregation::kFraction});
  specs->push_back({p + "intermediate", Aggregation::kFraction});
}

// Writes kSlotFeatures values for `use` (zeros when null).
void SlotFeatures(const StoreContext& store, const BufferUse* use,
                  double* out) {
  for (int i = 0; i < kSlotFeatures; ++i) out[i] = 0;
  if (use == nullptr) return;
  const double elem_bytes = use->buffer->dtype.bytes();
  out[0] = BytesAccessed(store, *use);
  out[1] = use->footprint_elements[0] * elem_bytes;
  out[2] = LinesAccessed(store, *use);
  out[3] = use->footprint_lines[0];
  out[4] = static_cast<double>(InnermostNonZeroStride(*use));
  if (!use->strides.empty()) {
    out[5] = use->strides.back() == 1 ? 1 : 0;
    out[6] = use->strides.back() == 0 ? 1 : 0;
  }
  out[7] = use->buffer->scope == BufferScope::kLocal ? 1 : 0;
  out[8] = use->allocated ? 1 : 0;
}

}  // namespace

const std::vector<StoreFeatureSpec>& BufferAccessFeatureSpecs() {
  static const auto* specs = [] {
    auto* s = new std::vector<StoreFeatureSpec>;
    AddSlotSpecs("write", s);
    s->push_back({"buf.write.read_write", Aggregation::kFraction});
    for (int r = 0; r < kReadSlots; ++r)
      AddSlotSpecs(absl::StrCat("read", r), s);
    s->push_back({"buf.other_read_bytes", Aggregation::kExtensive});
    s->push_back({"buf.other_read_lines", Aggregation::kExtensive});
    s->push_back({"buf.num_buffers", Aggregation::kIntensive});
    s->push_back({"buf.loads", Aggregation::kIntensive});
    return s;
  }();
  return *specs;
}

void ExtractBufferAccessFeatures(const StoreContext& store, double* out) {
  const BufferUse* written =
      store.buffers.empty() ? nullptr : &store.buffers[0];
  SlotFeatures(store, written, out);
  out += kSlotFeatures;
  *out++ = written != nullptr && written->read ? 1 : 0;
  for (int r = 0; r < kReadSlots; ++r) {
    const BufferUse* use = r < static_cast<int>(store.read_order.size())
                               ? &store.buffers[store.read_order[r]]
                               : nullptr;
    SlotFeatures(store, use, out);
    out += kSlotFeatures;
  }
  double other_bytes = 0, other_lines = 0, loads = 0;
  for (size_t r = kReadSlots; r < store.read_order.size(); ++r) {
    const BufferUse& use = store.buffers[store.read_order[r]];
    other_bytes += BytesAccessed(store, use);
    other_lines += LinesAccessed(store, use);
  }
  for (const BufferUse& use : store.buffers) {
    loads += use.num_accesses - (use.write ? 1 : 0);
  }
  *out++ = other_bytes;
  *out++ = other_lines;
  *out++ = static_cast<double>(store.buffers.size());
  *out++ = loads;
}

}  // namespace lathe::tuner
