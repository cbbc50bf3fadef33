// `lathe run`: run an ONNX model on inputs given as TensorProto files, the
// layout of the ONNX backend test cases.
//
//   lathe run model.onnx --input input_0.pb [--input input_1.pb ...]
//       --output-dir out [--db tuned.db] [--target T] [--compatible]
//       [--shape NAME=1,3,224,224] [--json]
//
// Inputs in graph-input order; writes out/output_0.pb, output_1.pb, ... in
// graph-output order, all or none (cli/staged_outputs.h). The model is
// built for this one run: integer, bool and scalar inputs fold into it as
// constants, so shapes computed from them are known. Kernels come from
// the database where tuned, else from the default schedules; one line on
// stderr says how many of each (api/model.h).
// Tests: tests/cli/model_commands_test.sh.
#pragma once

#include <CLI/CLI.hpp>

namespace lathe::cli {

void AddRunCommand(CLI::App& app);

}  // namespace lathe::cli
