#pragma once
#include <CLI/CLI.hpp>

#include <string>
#include <vector>

namespace kf::cli {

struct CompileArgs {
    std::string path;                       ///< task folder, task.json or a .cu file
    std::vector<std::string> archs;
    std::string candidate;
    bool json = false;
    bool showPtx = false;
    bool showSass = false;
    bool noCache = false;
    std::vector<std::string> defines;       ///< NAME or NAME=VALUE
    std::vector<std::string> includeDirs;
    std::vector<std::string> nameExpressions;
    bool fastMath = false;
    std::string cxxStd = "c++17";
    int optLevel = 3;
    int maxRegisters = 0;
    int blockSize = 256;
    int dynamicShared = 0;
};

/// Registers `kforge compile` on `app`; the callback stores the exit code in `exitCode`.
void addCompileCommand(CLI::App& app, int& exitCode);

} // namespace kf::cli
