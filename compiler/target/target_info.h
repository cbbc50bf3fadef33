// A target as records carry it (lathe.proto.TargetInfo): its canonical
// string, the parts the database matches compatible targets by, and a
// description of the device a measurement ran on.
// Tests: tests/compiler/target/target_info_test.cc.
#pragma once

#include <string>

#include "compiler/target/target.h"
#include "proto/record.pb.h"

namespace lathe {

// `device` is free text; empty when the record was not measured here.
proto::TargetInfo TargetInfoOf(const Target& target,
                               const std::string& device = "");

// This machine in words: "Intel(R) Xeon(R) ... (2 CPUs, 24 GiB)".
std::string HostDeviceDescription();

}  // namespace lathe
