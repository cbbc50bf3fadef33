#include "compiler/workload/ops/window.h"

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"

namespace lathe::ops {

absl::StatusOr<int64_t> WindowOutputLength(const std::string& op,
                                           const WindowAxis& axis) {
  // Parameters are at most 2^31, so none of this overflows.
  const int64_t padded = axis.input + 2 * axis.pad;
  const int64_t span = axis.dilation * (axis.kernel - 1) + 1;
  if (padded < span) {
    return absl::InvalidArgumentError(absl::StrCat(
        op, ": no output along ", axis.input_name, ": the padded input ",
        axis.input_name, "+2*pad=", padded, " is smaller than the window ",
        axis.dilation == 1 ? "" : "dilation*(", axis.kernel_name,
        axis.dilation == 1 ? "" : "-1)+1", "=", span));
  }
  return (padded - span) / axis.stride + 1;
}

te::Tensor PadSpatial(const te::Tensor& x, size_t h_axis, size_t w_axis,
                      int64_t pad, Expr pad_value,
                      std::vector<std::string> axis_names) {
  std::vector<int64_t> shape = x.shape();
  const int64_t H = shape[h_axis], W = shape[w_axis];
  shape[h_axis] += 2 * pad;
  shape[w_axis] += 2 * pad;
  return te::Compute("pad", shape, std::move(axis_names),
                     [&](const std::vector<Expr>& ax) {
                       Expr h = ax[h_axis], w = ax[w_axis];
                       Expr inside = h >= Expr(pad) && h < Expr(H + pad) &&
                                     w >= Expr(pad) && w < Expr(W + pad);
                       std::vector<Expr> indices = ax;
                       indices[h_axis] = h - Expr(pad);
                       indices[w_axis] = w - Expr(pad);
                       return Select(inside, x(indices), pad_value);
                     });
}

}  // namespace lathe::ops
