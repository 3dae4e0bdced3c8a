#pragma once
// The command line both commands of kforge-cast read (CastRunTool.cpp's `run`, CastModelTool.cpp's
// `model`): one package, the options they share, and each command's own options.
#include <functional>
#include <string>
#include <vector>

struct CastToolArgs {
    std::string package, device;
    int runs = 20;
    bool noKernels = false, json = false;
};

/// Gives the value after the option being read ("" at the end of the line).
using OptionValue = std::function<std::string()>;
/// Takes one of the command's own options (reading its value if it has one); false if it is not one.
using OwnOption = std::function<bool(const std::string& option, const OptionValue& value)>;

/// Reads `rest` after the command word into `a`: --device, --runs, --no-kernels and --json here,
/// the rest through `own`, one word without a dash as the package. Empty, or why the line is wrong.
std::string readCastToolArgs(const std::vector<std::string>& rest, CastToolArgs& a, const OwnOption& own);
