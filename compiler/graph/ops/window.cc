#include "compiler/graph/ops/window.h"

#include <algorithm>

#include "absl/strings/str_join.h"
#include "compiler/graph/ops/op_definition.h"

namespace lathe::graph {

bool Window::padded() const {
  for (size_t a = 0; a < pads_begin.size(); ++a) {
    if (pads_begin[a] > 0 || pads_end[a] > 0) return true;
  }
  return false;
}

absl::StatusOr<Window> ComputeWindow(const Node& node,
                                     const std::vector<int64_t>& in,
                                     const std::vector<int64_t>& kernel,
                                     bool ceil_mode) {
  const size_t rank = in.size();
  Window w;
  w.kernel = kernel;
  w.strides = IntsAttr(node, "strides", std::vector<int64_t>(rank, 1));
  w.dilations = IntsAttr(node, "dilations", std::vector<int64_t>(rank, 1));
  if (w.strides.empty()) w.strides.assign(rank, 1);
  if (w.dilations.empty()) w.dilations.assign(rank, 1);
  std::vector<int64_t> pads = IntsAttr(node, "pads", {});
  if (pads.empty()) pads.assign(2 * rank, 0);
  if (w.strides.size() != rank) {
    return NodeError(node, absl::StrCat("strides has ", w.strides.size(),
                                        " values for ", rank, " spatial axes"));
  }
  if (w.dilations.size() != rank) {
    return NodeError(node, absl::StrCat("dilations has ", w.dilations.size(),
                                        " values for ", rank, " spatial axes"));
  }
  if (pads.size() != 2 * rank) {
    return NodeError(node, absl::StrCat("pads has ", pads.size(),
                                        " values for ", rank, " spatial axes"));
  }
  const std::string auto_pad = StringAttr(node, "auto_pad", "NOTSET");
  if (auto_pad != "NOTSET" && auto_pad != "VALID" && auto_pad != "SAME_UPPER" &&
      auto_pad != "SAME_LOWER") {
    return UnsupportedAttr(node, "auto_pad", auto_pad);
  }
  for (size_t a = 0; a < rank; ++a) {
    if (w.strides[a] <= 0 || w.dilations[a] <= 0 || kernel[a] <= 0) {
      return NodeError(node,
                       absl::StrCat("strides, dilations and kernel must be "
                                    "positive, axis ",
                                    a));
    }
    if (pads[a] < 0 || pads[a + rank] < 0) {
      return UnsupportedAttr(node, "pads", absl::StrJoin(pads, ","));
    }
    const int64_t span = w.dilations[a] * (kernel[a] - 1) + 1;
    int64_t begin = pads[a], end = pads[a + rank];
    int64_t out = 0;
    if (auto_pad == "VALID") {
      begin = end = 0;
    }
    if (auto_pad == "SAME_UPPER" || auto_pad == "SAME_LOWER") {
      out = (in[a] + w.strides[a] - 1) / w.strides[a];
      const int64_t total =
          std::max<int64_t>(0, (out - 1) * w.strides[a] + span - in[a]);
      begin = auto_pad == "SAME_UPPER" ? total / 2 : total - total / 2;
      end = total - begin;
    } else {
      const int64_t room = in[a] + begin + end - span;
      if (room < 0) {
        return NodeError(node,
                         absl::StrCat("window of extent ", span,
                                      " exceeds the padded input ",
                                      in[a] + begin + end, " on axis ", a));
      }
      out = ceil_mode ? (room + w.strides[a] - 1) / w.strides[a] + 1
                      : room / w.strides[a] + 1;
      // A last window that would start in the end padding is dropped.
      if (ceil_mode && (out - 1) * w.strides[a] >= in[a] + begin) --out;
    }
    w.pads_begin.push_back(begin);
    w.pads_end.push_back(end);
    w.out.push_back(out);
  }
  return w;
}

}  // namespace lathe::graph
