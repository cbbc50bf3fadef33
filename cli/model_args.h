// How commands name a model: the ONNX file and the values of its inputs'
// symbolic dimensions (`--shape input=1,3,224,224`, repeatable). Shared by
// `lathe run`, `lathe graph`, `lathe tasks`, `lathe tune` and `lathe submit`.
// Tests: tests/cli/model_commands_test.sh.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "absl/status/statusor.h"
#include "compiler/graph/graph.h"

namespace lathe::cli {

struct ModelArgs {
  std::string path;
  std::vector<std::string> shapes;

  // Adds the positional MODEL and --shape to a command.
  void AddTo(CLI::App* command);
  // Adds only --shape (a command whose positional arguments are a model or
  // workload specs sets `path` itself).
  void AddShapeOption(CLI::App* command);
  // --shape as a map from input name to its dims. Errors (InvalidArgument,
  // quoting the option): no '=', an empty name, a dim that is not a whole
  // number in [1, 2^31), a name given twice.
  absl::StatusOr<std::map<std::string, std::vector<int64_t>>> InputShapes()
      const;
  // The model imported with the --shape values (the importer's errors).
  absl::StatusOr<graph::Graph> Import() const;
};

}  // namespace lathe::cli
