// What every `lathe` command shares: how it runs and how it fails.
//
// A command is a CLI11 subcommand whose action returns absl::Status. RunApp
// parses the command line, runs the chosen action, and turns any failure
// (a bad command line, a failed Status, an unexpected exception) into one
// line on stderr, `lathe: error: ...`, and a non-zero exit code.
//
// Adding a command: write cli/NAME_command.h/.cc exposing
// `void AddNameCommand(CLI::App&)` that calls SetAction, add it to
// cli/CMakeLists.txt, and add one line to cli/main.cc.
// Tests: tests/compiler/workload/CMakeLists.txt runs the built binary.
#pragma once

#include <cstdint>
#include <functional>

#include <CLI/CLI.hpp>

#include "absl/status/status.h"

namespace lathe::cli {

// Exit codes: 0 success, 1 a command failed, 2 a bad command line.
inline constexpr int kExitFailure = 1;
inline constexpr int kExitUsage = 2;

// Version flag, required subcommand, help formatting, and the hidden
// `--check-args` (parse only: no action runs).
void ConfigureApp(CLI::App& app);

// Makes `action` what `command` does when chosen; a non-OK Status ends the
// program with its message.
void SetAction(CLI::App* command, std::function<absl::Status()> action);

// Option checks whose refusals read as one line ("--timeout: must be a
// finite number > 0, got \"0\""; CLI11's own range checks print the
// largest double). inf and nan are refused.
CLI::Validator NonNegativeNumber();
CLI::Validator PositiveNumber();
// Seconds that convert to a clock duration (base/clock_duration.h): a
// number in (0, kMaxDurationSeconds], or [0, ...] for NonNegativeSeconds
// ("--timeout: must be in (0, 604800] seconds ..., got 1e+300").
CLI::Validator Seconds();
CLI::Validator NonNegativeSeconds();
// An integer in [min, max], written as one ("--batch: must be a whole
// number in [1, 1024], got \"0\""): CLI11 alone took "-1" for a seed as
// 2^64 - 1.
CLI::Validator WholeNumber(int64_t min, int64_t max);

// Parses argv, runs the chosen command and returns the exit code.
int RunApp(CLI::App& app, int argc, char** argv);

}  // namespace lathe::cli
