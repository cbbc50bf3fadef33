// Tests of api/lathe.h: kernels at run time, JIT-compiled or as objects,
// checked against the workload's reference.
#include "api/lathe.h"

#include <atomic>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "api/kernel_plan.h"
#include "compiler/codegen/cpu_target.h"
#include "compiler/measure/reference_check.h"
#include "gtest/gtest.h"
#include "tests/api/test_database.h"

namespace lathe::api {
namespace {

constexpr char kDense[] = "dense:M=8,N=24,K=16,bias=1,relu=1";

TEST(Api, KernelFromTheDatabaseMatchesTheReference) {
  TempFolder dir;
  const std::string path = dir.path() + "/t.db";
  CreateDatabase(path, {RecordOf(kDense, HostTarget(1), 1e-4)});
  absl::StatusOr<std::unique_ptr<Database>> db = Database::Open(path);
  ASSERT_TRUE(db.ok()) << db.status();
  absl::StatusOr<Kernel> kernel =
      (*db)->GetKernel(kDense, "host -num-threads=1");
  ASSERT_TRUE(kernel.ok()) << kernel.status();
  EXPECT_TRUE(kernel->origin().tuned());
  EXPECT_EQ(kernel->num_args(), 4);  // X, W, bias, Y
  absl::StatusOr<Workload> workload = ParseWorkloadSpec(kDense);
  ASSERT_TRUE(workload.ok());
  EXPECT_EQ(kernel->workload(), workload->CanonicalForm());
  absl::Status check =
      CheckAgainstReference(*workload, [&](const std::vector<float*>& args) {
        if (int rc = (*kernel)(args.data()); rc != 0)
          return absl::InternalError("kernel failed");
        return absl::OkStatus();
      });
  EXPECT_TRUE(check.ok()) << check;
}

// With pack_constants_ahead, a kernel whose record packs a constant input
// at the root takes it packed: Prepack once, then calls with the packed
// buffer compute the reference; without, the same kernel takes the
// constant as it is.
TEST(Api, ConstantInputsPackedOnceAhead) {
  constexpr char kSpec[] =
      "custom:input A[16,8]; input B[8,48] const; "
      "C[i,j] += A[i,k] * B[k,j]|i=16,j=48,k=8";
  TempFolder dir;
  const std::string path = dir.path() + "/t.db";
  CreateDatabase(path, {PackingRecord(kSpec, HostTarget(1))});
  const Workload workload = ParseWorkloadSpec(kSpec).value();
  for (const bool ahead : {true, false}) {
    SCOPED_TRACE(ahead ? "packed ahead" : "packed in the call");
    Options options;
    options.pack_constants_ahead = ahead;
    absl::StatusOr<std::unique_ptr<Database>> db =
        Database::Open(path, options);
    ASSERT_TRUE(db.ok()) << db.status();
    absl::StatusOr<Kernel> kernel =
        (*db)->GetKernel(kSpec, "host -num-threads=1");
    ASSERT_TRUE(kernel.ok()) << kernel.status();
    EXPECT_TRUE(kernel->origin().tuned());
    ASSERT_EQ(kernel->packed_inputs().size(), ahead ? 1u : 0u);
    if (ahead) {
      const PackedInputInfo& info = kernel->packed_inputs()[0];
      EXPECT_EQ(info.input, 1);
      EXPECT_EQ(info.shape, (std::vector<int64_t>{8, 48}));
      EXPECT_EQ(info.packed_shape, (std::vector<int64_t>{3, 8, 16}));
      EXPECT_EQ(info.packed_elements, 3 * 8 * 16);
    }
    EXPECT_EQ(kernel->Prepack(ahead ? 1 : 0, nullptr, nullptr), -1);
    for (const bool prepacked : {true, false}) {
      if (!ahead && !prepacked) continue;
      std::vector<float> packed(3 * 8 * 16);
      absl::Status check =
          CheckAgainstReference(workload, [&](const std::vector<float*>& args) {
            std::vector<float*> call = args;
            if (ahead) {
              if (prepacked) {
                if (kernel->Prepack(0, args[1], packed.data()) != 0)
                  return absl::InternalError("prepack failed");
              } else {
                std::copy(args[1], args[1] + 8 * 48, packed.begin());
              }
              call[1] = packed.data();
            }
            if ((*kernel)(call.data()) != 0)
              return absl::InternalError("kernel failed");
            return absl::OkStatus();
          });
      // Handed the constant unpacked, the packed kernel computes garbage.
      EXPECT_EQ(check.ok(), prepacked) << check;
    }
  }
}

// One Database shared by several threads: every lookup finds the record.
// (Unguarded, the threads shared one SQLite connection: some lookups missed
// the record or failed mid-transaction, and GetKernel crashed.)
TEST(Api, OneDatabaseAnswersSeveralThreads) {
  TempFolder dir;
  const std::string path = dir.path() + "/t.db";
  CreateDatabase(path, {RecordOf(kDense, HostTarget(1), 1e-4)});
  absl::StatusOr<std::unique_ptr<Database>> db = Database::Open(path);
  ASSERT_TRUE(db.ok()) << db.status();
  std::atomic<int> tuned{0}, failed{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&] {
      for (int i = 0; i < 50; ++i) {
        absl::StatusOr<KernelPlan> plan =
            (*db)->Plan(kDense, "host -num-threads=1");
        if (!plan.ok()) {
          ++failed;
        } else if (plan->origin.tuned()) {
          ++tuned;
        }
      }
    });
  }
  for (std::thread& t : threads) t.join();
  EXPECT_EQ(failed.load(), 0);
  EXPECT_EQ(tuned.load(), 200);
}

