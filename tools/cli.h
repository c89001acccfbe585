// Shared pieces of the gcomp command-line tool: exit codes and the commands; argument parsing,
// model loading and compilation come from the driver (driver/driver.h), which the library's
// in-process compilation shares.
#pragma once

#include "absl/status/status.h"
#include "driver/driver.h"

namespace gcomp::cli {

using driver::Args;
using driver::CanonicalTarget;
using driver::CheckTargetAndLevel;
using driver::CompileModel;
using driver::DefaultLevelForModel;
using driver::DefaultThreads;
using driver::EmulatesStorage;
using driver::LoadAndOptimize;
using driver::LoadCalibration;
using driver::LoadModel;
using driver::OptimizedModel;
using driver::ParseArgs;
using driver::PassOptionsFromArgs;
using driver::PrecisionOf;

// Exit codes of the CLI contract (DESIGN.md).
enum ExitCode { kOk = 0, kMismatch = 1, kBadInput = 2, kInternal = 3 };

// Exit code for a failed status: invalid or unsupported input -> 2, anything else -> 3.
int ExitCodeFor(const absl::Status& s);
// Prints "gcomp: <message>" to stderr and returns the exit code for `s`.
int Report(const absl::Status& s);

int Inspect(int argc, char** argv);
int Compile(int argc, char** argv);
int Bench(int argc, char** argv);
int Run(int argc, char** argv);
int Check(int argc, char** argv);
int Opt(int argc, char** argv);

}  // namespace gcomp::cli
