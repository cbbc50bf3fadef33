// libFuzzer target: custom expressions (compiler/workload/expr_parser.h and
// custom_workload.h). The input is EXPR or EXPR|DIMS; whatever it is, the
// parsers return a status, and a workload that parses builds its initial
// program without a crash.
#include <cstddef>
#include <cstdint>
#include <string>

#include "absl/status/statusor.h"
#include "compiler/workload/custom_workload.h"
#include "compiler/workload/expr_parser.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  (void)lathe::ParseCustomExpr(text);
  absl::StatusOr<lathe::CustomDefinition> definition =
      lathe::ParseCustomSpec(text);
  if (!definition.ok()) return 0;
  absl::StatusOr<lathe::Workload> workload =
      lathe::MakeCustomWorkload(*std::move(definition));
  if (!workload.ok()) return 0;
  (void)workload->InitialProgram();
  return 0;
}
