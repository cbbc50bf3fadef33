#include "cli/workload_args.h"

#include "absl/status/status.h"
#include "compiler/workload/custom_workload.h"
#include "compiler/workload/spec.h"

namespace lathe::cli {

void WorkloadArgs::AddTo(CLI::App* command, bool spec_required) {
  command->add_option("spec", spec,
                      "workload spec, e.g. matmul:M=512,N=512,K=512 "
                      "(see `lathe workloads`)");
  command->add_option(
      "--expr", expr,
      "custom workload expression, e.g. \"C[i,j] += A[i,k] * B[k,j]\"");
  command->add_option(
      "--dims", dims,
      "extents of the --expr index variables, e.g. i=64,j=64,k=64");
  (void)
      spec_required;  // checked in Resolve, so the message can say what to give
}

absl::StatusOr<Workload> WorkloadArgs::Resolve() const {
  bool has_spec = !spec.empty();
  bool has_expr = !expr.empty() || !dims.empty();
  if (has_spec && has_expr) {
    return absl::InvalidArgumentError(
        "give either a workload spec or --expr/--dims, not both");
  }
  if (has_expr) {
    if (expr.empty() || dims.empty()) {
      return absl::InvalidArgumentError("--expr and --dims go together");
    }
    return ParseCustomWorkload(expr, dims);
  }
  if (!has_spec) {
    return absl::InvalidArgumentError(
        "no workload: give a spec such as matmul:M=64,N=64,K=64 or "
        "--expr/--dims");
  }
  return ParseWorkloadSpec(spec);
}

}  // namespace lathe::cli
