#include "compiler/frontend/onnx/tensor_file.h"

#include "absl/strings/str_cat.h"
#include "compiler/frontend/onnx/bounded_file.h"
#include "compiler/frontend/onnx/tensor_proto_conversion.h"
#include "onnx/onnx_pb.h"

namespace lathe {

absl::StatusOr<TensorData> ReadTensorFile(const std::string& path,
                                          std::string* name) {
  auto contents = onnx_frontend::ReadBoundedFile(path, kMaxTensorFileBytes);
  if (!contents.ok()) return contents.status();
  if (contents->empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat(path, ": empty file, not an ONNX tensor"));
  }
  onnx::TensorProto proto;
  if (!proto.ParseFromString(*contents)) {
    return absl::InvalidArgumentError(absl::StrCat(
        path, ": not an ONNX tensor (TensorProto) file, or truncated"));
  }
  auto data = onnx_frontend::TensorFromProto(proto, path);
  if (!data.ok()) return data.status();
  if (name != nullptr) *name = proto.name();
  return data;
}

absl::Status WriteTensorFile(const std::string& path, const TensorData& data,
                             const std::string& name) {
  auto proto = onnx_frontend::TensorToProto(data, name);
  if (!proto.ok()) {
    return absl::Status(proto.status().code(),
                        absl::StrCat(path, ": ", proto.status().message()));
  }
  std::string serialized;
  if (!proto->SerializeToString(&serialized)) {
    return absl::InternalError(
        absl::StrCat(path, ": could not serialize the tensor"));
  }
  return onnx_frontend::WriteFileAtomically(path, serialized);
}

}  // namespace lathe
