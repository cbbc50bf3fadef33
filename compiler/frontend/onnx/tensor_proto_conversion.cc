#include "compiler/frontend/onnx/tensor_proto_conversion.h"

#include <cstring>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace lathe::onnx_frontend {
namespace {

using onnx::TensorProto;

// Decodes `count` little-endian elements of type T from raw bytes.
template <typename T>
void DecodeRaw(const std::string& raw, int64_t count,
               std::vector<double>& out) {
  out.resize(static_cast<size_t>(count));
  for (int64_t i = 0; i < count; ++i) {
    T element;
    std::memcpy(&element, raw.data() + i * sizeof(T), sizeof(T));
    out[static_cast<size_t>(i)] = static_cast<double>(element);
  }
}

template <typename T>
void EncodeRaw(const std::vector<double>& values, std::string& raw) {
  raw.resize(values.size() * sizeof(T));
  for (size_t i = 0; i < values.size(); ++i) {
    T element = static_cast<T>(values[i]);
    std::memcpy(raw.data() + i * sizeof(T), &element, sizeof(T));
  }
}

template <typename Field>
void CopyTyped(const Field& field, std::vector<double>& out) {
  out.assign(field.begin(), field.end());
}

}  // namespace

absl::StatusOr<DType> DTypeFromOnnx(int32_t elem_type,
                                    const std::string& what) {
  switch (elem_type) {
    case TensorProto::FLOAT:
      return DType::Float32();
    case TensorProto::DOUBLE:
      return DType(DType::Code::kFloat, 64);
    case TensorProto::INT64:
      return DType::Int64();
    case TensorProto::INT32:
      return DType::Int32();
    case TensorProto::INT8:
      return DType::Int8();
    case TensorProto::UINT8:
      return DType(DType::Code::kUInt, 8);
    case TensorProto::BOOL:
      return DType::Bool();
    default:
      return absl::UnimplementedError(
          absl::StrCat(what, ": element type ", OnnxTypeName(elem_type),
                       " is not supported (supported: float32, float64, "
                       "int64, int32, int8, uint8, bool)"));
  }
}

absl::StatusOr<int32_t> OnnxFromDType(DType dtype, const std::string& what) {
  if (dtype == DType::Float32()) return TensorProto::FLOAT;
  if (dtype == DType(DType::Code::kFloat, 64)) return TensorProto::DOUBLE;
  if (dtype == DType::Int64()) return TensorProto::INT64;
  if (dtype == DType::Int32()) return TensorProto::INT32;
  if (dtype == DType::Int8()) return TensorProto::INT8;
  if (dtype == DType(DType::Code::kUInt, 8)) return TensorProto::UINT8;
  if (dtype == DType::Bool()) return TensorProto::BOOL;
  return absl::UnimplementedError(absl::StrCat(
      what, ": dtype ", dtype.ToString(), " has no ONNX tensor form here"));
}

std::string OnnxTypeName(int32_t elem_type) {
  if (TensorProto::DataType_IsValid(elem_type)) {
    return TensorProto::DataType_Name(
        static_cast<TensorProto::DataType>(elem_type));
  }
  return absl::StrCat("unknown type ", elem_type);
}

absl::StatusOr<int64_t> BoundedElementCount(const std::vector<int64_t>& dims,
                                            const std::string& what) {
  int64_t count = 1;
  for (int64_t dim : dims) {
    if (dim < 0) {
      return absl::InvalidArgumentError(absl::StrCat(
          what, ": negative dimension in [", absl::StrJoin(dims, ","), "]"));
    }
  }
  for (int64_t dim : dims) {
    if (dim == 0) return 0;
    if (count > kMaxTensorElements / dim) {
      return absl::InvalidArgumentError(absl::StrCat(
          what, ": shape [", absl::StrJoin(dims, ","), "] has more than ",
          kMaxTensorElements, " elements (the importer's limit)"));
    }
    count *= dim;
  }
  return count;
}

