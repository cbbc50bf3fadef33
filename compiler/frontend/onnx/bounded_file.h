// Reading and writing whole files with a size bound, for model and tensor
// files (private to the importer).
//
// ReadBoundedFile checks, before reading, that the path is a regular file of
// at most max_bytes bytes, and that it reads back in full. Every error names
// the path. WriteFileAtomically writes to a temporary file beside the target
// and renames it into place, so a failed write leaves no partial file under
// the target's name.
// Tests: tests/compiler/frontend/onnx/tensor_file_test.cc.
#pragma once

#include <cstdint>
#include <string>

#include "absl/status/statusor.h"

namespace lathe::onnx_frontend {

absl::StatusOr<std::string> ReadBoundedFile(const std::string& path,
                                            int64_t max_bytes);
absl::Status WriteFileAtomically(const std::string& path,
                                 const std::string& contents);

}  // namespace lathe::onnx_frontend
