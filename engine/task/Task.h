#pragma once
// The task model: what a kernel must compute, on which shapes, checked how, launched how.
// Schema v1 is documented in docs/task-schema.md. Qt-free; plain values, cheap to copy.

#include "engine/core/Result.h"
#include "engine/task/DType.h"
#include "engine/task/Expr.h"

#include <nlohmann/json.hpp>

#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace kf {

inline constexpr int kTaskSchemaVersion = 1;

/// How the values of one input are drawn for a trial.
struct Distribution {
    enum class Kind { Normal, Uniform, HeavyTailed, MixedScales, IntRange, Special };
    Kind kind = Kind::Normal;
    double mean = 0.0, std = 1.0;          ///< normal
    double low = -1.0, high = 1.0;         ///< uniform; int_range (inclusive) for integer inputs
    double dof = 3.0, scale = 1.0;         ///< heavy_tailed: Student-t degrees of freedom, scale
    std::vector<double> scales;            ///< mixed_scales: each row scaled by one of these
    std::vector<double> specialValues;     ///< special: NaN/Inf allowed (JSON strings "nan","inf","-inf")
    double fraction = 0.01;                ///< special: fraction of elements replaced
    nlohmann::json toJson() const;
};
std::string_view distributionKindName(Distribution::Kind k);

/// |actual - expected| <= atol_eff + rtol * |expected|, with
/// atol_eff = atol * rms(expected) when atolMode == Rms (default), else atol.
struct Tolerance {
    enum class AtolMode { Rms, Absolute };
    double rtol = 0.0;
    double atol = 0.0;
    AtolMode atolMode = AtolMode::Rms;
    static Tolerance defaultFor(DType t);
};

struct TensorSpec {
    std::string name;
    DType dtype = DType::F32;
    std::vector<std::string> shape;            ///< symbol names or integer literals ("4")
    std::vector<Distribution> distributions;   ///< inputs: cycled across trials (defaults by dtype)
    Tolerance tolerance;                       ///< outputs: defaults by dtype unless overridden
    bool toleranceGiven = false;
};

/// A concrete binding of every shape symbol, e.g. {B: 7, D: 4097}.
struct ShapeBinding {
    std::string label;                           ///< optional name shown in reports
    std::map<std::string, std::int64_t, std::less<>> values;
    std::string describe() const;                ///< "B=7 D=4097"
};

struct SymbolSpec {
    std::string name;
    std::int64_t min = 1;
    std::int64_t max = INT64_MAX;
    std::int64_t multipleOf = 1;
};

/// One op of the LibTorch catalog applied to named values.
struct OpStep {
    std::string op;
    std::vector<std::string> inputs;
    nlohmann::json attrs = nlohmann::json::object();
    std::string output;
};

struct Reference {
    enum class Kind { Op, Tape, TorchScript };
    Kind kind = Kind::Op;
    std::vector<OpStep> steps;            ///< Op: one step whose output is the task output
    std::filesystem::path torchscript;    ///< TorchScript: path relative to the task folder
    std::vector<std::string> scriptInputs;
};

struct LaunchArg {
    enum class Kind { Tensor, Scalar };
    Kind kind = Kind::Tensor;
    std::string tensor;                 ///< input, output or scratch name
    Expr scalar;                        ///< scalar value
    std::string scalarType = "int32";   ///< int32, int64, uint32, uint64, fp32, fp64
};

struct Scratch {
    std::string name;
    DType dtype = DType::F32;
    Expr count;                         ///< number of elements
    bool zero = true;                   ///< zero-filled before the first launch
};

struct Launch {
    std::string kernel;                 ///< C++ name expression: "vector_add", "softmax_rows<256>"
    Expr grid[3];
    Expr block[3];
    Expr sharedBytes;                   ///< dynamic shared memory
    std::vector<LaunchArg> args;
};

struct CompileSettings {
    std::string cxxStd = "c++17";
    bool fastMath = false;
    std::vector<std::pair<std::string, std::string>> defines;
    std::vector<std::string> includeDirs; ///< relative to the task folder
    std::vector<std::string> extraOptions;
};

/// What `kforge tune` may vary in a candidate (docs/tune.md): other values for some of its
/// defines, and the conditions a combination must meet to be tried.
struct TuneSpace {
    /// define -> the values to try (macro text, as "defines" holds them), by define name.
    std::vector<std::pair<std::string, std::vector<std::string>>> params;
    std::vector<Expr> where;            ///< over the defines, parameters: each nonzero for a point to be tried
    bool empty() const { return params.empty(); }
};

