#pragma once
// A synthetic failing case for repro tests without a GPU: what one run of
// tests/gpu/tasks/broken_add/writes_nan.cu on N=7 looks like when the runner saves it (c = a + b
// with a = 0..6, b = 1, and a NaN at element 3), written with the engine's own writeCase.
#include "engine/protocol/VerifyReport.h"
#include "engine/core/Hash.h"
#include "engine/runner/RunSettings.h"
#include "engine/task/Task.h"
#include "engine/verify/CaseFiles.h"
#include "engine/verify/Compare.h"

#include <nlohmann/json.hpp>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <map>
#include <sstream>
#include <string>
#include <vector>

namespace kf::test {

namespace fs = std::filesystem;
using json = nlohmann::json;

inline constexpr const char* kCandidate = "writes_nan.cu";
inline constexpr std::uint64_t kSentinelSeed = 0x1234;
inline const float kNaN = std::numeric_limits<float>::quiet_NaN();

inline std::string readText(const fs::path& file)
{
    std::ifstream in(file, std::ios::binary);
    std::stringstream s;
    s << in.rdbuf();
    return s.str();
}

// Every file under `dir` with its bytes: a folder "untouched" compares equal.
inline std::map<std::string, std::string> snapshot(const fs::path& dir)
{
    std::map<std::string, std::string> m;
    for (const auto& e : fs::recursive_directory_iterator(dir))
        m[fs::relative(e.path(), dir).generic_string()] = e.is_regular_file() ? readText(e.path()) : std::string("<dir>");
    return m;
}

// What one run of writes_nan.cu on N=7 looked like: c = a + b with a = 0..6, b = 1.
struct CaseSpec {
    std::string taskName;                          ///< empty: the task's own
    std::string taskHash;                          ///< empty: the task's own
    std::vector<double> expected = {1, 2, 3, 4, 5, 6, 7};
    std::vector<float> actual = {1, 2, 3, kNaN, 5, 6, 7};
    std::vector<int> unwritten;                    ///< indices still holding the sentinel
    bool withTrialReport = true;
};

struct WrittenCase {
    json trial;          ///< the trial object of the report
    std::string error;   ///< empty on success
};

inline WrittenCase writeSyntheticCase(const fs::path& dir, const Task& task, const CaseSpec& spec)
{
    const std::vector<float> a = {0, 1, 2, 3, 4, 5, 6};
    const std::vector<float> b = {1, 1, 1, 1, 1, 1, 1};
    const std::vector<unsigned char> sentinel = sentinelBytes(DType::F32, 0, kSentinelSeed);
    std::vector<float> actual = spec.actual;
    for (int i : spec.unwritten)
        std::memcpy(&actual[size_t(i)], sentinel.data(), 4);

    const TensorSpec* c = task.findTensor("c");
    const Tolerance tol = c ? c->tolerance : Tolerance::defaultFor(DType::F32);
    const OutputCheck check = compareOutput("c", DType::F32, actual.data(), spec.expected.data(), {7}, tol, sentinel.data());
    const json checkJson = kf::protocol::toJson(check);

    WrittenCase w;
    w.trial = {{"trial", 1}, {"seed", "0x1234"}, {"passed", check.passed}, {"outputs", json::array({checkJson})},
               {"launch_error", ""}, {"guard_violations", json::array()}, {"modified_inputs", json::array()},
               {"runs_agree", true}};

    CaseInfo info;
    info.taskName = spec.taskName.empty() ? task.name : spec.taskName;
    info.taskHash = spec.taskHash.empty() ? taskHash(task) : spec.taskHash;
    info.candidateFile = kCandidate;
    info.sourceHash = hashHex(readText(task.directory / kCandidate));
    info.arch = "sm_90";
    info.shape.label = "prime";
    info.shape.values = {{"N", 7}};
    info.set = "tests";
    info.shapeIndex = 2;
    info.trial = 1;
    info.seed = "0x1234";
    info.failure = "output c: 1 of 7 elements differ";
    if (spec.withTrialReport)
        info.trialReport = w.trial;
    CaseOutput out;
    out.name = "c";
    out.dtype = DType::F32;
    out.atolEffective = check.atolEffective;
    out.rtol = check.rtol;
    out.sentinel[0] = sentinel;
    out.sentinel[1] = sentinelBytes(DType::F32, 1, kSentinelSeed);
    out.check = checkJson;
    info.outputs = {out};
    const std::vector<CaseTensorData> tensors = {
        {{"a", CaseTensor::Role::Input, 0, DType::F32, {7}, {}}, a.data(), a.size() * 4},
        {{"b", CaseTensor::Role::Input, 0, DType::F32, {7}, {}}, b.data(), b.size() * 4},
        {{"c", CaseTensor::Role::Expected, 0, DType::F64, {7}, {}}, spec.expected.data(), spec.expected.size() * 8},
        {{"c", CaseTensor::Role::Actual, 0, DType::F32, {7}, {}}, actual.data(), actual.size() * 4},
    };
    if (auto r = writeCase(dir, info, tensors); !r)
        w.error = r.error().message();
    return w;
}

} // namespace kf::test
