#pragma once
// A failing case on disk: what the runner saves for a failing trial when asked to (the
// request's `dump`), and what the inspector, `kforge verify --repro` and repro bundles read.
//
//   <case>/case.json              this model (written last: its presence means the case is whole)
//   <case>/inputs/<name>.npy      the inputs exactly as the candidate and the reference saw them
//   <case>/expected/<name>.npy    the reference, float64: the numbers the verdict compared with
//                                 (the golden float64 result when there was one)
//   <case>/libtorch/<name>.npy    LibTorch's own result as float64, only beside a golden result
//   <case>/actual/<name>.npy      the candidate's output of run 0, sentinels left in place
//   <case>/actual/<name>.run1.npy the second run's output, only when the runs disagreed
//
// Tensors are NumPy .npy files (engine/verify/Npy.h); docs/tensor-files.md documents the layout.

#include "engine/core/Result.h"
#include "engine/task/DType.h"
#include "engine/task/Task.h"

#include <nlohmann/json.hpp>

#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

namespace kf {

inline constexpr const char* kCaseFile = "case.json";
inline constexpr int kCaseSchemaVersion = 1;

struct CaseTensor {
    enum class Role { Input, Expected, Actual, Libtorch };
    std::string name;
    Role role = Role::Input;
    int run = 0;                         ///< Actual only: 0 or 1
    DType dtype = DType::F32;
    std::vector<std::int64_t> extents;
    std::string file;                    ///< relative to the case folder
};
std::string_view caseRoleName(CaseTensor::Role r);  ///< "input", "expected", "actual", "libtorch"

/// One output's verdict facts: enough to re-judge every element (classify()) without the runner.
struct CaseOutput {
    std::string name;
    DType dtype = DType::F32;
    double atolEffective = 0;
    double rtol = 0;
    std::vector<unsigned char> sentinel[2];  ///< per run: one element's bytes marking "never written"
    nlohmann::json check;                    ///< the report's OutputCheck for run 0, as the runner sent it
};

struct CaseInfo {
    std::string taskName;
    std::string taskHash;
    std::string candidateFile;      ///< file name of the candidate (no folder)
    std::string sourceHash;
    std::string arch;               ///< "sm_90"
    ShapeBinding shape;
    std::string set;                ///< "tests", "held_out", "repro", ...
    int shapeIndex = 0;             ///< position in the request's shapes
    int trial = 0;
    std::string seed;               ///< "0x…", as in the report
    std::string inputsFrom = "seeded";  ///< "seeded" or "file" (a repro run)
    nlohmann::json distributions = nlohmann::json::object();
    std::string failure;            ///< the trial's failure sentence
    nlohmann::json trialReport;     ///< the trial's object of the report (its verdict in full), when known
    nlohmann::json environment = nlohmann::json::object();  ///< gpu, driver, torch...
    std::vector<CaseTensor> tensors;
    std::vector<CaseOutput> outputs;

    const CaseTensor* find(std::string_view name, CaseTensor::Role role, int run = 0) const;
    const CaseOutput* output(std::string_view name) const;
};

/// "03-tail-N4099-t0": shape position, label or values, trial. Safe as a folder name.
std::string caseFolderName(int shapeIndex, const ShapeBinding& shape, int trial);

nlohmann::json toJson(const CaseInfo& c);
/// Reads `<dir>/case.json`; every malformed field is an error naming its JSON pointer. Does not
/// open the tensor files.
Result<CaseInfo> readCase(const std::filesystem::path& dir);

/// A tensor's bytes to save with a case: `meta.file` is filled in by writeCase.
struct CaseTensorData {
    CaseTensor meta;
    const void* data = nullptr;
    std::size_t bytes = 0;
};

/// Writes the tensors, then case.json (atomically, last). `info.tensors` is replaced by the
/// written list. Used by the runner and by tests that need a case without a GPU.
Result<void> writeCase(const std::filesystem::path& dir, CaseInfo info, const std::vector<CaseTensorData>& tensors);

std::string toHex(const std::vector<unsigned char>& bytes);
std::vector<unsigned char> fromHex(std::string_view hex);  ///< empty on malformed input

} // namespace kf
