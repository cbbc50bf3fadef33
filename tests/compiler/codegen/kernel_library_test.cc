// Tests of compiler/codegen/kernel_library.h, kernel_header.h and
// kernel_program.h; the libraries are linked and run by tests/cli.
#include "compiler/codegen/kernel_library.h"

#include <string>

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
  EXPECT_NE(std::string(bad.status().message()).find("k.dll"), std::string::npos);
}

TEST(KernelLibrary, EmbedsTheRuntimeObjects) {
  const std::vector<EmbeddedObject>& objects = RuntimeObjects();
  ASSERT_FALSE(objects.empty());
  for (const EmbeddedObject& o : objects) {
    ASSERT_GE(o.size, 4u) << o.name;
    EXPECT_EQ(std::string(reinterpret_cast<const char*>(o.data), 4), "\x7f" "ELF") << o.name;
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
  EXPECT_EQ(DefaultFunctionName(Spec("matmul:M=512,N=256,K=128")), "matmul_512x256x128");
  std::string conv = DefaultFunctionName(Spec("conv2d_nchw:N=1,C=8,H=8,W=8,K=8,R=3,S=3,pad=1"));
  EXPECT_EQ(conv.rfind("conv2d_nchw_1x8x8x8x8x3x3", 0), 0u) << conv;
  EXPECT_TRUE(IsCIdentifier(conv));
  EXPECT_TRUE(IsCIdentifier(DefaultFunctionName(Spec("custom:C[i,j] += A[i,k] * B[k,j]|i=4,j=4,k=4"))));
  EXPECT_FALSE(IsCIdentifier("9lives"));
  EXPECT_FALSE(IsCIdentifier("a-b"));
}

TEST(KernelHeader, DocumentsShapesWorkloadTargetAndThreads) {
  Workload w = Spec("matmul:M=8,N=12,K=5");
  Target target = HostTarget(2);
  absl::StatusOr<KernelProgram> k = MakeKernelProgram(w, nullptr, target);
  ASSERT_TRUE(k.ok());
  std::string h = KernelHeader(w, *k, target, "mm", LibraryKind::kStatic);
  EXPECT_NE(h.find("int mm(\n    /* A: float32[8, 5] (row-major) */ const float* A,"), std::string::npos) << h;
  EXPECT_NE(h.find("/* C: float32[8, 12] (row-major) */ float* C);"), std::string::npos) << h;
  EXPECT_NE(h.find(w.CanonicalForm()), std::string::npos);
  EXPECT_NE(h.find(target.ToString()), std::string::npos);
  EXPECT_NE(h.find(k->structural_hash), std::string::npos);
  EXPECT_NE(h.find("extern \"C\""), std::string::npos);
  EXPECT_NE(h.find("void lathe_set_num_threads(int n);"), std::string::npos);
  std::string so = KernelHeader(w, *k, target, "mm", LibraryKind::kShared);
  EXPECT_NE(so.find("void mm_set_num_threads(int n);"), std::string::npos) << so;
}

}  // namespace
}  // namespace lathe
