#include "tests/compiler/codegen/cuda/cuda_emulation.h"

#include <dlfcn.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <sstream>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace lathe::cuda::testing {
namespace {

// C headers only (the C++ library's <thread> and <algorithm> would take most
// of the host compiler's time on every emulated module): min and max as
// std::min and std::max define them, a block's threads as pthreads.
constexpr char kPrelude[] = R"(
#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
struct lathe_dim3 { unsigned x = 0, y = 0, z = 0; };
static thread_local lathe_dim3 threadIdx, blockIdx;
static pthread_barrier_t lathe_barrier;
static inline void __syncthreads() { pthread_barrier_wait(&lathe_barrier); }
static inline float __int_as_float(unsigned v) { float f; memcpy(&f, &v, 4); return f; }
template <typename T> static inline const T& min(const T& a, const T& b) { return b < a ? b : a; }
template <typename T> static inline const T& max(const T& a, const T& b) { return a < b ? b : a; }
template <typename F> struct lathe_thread { F* body; unsigned t; pthread_t id; };
template <typename F> static void* lathe_thread_main(void* p) {
  auto* thread = static_cast<lathe_thread<F>*>(p);
  (*thread->body)(thread->t);
  return nullptr;
}
#define __global__
#define __device__
#define __forceinline__ inline
#define __shared__ static
#define __align__(n) __attribute__((aligned(n)))
#define __launch_bounds__(n)
#define __restrict__ __restrict
)";

// The launcher of one kernel: every block in turn, its threads one after
// another; or, with barriers, the block's threads as OS threads made once
// per launch, each taking every block in turn and waiting at the end of
// each for the others (the next block reuses the __shared__ statics), so
// that a grid of thousands of blocks does not make threads by the million.
std::string Launcher(const CudaKernel& k, bool barriers) {
  std::vector<std::string> args;
  for (size_t i = 0; i < k.buffer_args.size(); ++i)
    args.push_back(absl::StrCat("(float*)args[", i, "]"));
  const std::string call =
      absl::StrCat(k.name, "(", absl::StrJoin(args, ", "), ");");
  const std::string thread_index =
      absl::StrCat("threadIdx = {t % ", k.block.x, ", t / ", k.block.x, " % ",
                   k.block.y, ", t / ", k.block.x * k.block.y, "};");
  const std::string blocks =
      absl::StrCat("for (unsigned bz = 0; bz < ", k.grid.z,
                   "; ++bz)\n"
                   "  for (unsigned by = 0; by < ",
                   k.grid.y,
                   "; ++by)\n"
                   "  for (unsigned bx = 0; bx < ",
                   k.grid.x, "; ++bx) {\n");
  const int64_t threads = k.block.Count();
  if (!barriers) {
    return absl::StrCat("extern \"C\" void lathe_launch_", k.name,
                        "(void** args) {\n  ", blocks,
                        "    blockIdx = {bx, by, bz};\n"
                        "    for (unsigned t = 0; t < ",
                        threads, "; ++t) {\n      ", thread_index, "\n      ",
                        call, "\n    }\n  }\n}\n");
  }
  return absl::StrCat(
      "extern \"C\" void lathe_launch_", k.name, "(void** args) {\n",
      "  auto thread = [&](unsigned t) {\n    ", thread_index, "\n    ", blocks,
      "      blockIdx = {bx, by, bz};\n      ", call,
      "\n      pthread_barrier_wait(&lathe_barrier);\n    }\n  };\n",
      "  pthread_barrier_init(&lathe_barrier, nullptr, ", threads, ");\n",
      "  lathe_thread<decltype(thread)> threads[", threads, "];\n",
      "  for (unsigned t = 0; t < ", threads, "; ++t) {\n",
      "    threads[t] = {&thread, t, {}};\n",
      "    if (pthread_create(&threads[t].id, nullptr, "
      "lathe_thread_main<decltype(thread)>, &threads[t]) != 0) abort();\n",
      "  }\n", "  for (auto& t : threads) pthread_join(t.id, nullptr);\n",
      "  pthread_barrier_destroy(&lathe_barrier);\n}\n");
}

}  // namespace

absl::StatusOr<std::unique_ptr<EmulatedModule>> EmulatedModule::Load(
    const CudaModule& module) {
  char dir[] = "/tmp/lathe_emulate_XXXXXX";
  if (mkdtemp(dir) == nullptr) return absl::InternalError("mkdtemp failed");
  const std::string source = absl::StrCat(dir, "/k.cc");
  const std::string library = absl::StrCat(dir, "/k.so");
  {
    std::ofstream out(source);
    out << kPrelude << module.source << "\n";
    const bool barriers =
        module.source.find("__syncthreads();") != std::string::npos;
    for (const CudaKernel& k : module.kernels) out << Launcher(k, barriers);
  }
  const std::string command =
      absl::StrCat("c++ -std=c++17 -O0 -w -shared -fPIC -pthread ", source,
                   " -o ", library, " > ", dir, "/log 2>&1");
  if (std::system(command.c_str()) != 0) {
    std::ifstream log(absl::StrCat(dir, "/log"));
    std::stringstream text;
    text << log.rdbuf();
    std::system(absl::StrCat("rm -rf ", dir).c_str());
    return absl::InvalidArgumentError(
        absl::StrCat("emulation: the source does not compile for the host: ",
                     text.str().substr(0, 3000)));
  }
  void* handle = dlopen(library.c_str(), RTLD_NOW | RTLD_LOCAL);
  std::system(absl::StrCat("rm -rf ", dir).c_str());
  if (handle == nullptr) return absl::InternalError(dlerror());
  std::unique_ptr<EmulatedModule> loaded(new EmulatedModule());
  loaded->module_ = module;
  loaded->handle_ = handle;
  for (const CudaKernel& k : module.kernels) {
    void* launch = dlsym(handle, absl::StrCat("lathe_launch_", k.name).c_str());
    if (launch == nullptr) {
      return absl::InternalError(absl::StrCat("no launcher of ", k.name));
    }
    loaded->launchers_.push_back(launch);
  }
  return loaded;
}

EmulatedModule::~EmulatedModule() {
  if (handle_ != nullptr) dlclose(handle_);
}

void EmulatedModule::Run(const std::vector<float*>& params) const {
  std::vector<std::vector<float>> scratch;
  std::vector<float*> buffers;
  for (const DeviceBufferSpec& b : module_.buffers) {
    if (b.param_index >= 0) {
      buffers.push_back(params[b.param_index]);
    } else {
      scratch.emplace_back(b.bytes / 4 + 1, __builtin_nanf(""));
      buffers.push_back(scratch.back().data());
    }
  }
  for (size_t k = 0; k < module_.kernels.size(); ++k) {
    std::vector<void*> args;
    for (int b : module_.kernels[k].buffer_args) args.push_back(buffers[b]);
    reinterpret_cast<void (*)(void**)>(launchers_[k])(args.data());
  }
}

absl::Status RunEmulated(const CudaModule& module,
                         const std::vector<float*>& params) {
  absl::StatusOr<std::unique_ptr<EmulatedModule>> loaded =
      EmulatedModule::Load(module);
  if (!loaded.ok()) return loaded.status();
  (*loaded)->Run(params);
  return absl::OkStatus();
}

}  // namespace lathe::cuda::testing
