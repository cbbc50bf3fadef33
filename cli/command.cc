#include "cli/command.h"

#include <cmath>
#include <cstdio>
#include <new>
#include <stdexcept>
#include <string>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "absl/strings/strip.h"
#include "base/clock_duration.h"
#include "base/untrusted_text.h"

#ifndef LATHE_VERSION
#define LATHE_VERSION "unknown"
#endif

namespace lathe::cli {
namespace {

// A command's failed Status on its way out of CLI11's parse().
class CommandFailed : public std::runtime_error {
 public:
  explicit CommandFailed(const absl::Status& status)
      : std::runtime_error(std::string(status.message())) {}
};

// `lathe --check-args COMMAND ...`: parse the command line and stop before
// the command runs (deploy/'s test checks its unit and compose files' command
// lines with it).
bool g_check_args = false;

// The promise of docs/architecture.md ("The command line"): one clear line on
// stderr.
// The most of an error message the error line shows.
constexpr size_t kMaxErrorLineBytes = 4096;

int Fail(const std::string& message, int code) {
  // One line, bounded, with no control byte or broken UTF-8 of whatever
  // input a message echoes reaching the terminal.
  const std::string line =
      EscapedPrefix(absl::StrReplaceAll(message, {{"\n", " "}}),
                    kMaxErrorLineBytes, /*escape_backslash=*/false);
  std::fprintf(stderr, "lathe: error: %s\n", line.c_str());
  return code;
}

}  // namespace

void ConfigureApp(CLI::App& app) {
  app.set_version_flag("--version", "lathe " LATHE_VERSION);
  app.require_subcommand(1);
  app.fallthrough(false);
  // Hidden (empty group).
  app.add_flag("--check-args", g_check_args,
               "parse the command line, run nothing, exit 0 when it is valid")
      ->group("");
}

void SetAction(CLI::App* command, std::function<absl::Status()> action) {
  command->callback([action = std::move(action)] {
    if (g_check_args) return;
    absl::Status status = action();
    if (!status.ok()) throw CommandFailed(status);
  });
}

int RunApp(CLI::App& app, int argc, char** argv) {
  try {
    app.parse(argc, argv);
    // Output that could not be written (a full disk, a closed pipe) is a
    // failure, not a result.
    if (std::fflush(stdout) != 0 || std::ferror(stdout)) {
      return Fail("cannot write the output (standard output)", kExitFailure);
    }
    return 0;
  } catch (const CLI::Success& e) {
    // --help and --version: CLI11 prints them and reports success.
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    return Fail(std::string(e.what()) + " (see lathe --help)", kExitUsage);
  } catch (const CommandFailed& e) {
    return Fail(e.what(), kExitFailure);
  } catch (const std::bad_alloc&) {
    // A workload or trace too large for this machine: say so, not "bad_alloc".
    return Fail(
        "out of memory (the workload, trace or file is too large for this "
        "machine)",
        kExitFailure);
  } catch (const std::exception& e) {
    return Fail(std::string("unexpected: ") + e.what(), kExitFailure);
  }
}

namespace {

CLI::Validator NumberAbove(double bound, bool inclusive) {
  const std::string rule = absl::StrCat(inclusive ? ">= " : "> ", bound);
  return CLI::Validator(
      [bound, inclusive, rule](std::string& text) -> std::string {
        double value = 0;
        // Finite: an infinite --min-time timed forever.
        const bool ok = absl::SimpleAtod(text, &value) &&
                        std::isfinite(value) &&
                        (inclusive ? value >= bound : value > bound);
        return ok ? std::string()
                  : absl::StrCat("must be a finite number ", rule, ", got \"",
                                 text, "\"");
      },
      absl::StrCat("NUMBER ", rule));
}

}  // namespace

CLI::Validator WholeNumber(int64_t min, int64_t max) {
  const std::string rule = absl::StrCat("in [", min, ", ", max, "]");
  return CLI::Validator(
      [min, max, rule](std::string& text) -> std::string {
        int64_t value = 0;
        const bool ok =
            absl::SimpleAtoi(text, &value) && value >= min && value <= max;
        return ok ? std::string()
                  : absl::StrCat("must be a whole number ", rule, ", got \"",
                                 text, "\"");
      },
      absl::StrCat("INTEGER ", rule));
}

CLI::Validator NonNegativeNumber() {
  return NumberAbove(0, /*inclusive=*/true);
}
CLI::Validator PositiveNumber() { return NumberAbove(0, /*inclusive=*/false); }

namespace {

CLI::Validator SecondsIn(bool positive) {
  return CLI::Validator(
      [positive](std::string& text) -> std::string {
        double value = 0;
        if (!absl::SimpleAtod(text, &value)) {
          return absl::StrCat("must be a number of seconds, got \"",
                              EscapedPrefix(text), "\"");
        }
        absl::Status st = CheckDurationSeconds("", value, positive);
        return st.ok() ? std::string()
                       : std::string(absl::StripPrefix(st.message(), " "));
      },
      absl::StrCat("SECONDS in ", positive ? "(0, " : "[0, ",
                   kMaxDurationSeconds, "]"));
}

}  // namespace

CLI::Validator Seconds() { return SecondsIn(/*positive=*/true); }
CLI::Validator NonNegativeSeconds() { return SecondsIn(/*positive=*/false); }

}  // namespace lathe::cli
