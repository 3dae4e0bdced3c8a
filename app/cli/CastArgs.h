#pragma once
// What the parts of `kforge cast` share: CastCommand.cpp (export, inspect, check and the command
// line) and CastRun.cpp (run).
#include "engine/core/Result.h"

#include <string>
#include <vector>

namespace kf::cli::castcli {

struct CastArgs {
    std::vector<std::string> ids;
    std::string output;
    std::string archs;
    std::string ptx;
    std::vector<std::string> names;
    std::string packageName;
    std::string packageVersion = "1.0.0";
    bool allowDeprecated = false;
    std::string registry;
    std::string file;
    bool json = false;
    // cast run
    std::string device;
    int runs = 20;
    bool noKernels = false;
    std::string op;
    // models
    std::vector<std::string> models;    // export: [NAME=]FILE
    std::vector<std::string> inputs;    // export: [NAME=]FILE, by position or name
    std::string model;                  // run: which model
    int warmup = 5;
    bool check = false;
    bool allowFallback = false;
    bool record = false;
};

/// Says `e` (as the command's JSON document with --json) and returns `code`.
int reportError(const Error& e, bool asJson, const char* command, int code);
/// The exit code of a package that does not open: usage, environment (no SHA-256) or failed.
int openFailureCode(const Error& e);
/// `kforge cast run`: the package's model, or its ops through kforge-cast.
int runCommand(const CastArgs& a);

} // namespace kf::cli::castcli
