#pragma once
// Shared by the task parser's two units (TaskParse.cpp, TaskParseFields.cpp); nothing else
// includes it. Every function throws json::SchemaError with the JSON pointer at fault.

#include "engine/core/JsonReader.h"
#include "engine/task/Task.h"

#include <filesystem>
#include <set>
#include <string>
#include <utility>
#include <vector>

namespace kf::taskparse {

/// The longest task, tensor, symbol or parameter name (a name is a C identifier in generated code).
inline constexpr std::size_t kMaxNameLength = 200;

/// The most bindings one of /shapes/tests and /shapes/benchmarks may list. Every test shape is
/// a run with its own inputs and reference; a list longer than this is a generated file gone
/// wrong, and refusing it keeps validation to about a second (docs/task-schema.md).
inline constexpr std::size_t kMaxShapesPerList = 100000;

/// Parsing context: what names are in scope so references can be checked as they are read.
struct Ctx {
    const std::filesystem::path* dir = nullptr;
    std::set<std::string> symbols;
    std::set<std::string> params;
    std::set<std::string> tensors; // inputs + outputs
};


bool isIdentifier(const std::string& s);
std::string identifier(const nlohmann::json& v, const std::string& ptr, const std::string& what);
std::string joined(const std::vector<std::string>& v);
/// An expression field (a number or expression text) whose names must be in `ctx`.
Expr expression(const nlohmann::json& v, const std::string& ptr, const Ctx& ctx, const std::string& what);

Distribution parseDistribution(const nlohmann::json& v, const std::string& ptr, DType dtype);
/// The distributions an input gets when task.json names none (by dtype).
std::vector<Distribution> defaultDistributions(DType t);
Tolerance parseTolerance(const nlohmann::json& v, const std::string& ptr, DType t);
void parseDefines(const nlohmann::json& v, const std::string& ptr, std::vector<std::pair<std::string, std::string>>& out);
Candidate parseCandidate(const nlohmann::json& v, const std::string& ptr, const Ctx& ctx);
/// A candidate's "tune" block (its defines already parsed into `c`).
TuneSpace parseTune(const nlohmann::json& v, const std::string& ptr, const Candidate& c, const Ctx& ctx);
/// parseCandidate after file, description, defines and tune: scratch and launches, in `ctx`.
Candidate parseCandidateBody(kf::json::Object& o, Candidate c, const Ctx& ctx);
ShapeBinding parseBinding(const nlohmann::json& v, const std::string& ptr, const Task& task);
/// Every candidate's launch plan evaluated at every listed shape: the first failure names its pointer.
void checkLaunches(const Task& task, const std::string& candidatesPtr);

} // namespace kf::taskparse