TEST(Api, TypedCallAndTheDefaultScheduleWithoutADatabase) {
  absl::StatusOr<std::unique_ptr<Database>> db = Database::Open("");
  ASSERT_TRUE(db.ok()) << db.status();
  absl::StatusOr<Kernel> mm =
      (*db)->GetKernel("matmul:M=3,N=5,K=2", "host -num-threads=1");
  ASSERT_TRUE(mm.ok()) << mm.status();
  EXPECT_EQ(mm->origin().source, KernelSource::kDefault);
  const std::vector<float> a = {1, 2, 3, 4, 5, 6};              // 3x2
  const std::vector<float> b = {1, 0, 2, 0, 1, 0, 1, 0, 3, 1};  // 2x5
  std::vector<float> c(15, -1);
  ASSERT_EQ((*mm)(a.data(), b.data(), c.data()), 0);
  for (int i = 0; i < 3; ++i) {
    for (int j = 0; j < 5; ++j) {
      const float want = a[i * 2] * b[j] + a[i * 2 + 1] * b[5 + j];
      EXPECT_FLOAT_EQ(c[i * 5 + j], want) << i << "," << j;
    }
  }
  // The same through an array of pointers (float**, not const).
  std::vector<float> c2(15, -1);
  std::vector<float*> args = {const_cast<float*>(a.data()),
                              const_cast<float*>(b.data()), c2.data()};
  ASSERT_EQ((*mm)(args.data()), 0);
  EXPECT_EQ(c2, c);
  // A wrong number of pointers never reaches the kernel.
  EXPECT_EQ((*mm)(a.data(), c.data()), -1);
}

TEST(Api, ObjectFileWithItsHeaderAndOrigin) {
  TempFolder dir;
  const std::string path = dir.path() + "/t.db";
  CreateDatabase(path, {RecordOf(kDense, HostTarget(1), 1e-4)});
  absl::StatusOr<std::unique_ptr<Database>> db = Database::Open(path);
  ASSERT_TRUE(db.ok()) << db.status();
  absl::StatusOr<ObjectFile> object =
      (*db)->GetObject(kDense, "host -num-threads=1", "my_dense");
  ASSERT_TRUE(object.ok()) << object.status();
  EXPECT_EQ(object->bytes.substr(0, 4),
            "\x7f"
            "ELF");
  EXPECT_NE(object->bytes.find("my_dense"), std::string::npos);
  EXPECT_NE(object->header.find("int my_dense("), std::string::npos);
  EXPECT_TRUE(object->origin.tuned());
  absl::StatusOr<ObjectFile> again =
      (*db)->GetObject(kDense, "host -num-threads=1", "my_dense");
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(object->bytes, again->bytes);
}

TEST(Api, ErrorsNameTheDatabaseAndTheSpec) {
  TempFolder dir;
  const std::string missing = dir.path() + "/missing.db";
  absl::StatusOr<std::unique_ptr<Database>> none = Database::Open(missing);
  ASSERT_FALSE(none.ok());
  EXPECT_NE(std::string(none.status().message()).find(missing),
            std::string::npos)
      << none.status();

  absl::StatusOr<std::unique_ptr<Database>> db = Database::Open("");
  ASSERT_TRUE(db.ok());
  absl::StatusOr<Kernel> bad = (*db)->GetKernel("matmul:M=3,N=5");
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(std::string(bad.status().message()).find("matmul:M=3,N=5: "),
            std::string::npos)
      << bad.status();
  EXPECT_NE(std::string(bad.status().message()).find("K"), std::string::npos)
      << bad.status();
  absl::StatusOr<Kernel> bad_target =
      (*db)->GetKernel("matmul:M=3,N=5,K=2", "gpu -x");
  ASSERT_FALSE(bad_target.ok());
  EXPECT_NE(
      std::string(bad_target.status().message()).find("matmul:M=3,N=5,K=2"),
      std::string::npos)
      << bad_target.status();
  absl::StatusOr<ObjectFile> bad_name =
      (*db)->GetObject("matmul:M=3,N=5,K=2", "host", "a-b");
  ASSERT_FALSE(bad_name.ok());
  EXPECT_NE(std::string(bad_name.status().message()).find("a-b"),
            std::string::npos);
}

}  // namespace
}  // namespace lathe::api