struct Candidate {
    std::string file;                   ///< relative to the task folder
    std::string description;
    std::vector<Launch> launches;
    std::vector<Scratch> scratch;
    std::vector<std::pair<std::string, std::string>> defines;
    TuneSpace tune;

    /// The defines whose value is a number ("256", "0.5"): names its launch plan and scratch
    /// counts may use beside the task's symbols and parameters.
    Env constants() const;
    /// The value of define `name`, or nullptr.
    const std::string* define(std::string_view name) const;
};

struct Task {
    int schemaVersion = kTaskSchemaVersion;
    std::string name;
    std::string description;
    std::vector<std::string> architectures;     ///< "sm_90", "sm_80"...
    std::map<std::string, Value, std::less<>> parameters; ///< JSON integers stay integers
    std::vector<TensorSpec> inputs;
    std::vector<TensorSpec> outputs;
    std::vector<SymbolSpec> symbols;            ///< every symbol used by a shape, with its range
    std::vector<Expr> constraints;
    std::vector<ShapeBinding> testShapes;
    std::vector<ShapeBinding> benchmarkShapes;
    Reference reference;
    CompileSettings compile;
    std::vector<Candidate> candidates;
    Expr bytesFormula;
    Expr flopsFormula;

    std::filesystem::path directory;            ///< where task.json was read from (not serialised)

    const TensorSpec* findTensor(std::string_view name) const;
    const Candidate* findCandidate(std::string_view file) const;
    /// Shape symbols plus parameters, for expression evaluation on one binding.
    Env environment(const ShapeBinding& shape) const;
    /// The same plus `candidate`'s numeric defines (Candidate::constants), for its launch plan.
    Env environment(const Candidate& candidate, const ShapeBinding& shape) const;
    /// Concrete extents of a tensor under a binding.
    Result<std::vector<std::int64_t>> extents(const TensorSpec& t, const ShapeBinding& shape) const;
    /// Whether `shape` is a binding this task accepts: every symbol bound, within [min, max] and
    /// a multiple of multiple_of (counted from 0, as the validator does), every constraint
    /// nonzero, every tensor's extents computable. The error names the symbol or constraint at
    /// fault and the value. Symbols the task does not declare are ignored.
    Result<void> admits(const ShapeBinding& shape) const;
    /// Elements of every input and output under `shape`, or -1 when an extent cannot be evaluated.
    std::int64_t totalElements(const ShapeBinding& shape) const;
};

/// One launch made concrete for a shape.
struct LaunchGeometry {
    std::int64_t grid[3] = {1, 1, 1};
    std::int64_t block[3] = {1, 1, 1};
    std::int64_t sharedBytes = 0;     ///< dynamic shared memory
};

/// Evaluates a launch's grid, block and dynamic shared memory for `shape` and checks CUDA's
/// limits (grid dimensions, 1024 threads per block). On failure Error::pointer names the field
/// ("grid", "block" or "shared_bytes") and Error::why starts with "for <shape>". The one place
/// launch plans are evaluated: the task validator, the static analysis and the runner share it.
Result<LaunchGeometry> evaluateLaunch(const Task& task, const Candidate& candidate, const Launch& launch,
                                      const ShapeBinding& shape);

/// Reads `<dir>/task.json` (or the file itself when given a .json path) and validates it
/// completely: unknown keys, types, dtype names, symbol use, expressions, reference ops,
/// launch arguments, shape bindings against the symbol ranges and constraints. Errors carry the
/// file, the JSON pointer and a sentence saying what to fix.
Result<Task> loadTask(const std::filesystem::path& dirOrFile);
/// The same for a command that works on `onlyCandidates` (files as task.json lists them): a
/// problem inside another candidate's entry sets that candidate aside instead of failing, so
/// `--candidate good.cu` works while bad.cu's launch plan is being fixed. Empty: loadTask.
Result<Task> loadTask(const std::filesystem::path& dirOrFile, const std::vector<std::string>& onlyCandidates);
/// Same, from JSON already in memory; `origin` names it in errors.
/// "N=4099,B=2" (commas or spaces between) into a binding of `task`'s symbols: every symbol
/// given, the task admitting the shape (Task::admits). What the CLI's --shape and the
/// workbench's shape fields accept.
Result<ShapeBinding> parseShapeText(const Task& task, const std::string& text);

Result<Task> parseTask(const nlohmann::json& j, const std::string& origin,
                       const std::filesystem::path& directory = {});
/// Canonical JSON (round-trips through parseTask).
nlohmann::json taskToJson(const Task& t);
/// A macro value ("256", "0.5", "__half") as task.json writes a value to try: a number stays a
/// number, anything else is a string.
nlohmann::json macroValueJson(const std::string& text);

} // namespace kf
