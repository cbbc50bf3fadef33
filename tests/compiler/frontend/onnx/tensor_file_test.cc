#include "compiler/frontend/onnx/tensor_file.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cstring>
#include <fstream>
#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "onnx/onnx_pb.h"
#include "tests/compiler/frontend/onnx/test_model.h"

namespace lathe {
namespace {

using ::testing::AllOf;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

std::string Path(const std::string& file) {
  return ::testing::TempDir() + file;
}

bool Exists(const std::string& path) {
  struct stat info;
  return ::stat(path.c_str(), &info) == 0;
}

TEST(TensorFile, RoundTripsEverySupportedDType) {
  const DType dtypes[] = {DType::Float32(), DType(DType::Code::kFloat, 64),
                          DType::Int64(),   DType::Int32(),
                          DType::Int8(),    DType(DType::Code::kUInt, 8),
                          DType::Bool()};
  for (DType dtype : dtypes) {
    TensorData data(dtype, {2, 3});
    for (int64_t i = 0; i < data.size(); ++i) {
      double v = dtype.is_bool() ? (i % 2) : (i * 3 - 4) * 1.25;
      if (dtype.code() == DType::Code::kUInt) v = i * 40;
      data.values[i] = RoundToDType(v, dtype);
    }
    std::string path = Path("round_trip_" + dtype.ToString() + ".pb");
    ASSERT_TRUE(WriteTensorFile(path, data, "input_a").ok())
        << dtype.ToString();
    std::string name;
    auto read = ReadTensorFile(path, &name);
    ASSERT_TRUE(read.ok()) << read.status();
    EXPECT_EQ(name, "input_a");
    EXPECT_EQ(read->dtype, dtype) << dtype.ToString();
    EXPECT_EQ(read->shape, data.shape);
    EXPECT_EQ(read->values, data.values) << dtype.ToString();
  }
}

TEST(TensorFile, FileIsARawDataTensorProto) {
  TensorData data(DType::Float32(), {3});
  data.values = {1.0, -0.5, 2.0};
  std::string path = Path("check_layout.pb");
  ASSERT_TRUE(WriteTensorFile(path, data).ok());
  std::ifstream in(path, std::ios::binary);
  onnx::TensorProto proto;
  ASSERT_TRUE(proto.ParseFromIstream(&in));
  EXPECT_EQ(proto.data_type(), onnx::TensorProto::FLOAT);
  EXPECT_THAT(proto.dims(), ElementsAre(3));
  ASSERT_EQ(proto.raw_data().size(), 12u);
  float second;
  std::memcpy(&second, proto.raw_data().data() + 4, 4);
  EXPECT_EQ(second, -0.5f);
}

TEST(TensorFile, ReadsTypedFieldsAndScalars) {
  onnx::TensorProto proto;
  proto.set_data_type(onnx::TensorProto::INT64);
  for (int64_t v : {7, -8}) proto.add_int64_data(v);
  proto.add_dims(2);
  std::string path = Path("typed_fields.pb");
  onnx_test::WriteBytes(path, proto.SerializeAsString());
  auto read = ReadTensorFile(path);
  ASSERT_TRUE(read.ok()) << read.status();
  EXPECT_THAT(read->values, ElementsAre(7, -8));

  onnx::TensorProto scalar;
  scalar.set_data_type(onnx::TensorProto::FLOAT);
  scalar.add_float_data(2.5f);
  onnx_test::WriteBytes(path, scalar.SerializeAsString());
  read = ReadTensorFile(path);
  ASSERT_TRUE(read.ok()) << read.status();
  EXPECT_TRUE(read->shape.empty());
  EXPECT_THAT(read->values, ElementsAre(2.5));
}

TEST(TensorFile, BadFilesAreOneErrorNamingTheFile) {
  std::string empty = Path("empty.pb");
  onnx_test::WriteBytes(empty, "");
  std::string garbage = Path("garbage.pb");
  onnx_test::WriteBytes(garbage, std::string("\xff\xff\xff\xff\x0f junk", 10));
  std::string folder = Path("folder.pb");
  ::mkdir(folder.c_str(), 0755);
  std::string missing = Path("missing.pb");
  for (const std::string& path : {empty, garbage, folder, missing}) {
    auto read = ReadTensorFile(path);
    ASSERT_FALSE(read.ok()) << path;
    EXPECT_THAT(read.status().message(), HasSubstr(path));
  }
}

TEST(TensorFile, ShapeAndDataMustAgree) {
  onnx::TensorProto proto;
  proto.set_data_type(onnx::TensorProto::FLOAT);
  proto.add_dims(2);
  proto.add_dims(2);
  proto.set_raw_data(std::string(12, '\0'));  // 3 floats for 4 elements
  std::string path = Path("short.pb");
  onnx_test::WriteBytes(path, proto.SerializeAsString());
  auto read = ReadTensorFile(path);
  ASSERT_FALSE(read.ok());
  EXPECT_THAT(read.status().message(),
              AllOf(HasSubstr(path), HasSubstr("needs 4 elements"),
                    HasSubstr("holds 3")));

  proto.clear_raw_data();
  proto.clear_dims();
  proto.add_dims(int64_t{1} << 40);
  onnx_test::WriteBytes(path, proto.SerializeAsString());
  read = ReadTensorFile(path);
  ASSERT_FALSE(read.ok());
  EXPECT_THAT(read.status().message(), HasSubstr("limit"));

  proto.clear_dims();
  proto.add_dims(-1);
  onnx_test::WriteBytes(path, proto.SerializeAsString());
  read = ReadTensorFile(path);
  ASSERT_FALSE(read.ok());
  EXPECT_THAT(read.status().message(), HasSubstr("negative"));
}

TEST(TensorFile, UnsupportedTypesAreNamed) {
  onnx::TensorProto proto;
  proto.set_data_type(onnx::TensorProto::FLOAT16);
  proto.add_dims(1);
  proto.set_raw_data(std::string(2, '\0'));
  std::string path = Path("half.pb");
  onnx_test::WriteBytes(path, proto.SerializeAsString());
  auto read = ReadTensorFile(path);
  ASSERT_FALSE(read.ok());
  EXPECT_EQ(read.status().code(), absl::StatusCode::kUnimplemented);
  EXPECT_THAT(read.status().message(),
              AllOf(HasSubstr(path), HasSubstr("FLOAT16")));
}

TEST(TensorFile, FailedWriteLeavesNoFile) {
  std::string path = Path("never_written.pb");
  ::unlink(path.c_str());
  TensorData half(DType::Float16(), {2});
  absl::Status written = WriteTensorFile(path, half);
  ASSERT_FALSE(written.ok());
  EXPECT_THAT(written.message(), AllOf(HasSubstr(path), HasSubstr("float16")));
  EXPECT_FALSE(Exists(path));

  TensorData wrong(DType::Float32(), {2});
  wrong.values.push_back(1.0);  // 3 values for shape [2]
  EXPECT_FALSE(WriteTensorFile(path, wrong).ok());
  EXPECT_FALSE(Exists(path));

  EXPECT_FALSE(WriteTensorFile(Path("no_such_folder/out.pb"),
                               TensorData(DType::Float32(), {1}))
                   .ok());
}

}  // namespace
}  // namespace lathe
