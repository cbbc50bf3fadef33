// The C++ API of Lathe for programs that compile kernels at run time.
//
//   absl::StatusOr<std::unique_ptr<lathe::api::Database>> db =
//       lathe::api::Database::Open("tuned.db");
//   absl::StatusOr<lathe::api::Kernel> mm =
//       (*db)->GetKernel("matmul:M=64,N=64,K=64");
//   int rc = (*mm)(a, b, c);  // or (*mm)(args) with float* const* args
//   if (!mm->origin().tuned()) ...  // the default schedule answered
//
// A kernel comes from the best record of (workload, target) in the
// database, its trace replayed and checked to build the program that was
// measured, else from the default schedule (api/kernel_plan.h says when and
// why). GetKernel compiles it in this process (LLVM's ORC JIT, through
// compiler/codegen/llvm/jit.h): JIT-compiled code stays loaded for the life
// of the process, so a Kernel stays callable after its Database is gone, and
// asking twice for one program compiles it once. GetObject gives an object
// file's bytes to link or ship instead (`lathe compile` writes them).
// Errors are absl::Status naming the spec and the database.
//
// Installed (find_package(Lathe), target Lathe::api): this header and
// kernel_origin.h are the whole public surface, with abseil's Status and
// StatusOr; liblathe_api.so exports lathe::api::Database and
// lathe::api::Kernel and nothing of Lathe's internals (api/lathe_api.map).
// Tests: tests/api/lathe_test.cc.
#pragma once

#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <type_traits>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "api/kernel_origin.h"

namespace lathe {
class CompiledKernel;
namespace db {
class Database;
}  // namespace db
}  // namespace lathe

namespace lathe::api {

// What Database::Plan answers (api/kernel_plan.h): in the build tree only,
// since it holds the compiler's types; not installed.
struct KernelPlan;

struct Options {
  // Let a record measured on a compatible target answer (same kind, the
  // asked-for target has all its features, any thread count).
  bool compatible = false;
  // Split the pre-packs of constant (layout-free) inputs out of the kernels
  // that have them (compiler/codegen/prepack_split.h): such a kernel then
  // takes those inputs packed (Kernel::packed_inputs, Kernel::Prepack).
  // Off: every kernel takes its inputs as the workload declares them and
  // packs inside each call.
  bool pack_constants_ahead = false;
};

// A constant input that a kernel takes packed: its position among the
// kernel's arguments, its shape as declared, and the shape of the packed
// buffer the kernel reads in its place (row-major, packed_elements floats).
struct PackedInputInfo {
  int input = 0;
  std::vector<int64_t> shape;
  std::vector<int64_t> packed_shape;
  int64_t packed_elements = 0;
};

// A JIT-compiled kernel with the C ABI of docs/architecture.md: one pointer per
// tensor, inputs in definition order then outputs, row-major; returns 0 on
// success.
class Kernel {
 public:
  // args[0..num_args()) as above.
  int operator()(float* const* args) const;
  // Typed pointers: kernel(x, w, bias, y), float* or const float*. Exactly
  // num_args() of them (a wrong count returns -1 without calling the
  // kernel). Only floats, so that kernel(vector.data()) with float** picks
  // the overload above.
  template <typename... T,
            typename = std::enable_if_t<
                (std::is_same_v<std::remove_const_t<T>, float> && ...)>>
  int operator()(T*... args) const {
    float* pointers[] = {
        const_cast<float*>(static_cast<const float*>(args))...};
    if (static_cast<int>(sizeof...(T)) != num_args()) return -1;
    return (*this)(static_cast<float* const*>(pointers));
  }

  int num_args() const;

  // The constant inputs this kernel takes packed, in argument order; empty
  // unless Options::pack_constants_ahead split a pre-pack off. For each,
  // call Prepack once on the constant's values, then pass the packed
  // buffer at args[input] on every call: the kernel reads only the packed
  // form there, so values that were not packed by Prepack give wrong
  // results.
  const std::vector<PackedInputInfo>& packed_inputs() const {
    return packed_inputs_;
  }
  // Packs `constant` (packed_inputs()[k]'s shape) into `packed`
  // (packed_elements floats, which the caller owns). Returns 0 on success,
  // -1 for a k out of range, else the prepack's status.
  int Prepack(size_t k, const float* constant, float* packed) const;

  // The workload's canonical form and the target the kernel was built for.
  const std::string& workload() const { return workload_; }
  const std::string& target() const { return target_; }
  const KernelOrigin& origin() const { return origin_; }

 private:
  friend class Database;
  std::shared_ptr<const CompiledKernel> compiled_;
  std::vector<std::shared_ptr<const CompiledKernel>> prepacks_;
  std::vector<PackedInputInfo> packed_inputs_;
  std::string workload_;
  std::string target_;
  KernelOrigin origin_;
};

// A kernel as an object file (ELF, position-independent) defining
// `function_name`; link it with the Lathe runtime when it calls it
// (kernel_library.h), or ask `lathe compile` for a self-contained .a.
struct ObjectFile {
  std::string bytes;
  std::string function_name;
  std::string header;  // the C header declaring it
  KernelOrigin origin;
};

// Plan, GetKernel and GetObject may be called from several threads at once:
// the lookups take turns on the one connection, the compiles run side by
// side.
class Database {
 public:
  // Opens the tuning database read-only (a build never writes to it). An
  // empty path opens none: every kernel gets the default schedule.
  // Errors: those of db::Database::Open, naming the file.
  static absl::StatusOr<std::unique_ptr<Database>> Open(const std::string& path,
                                                        Options options = {});
  ~Database();
  Database(const Database&) = delete;
  Database& operator=(const Database&) = delete;

  const std::string& path() const { return path_; }

  // What GetKernel and GetObject compile: the plan of kernel_plan.h (for
  // code in Lathe's build tree, which includes that header).
  // Errors: a bad spec or target (InvalidArgument naming it), a database
  // that fails to answer.
  absl::StatusOr<KernelPlan> Plan(const std::string& spec,
                                  const std::string& target = "host");

  // The kernel of `spec` for `target`, compiled in this process. Errors:
  // those of Plan; FailedPrecondition when the target cannot run here.
  absl::StatusOr<Kernel> GetKernel(const std::string& spec,
                                   const std::string& target = "host");

  // The kernel as an object file; function_name empty: the default name
  // (e.g. matmul_64x64x64).
  absl::StatusOr<ObjectFile> GetObject(const std::string& spec,
                                       const std::string& target = "host",
                                       const std::string& function_name = "");

 private:
  Database(std::string path, std::unique_ptr<db::Database> db, Options options);
  std::string path_;
  // A db::Database is one SQLite connection with its statement cache and
  // transaction state: one lookup at a time.
  std::mutex db_mutex_;
  std::unique_ptr<db::Database> db_;
  Options options_;
};

}  // namespace lathe::api