absl::StatusOr<int64_t> ValidateTensorProto(const TensorProto& proto,
                                            const std::string& what) {
  if (proto.data_location() == TensorProto::EXTERNAL ||
      proto.external_data_size() > 0) {
    return absl::UnimplementedError(
        absl::StrCat(what,
                     ": its data is stored outside the model (external data), "
                     "which the importer does not read"));
  }
  if (proto.has_segment()) {
    return absl::UnimplementedError(
        absl::StrCat(what, ": segmented tensors are not supported"));
  }
  if (proto.data_type() == TensorProto::UNDEFINED) {
    return absl::InvalidArgumentError(
        absl::StrCat(what, ": the tensor has no element type"));
  }
  auto dtype = DTypeFromOnnx(proto.data_type(), what);
  if (!dtype.ok()) return dtype.status();
  std::vector<int64_t> dims(proto.dims().begin(), proto.dims().end());
  auto count = BoundedElementCount(dims, what);
  if (!count.ok()) return count.status();
  int64_t present = 0;
  if (proto.has_raw_data()) {
    const int64_t element_bytes = dtype->is_bool() ? 1 : dtype->bytes();
    present = static_cast<int64_t>(proto.raw_data().size()) / element_bytes;
    if (static_cast<int64_t>(proto.raw_data().size()) !=
        *count * element_bytes) {
      present = -1 - present;  // a size that is not a whole element count
    }
  } else {
    switch (proto.data_type()) {
      case TensorProto::FLOAT:
        present = proto.float_data_size();
        break;
      case TensorProto::DOUBLE:
        present = proto.double_data_size();
        break;
      case TensorProto::INT64:
        present = proto.int64_data_size();
        break;
      default:  // int32, int8, uint8 and bool live in int32_data
        present = proto.int32_data_size();
        break;
    }
  }
  if (present != *count) {
    if (present < 0) present = -1 - present;
    return absl::InvalidArgumentError(
        absl::StrCat(what, ": shape [", absl::StrJoin(dims, ","), "] needs ",
                     *count, " elements but the data holds ", present));
  }
  return *count;
}

absl::StatusOr<TensorData> TensorFromProto(const TensorProto& proto,
                                           const std::string& what) {
  auto count_or = ValidateTensorProto(proto, what);
  if (!count_or.ok()) return count_or.status();
  const int64_t count = *count_or;
  DType dtype = *DTypeFromOnnx(proto.data_type(), what);
  std::vector<int64_t> dims(proto.dims().begin(), proto.dims().end());

  TensorData data;
  data.dtype = dtype;
  data.shape = dims;
  const int32_t type = proto.data_type();
  if (proto.has_raw_data()) {
    const std::string& raw = proto.raw_data();
    switch (type) {
      case TensorProto::FLOAT:
        DecodeRaw<float>(raw, count, data.values);
        break;
      case TensorProto::DOUBLE:
        DecodeRaw<double>(raw, count, data.values);
        break;
      case TensorProto::INT64:
        DecodeRaw<int64_t>(raw, count, data.values);
        break;
      case TensorProto::INT32:
        DecodeRaw<int32_t>(raw, count, data.values);
        break;
      case TensorProto::INT8:
        DecodeRaw<int8_t>(raw, count, data.values);
        break;
      case TensorProto::UINT8:
        DecodeRaw<uint8_t>(raw, count, data.values);
        break;
      case TensorProto::BOOL:
        DecodeRaw<uint8_t>(raw, count, data.values);
        break;
    }
  } else {
    switch (type) {
      case TensorProto::FLOAT:
        CopyTyped(proto.float_data(), data.values);
        break;
      case TensorProto::DOUBLE:
        CopyTyped(proto.double_data(), data.values);
        break;
      case TensorProto::INT64:
        CopyTyped(proto.int64_data(), data.values);
        break;
      default:  // int32, int8, uint8 and bool live in int32_data
        CopyTyped(proto.int32_data(), data.values);
        break;
    }
  }
  for (double& value : data.values) value = RoundToDType(value, dtype);
  return data;
}

absl::StatusOr<TensorProto> TensorToProto(const TensorData& data,
                                          const std::string& name) {
  const std::string what = name.empty() ? std::string("tensor") : name;
  auto type_or = OnnxFromDType(data.dtype, what);
  if (!type_or.ok()) return type_or.status();
  auto count_or = BoundedElementCount(data.shape, what);
  if (!count_or.ok()) return count_or.status();
  if (*count_or != data.size()) {
    return absl::InvalidArgumentError(absl::StrCat(
        what, ": shape [", absl::StrJoin(data.shape, ","), "] needs ",
        *count_or, " elements but it holds ", data.size()));
  }
  TensorProto proto;
  proto.set_name(name);
  proto.set_data_type(*type_or);
  for (int64_t dim : data.shape) proto.add_dims(dim);
  std::string* raw = proto.mutable_raw_data();
  switch (*type_or) {
    case TensorProto::FLOAT:
      EncodeRaw<float>(data.values, *raw);
      break;
    case TensorProto::DOUBLE:
      EncodeRaw<double>(data.values, *raw);
      break;
    case TensorProto::INT64:
      EncodeRaw<int64_t>(data.values, *raw);
      break;
    case TensorProto::INT32:
      EncodeRaw<int32_t>(data.values, *raw);
      break;
    case TensorProto::INT8:
      EncodeRaw<int8_t>(data.values, *raw);
      break;
    case TensorProto::UINT8:
    case TensorProto::BOOL:
      EncodeRaw<uint8_t>(data.values, *raw);
      break;
  }
  return proto;
}

}  // namespace lathe::onnx_frontend
