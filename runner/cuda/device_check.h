// The check before any time counts, for CUDA candidates with large
// operands: CheckAgainstReference's comparison (reference_check.h) made on
// the device, so that a GEMM of 4096^3 does not move 192 MB across PCIe and
// compare 16M floats on the CPU for every candidate.
//
// Per (workload, seed) the check's inputs and the reference's outputs (the
// ReferenceCache's entry) are uploaded once and kept. Per candidate: the
// inputs copied device to device into the candidate's own buffers (a kernel
// that writes its inputs cannot change the next check's), its outputs
// filled with 0xFF bytes (NaN: a kernel that skips an element cannot pass),
// the candidate's kernels run, and each output compared with the reference
// by a comparison kernel with IsClose's rule in double precision (NaN only
// against NaN, an infinity only against itself, else |a - e| <= atol + rtol
// |e|; allclose.h), which reports the first mismatching index of each block.
// A mismatch is not a verdict: the caller runs the host check, which names
// the element (and settles any doubt about this one).
// Tests: tests/runner/cuda/device_check_test.cc (the comparison kernel
// through NVRTC and ptxas here; on a device, with a GPU).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "compiler/codegen/cuda/cuda_driver.h"
#include "compiler/measure/reference_check.h"
#include "compiler/workload/workload.h"

namespace lathe::runner {

// The comparison kernel's CUDA C (one function, kCompareKernelName).
std::string CompareKernelSource();
inline constexpr char kCompareKernelName[] = "lathe_compare_outputs";

class DeviceCheck {
 public:
  // Workloads whose inputs and outputs hold at least this many bytes are
  // checked on the device; smaller ones are cheaper on the host.
  static constexpr int64_t kMinBytes = int64_t{16} << 20;
  static constexpr int kThreads = 256;
  static constexpr int kMaxBlocks = 1024;

  // The comparison kernel compiled by NVRTC for `arch` and loaded on
  // `device` (not owned; it must outlive the check).
  static absl::StatusOr<std::unique_ptr<DeviceCheck>> Create(
      cuda::CudaDevice* device, const std::string& arch);
  ~DeviceCheck();

  // Whether `entry` is large enough for the device check.
  static bool Wants(const ReferenceCache::Entry& entry);

  // Runs `module` on the entry's inputs and compares its outputs with the
  // entry's on the device. Ok when every output is close; FailedPrecondition
  // naming the output and the first mismatching index when one is not;
  // the driver's error when a copy, a launch or the kernel fails. `key`
  // names the entry (its workload and seed): the device copies of the last
  // key checked are kept (a runner checks a batch of one workload's
  // candidates in a row).
  absl::Status Check(const std::string& key, const ReferenceCache::Entry& entry,
                     const Workload& workload, cuda::LoadedModule* module);

 private:
  DeviceCheck(cuda::CudaDevice* device, void* function)
      : device_(device), function_(function) {}
  // Makes `key`'s inputs and reference the resident ones.
  absl::Status Upload(const std::string& key,
                      const ReferenceCache::Entry& entry);
  void Release();

  cuda::CudaDevice* device_;
  void* function_;
  cuda::DevicePtr first_bad_ = 0;  // kMaxBlocks int64 results
  // The resident copies: of `resident_key_` ("" when none).
  std::string resident_key_;
  std::vector<cuda::DevicePtr> inputs_, references_;
};

}  // namespace lathe::runner
