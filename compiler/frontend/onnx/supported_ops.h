// The operators the importer accepts (issue 24's list, at opset 17 names),
// checked for every node before anything else runs.
//
// CheckOpSupported returns Unimplemented naming the op for one outside the
// list. The op registry of compiler/graph becomes the single list once it
// exists; this table mirrors it until then.
// Tests: tests/compiler/frontend/onnx/onnx_importer_test.cc.
#pragma once

#include <string>

#include "absl/status/status.h"

namespace lathe::onnx_frontend {

absl::Status CheckOpSupported(const std::string& op);

}  // namespace lathe::onnx_frontend
