// The compiler hooks of `lathe serve` (daemon.h, DaemonCompilerHooks):
// every target ParseTarget reads (CPU targets through LLVM's host
// detection, cuda targets), and each ended job's HTML report beside the
// database (report/report_file.h).
// Tests: tests/tuner/service/daemon_test.cc (its daemons use them).
#pragma once

#include "tuner/service/daemon.h"

namespace lathe::service {

DaemonCompilerHooks CompilerHooks();

}  // namespace lathe::service
