// Tests of compiler/codegen/kernel_library.h, kernel_header.h and
// kernel_program.h; the libraries are linked and run by tests/cli.
#include "compiler/codegen/kernel_library.h"

#include <string>
#include <vector>

#include "compiler/codegen/cpu_target.h"
#include "compiler/codegen/runtime_objects.h"
#include "compiler/workload/spec.h"
#include "gtest/gtest.h"

namespace lathe {
namespace {

Workload Spec(const std::string& spec) {
  absl::StatusOr<Workload> w = ParseWorkloadSpec(spec);
  EXPECT_TRUE(w.ok()) << w.status();
  return *w;
}

TEST(KernelLibrary, KindFollowsTheExtension) {
  EXPECT_EQ(*LibraryKindForPath("out/k.o"), LibraryKind::kObject);
  EXPECT_EQ(*LibraryKindForPath("k.a"), LibraryKind::kStatic);
  EXPECT_EQ(*LibraryKindForPath("/x/libk.so"), LibraryKind::kShared);
  absl::StatusOr<LibraryKind> bad = LibraryKindForPath("k.dll");
  EXPECT_EQ(bad.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(std::string(bad.status().message()).find("k.dll"),
            std::string::npos);
}

TEST(KernelLibrary, EmbedsTheRuntimeObjects) {
  const std::vector<EmbeddedObject>& objects = RuntimeObjects();
  ASSERT_FALSE(objects.empty());
  for (const EmbeddedObject& o : objects) {
    ASSERT_GE(o.size, 4u) << o.name;
    EXPECT_EQ(std::string(reinterpret_cast<const char*>(o.data), 4),
              "\x7f"
              "ELF")
        << o.name;
  }
}

TEST(KernelLibrary, ObjectAndArchiveAreReproducible) {
  Workload w = Spec("matmul:M=8,N=12,K=5");
  Target target = HostTarget(2);
  absl::StatusOr<KernelProgram> k1 = MakeKernelProgram(w, nullptr, target);
  absl::StatusOr<KernelProgram> k2 = MakeKernelProgram(w, nullptr, target);
  ASSERT_TRUE(k1.ok() && k2.ok());
  EXPECT_EQ(k1->structural_hash, k2->structural_hash);
  absl::StatusOr<std::string> o1 = KernelObject(*k1, target, "mm");
  absl::StatusOr<std::string> o2 = KernelObject(*k2, target, "mm");
  ASSERT_TRUE(o1.ok() && o2.ok());
  EXPECT_EQ(*o1, *o2);
  absl::StatusOr<std::string> a1 = KernelStaticLibrary(*o1, "mm");
  absl::StatusOr<std::string> a2 = KernelStaticLibrary(*o2, "mm");
  ASSERT_TRUE(a1.ok() && a2.ok()) << a1.status();
  EXPECT_EQ(*a1, *a2);
  EXPECT_EQ(a1->substr(0, 8), "!<arch>\n");
  EXPECT_NE(a1->find("mm.o/"), std::string::npos);
}

TEST(KernelHeader, DefaultFunctionNameIsACIdentifier) {
  EXPECT_EQ(DefaultFunctionName(Spec("matmul:M=512,N=256,K=128")),
            "matmul_512x256x128");
  std::string conv = DefaultFunctionName(
      Spec("conv2d_nchw:N=1,C=8,H=8,W=8,K=8,R=3,S=3,pad=1"));
  EXPECT_EQ(conv.rfind("conv2d_nchw_1x8x8x8x8x3x3", 0), 0u) << conv;
  EXPECT_TRUE(IsCIdentifier(conv));
  EXPECT_TRUE(IsCIdentifier(DefaultFunctionName(
      Spec("custom:C[i,j] += A[i,k] * B[k,j]|i=4,j=4,k=4"))));
  EXPECT_FALSE(IsCIdentifier("9lives"));
  EXPECT_FALSE(IsCIdentifier("a-b"));
  // Keywords (the header is C and C++), reserved names and main.
  // The runtime's names: a kernel named lathe_parallel_for called itself.
  for (const char* taken :
       {"int", "return", "class", "bool", "_Bool", "__kernel", "main",
        "lathe_parallel_for", "lathe_alloc", "lathe"}) {
    EXPECT_FALSE(IsCIdentifier(taken)) << taken;
  }
  for (const char* free :
       {"integer", "_kernel", "my_main", "Class", "latheconv", "my_lathe_mm"}) {
    EXPECT_TRUE(IsCIdentifier(free)) << free;
  }
}

TEST(KernelHeader, DocumentsShapesWorkloadTargetAndThreads) {
  Workload w = Spec("matmul:M=8,N=12,K=5");
  Target target = HostTarget(2);
  absl::StatusOr<KernelProgram> k = MakeKernelProgram(w, nullptr, target);
  ASSERT_TRUE(k.ok());
  std::string h = KernelHeader(w, *k, target, "mm", LibraryKind::kStatic);
  EXPECT_NE(
      h.find("int mm(\n    /* A: float32[8, 5] (row-major) */ const float* A,"),
      std::string::npos)
      << h;
  EXPECT_NE(h.find("/* C: float32[8, 12] (row-major) */ float* C);"),
            std::string::npos)
      << h;
  EXPECT_NE(h.find(w.CanonicalForm()), std::string::npos);
  EXPECT_NE(h.find(target.ToString()), std::string::npos);
  EXPECT_NE(h.find(k->structural_hash), std::string::npos);
  EXPECT_NE(h.find("extern \"C\""), std::string::npos);
  EXPECT_NE(h.find("void lathe_set_num_threads(int n);"), std::string::npos);
  EXPECT_NE(h.find("void lathe_release_scratch(void);"), std::string::npos)
      << h;
  EXPECT_NE(h.find("An output must not overlap an input"), std::string::npos)
      << h;
  std::string so = KernelHeader(w, *k, target, "mm", LibraryKind::kShared);
  EXPECT_NE(so.find("void mm_set_num_threads(int n);"), std::string::npos)
      << so;
  EXPECT_NE(so.find("void mm_release_scratch(void);"), std::string::npos) << so;
  EXPECT_EQ(so.find("lathe_release_scratch"), std::string::npos) << so;
}

// Libraries of several kernels: one object, one header.
struct TwoKernels {
  Workload mm = Spec("matmul:M=8,N=12,K=5");
  Workload dense = Spec("dense:M=4,N=16,K=8,bias=1,relu=1");
  Target target = HostTarget(2);
  KernelProgram mm_kernel = *MakeKernelProgram(mm, nullptr, target);
  KernelProgram dense_kernel = *MakeKernelProgram(dense, nullptr, target);
  std::vector<LibraryKernel> Kernels(const std::string& a,
                                     const std::string& b) const {
    return {{&mm, &mm_kernel, a, ""},
            {&dense, &dense_kernel, b, "database record 7"}};
  }
};

TEST(KernelLibrary, SeveralKernelsShareOneReproducibleObject) {
  TwoKernels k;
  absl::StatusOr<std::string> o1 =
      KernelObject(k.Kernels("mm", "dense"), k.target);
  absl::StatusOr<std::string> o2 =
      KernelObject(k.Kernels("mm", "dense"), k.target);
  ASSERT_TRUE(o1.ok() && o2.ok()) << o1.status();
  EXPECT_EQ(*o1, *o2);
  EXPECT_EQ(o1->substr(0, 4),
            "\x7f"
            "ELF");
  // Both symbols in the string table, and the parallel loops of each kernel
  // outlined under its own name.
  EXPECT_NE(o1->find(std::string("mm\0", 3)), std::string::npos);
  EXPECT_NE(o1->find(std::string("dense\0", 6)), std::string::npos);
  absl::StatusOr<std::string> a = KernelStaticLibrary(*o1, "lathe_kernels");
  ASSERT_TRUE(a.ok()) << a.status();
  EXPECT_NE(a->find("lathe_kernels.o/"), std::string::npos);
}

TEST(KernelLibrary, TwoKernelsOfOneNameAreRefused) {
  TwoKernels k;
  absl::StatusOr<std::string> o =
      KernelObject(k.Kernels("same", "same"), k.target);
  ASSERT_FALSE(o.ok());
  EXPECT_EQ(o.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(
      std::string(o.status().message()).find("two kernels are named same"),
      std::string::npos)
      << o.status();
  absl::StatusOr<std::string> bad =
      KernelObject(k.Kernels("mm", "no-c"), k.target);
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(std::string(bad.status().message()).find("no-c"),
            std::string::npos);
}

TEST(KernelHeader, LibraryHeaderDeclaresEveryKernel) {
  TwoKernels k;
  std::string h = KernelLibraryHeader(k.Kernels("mm", "dense"), k.target,
                                      LibraryKind::kStatic, "mlp-tuned");
  EXPECT_NE(h.find("#ifndef LATHE_MLP_TUNED_"), std::string::npos) << h;
  // Two sets' headers of one file name (in two folders) do not share a
  // guard; the same set always gets the same one.
  const auto guard_of = [](const std::string& header) {
    const size_t at = header.find("#ifndef ");
    return header.substr(at, header.find('\n', at) - at);
  };
  const std::string other =
      KernelLibraryHeader(k.Kernels("g2_mm", "g2_dense"), k.target,
                          LibraryKind::kStatic, "mlp-tuned");
  EXPECT_NE(guard_of(h), guard_of(other));
  EXPECT_EQ(guard_of(h),
            guard_of(KernelLibraryHeader(k.Kernels("mm", "dense"), k.target,
                                         LibraryKind::kStatic, "mlp-tuned")));
  EXPECT_NE(
      h.find("int mm(\n    /* A: float32[8, 5] (row-major) */ const float* A,"),
      std::string::npos)
      << h;
  EXPECT_NE(h.find("int dense(\n"), std::string::npos) << h;
  EXPECT_NE(h.find("/* bias: float32[16] (row-major) */ const float* bias"),
            std::string::npos)
      << h;
  EXPECT_NE(h.find(k.dense.CanonicalForm()), std::string::npos);
  EXPECT_NE(h.find("schedule: database record 7, structural hash " +
                   k.dense_kernel.structural_hash),
            std::string::npos)
      << h;
  EXPECT_NE(h.find("schedule: default, structural hash " +
                   k.mm_kernel.structural_hash),
            std::string::npos)
      << h;
  // Once, however many kernels.
  size_t first = h.find("void lathe_set_num_threads(int n);");
  ASSERT_NE(first, std::string::npos);
  EXPECT_EQ(h.find("void lathe_set_num_threads(int n);", first + 1),
            std::string::npos);
  std::string so = KernelLibraryHeader(k.Kernels("mm", "dense"), k.target,
                                       LibraryKind::kShared, "k");
  EXPECT_NE(so.find("void mm_set_num_threads(int n);"), std::string::npos)
      << so;
  EXPECT_NE(so.find("void dense_set_num_threads(int n);"), std::string::npos)
      << so;
  EXPECT_NE(so.find("void mm_release_scratch(void);"), std::string::npos) << so;
  EXPECT_NE(so.find("void dense_release_scratch(void);"), std::string::npos)
      << so;
  EXPECT_NE(h.find("void lathe_release_scratch(void);"), std::string::npos)
      << h;
  EXPECT_NE(h.find("An output must not overlap an input"), std::string::npos)
      << h;
  EXPECT_EQ(h, KernelLibraryHeader(k.Kernels("mm", "dense"), k.target,
                                   LibraryKind::kStatic, "mlp-tuned"));
}

}  // namespace
}  // namespace lathe
