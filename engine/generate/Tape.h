#pragma once
// The generator's view of a reference (docs/generate.md): the task's op steps checked against
// what one fused kernel can compute, each value placed on a level of the iteration space. The
// iteration space is the shape of the widest input, `full`; a value is
//   Element  one number per element of `full`,
//   Column   one per position inside a row (a bias over the trailing dims: [D], [1, D]),
//   Row      one per row (a per-row scale [B, 1], or a reduction's result),
//   Const    one for the whole launch (a [] or all-ones tensor).
// Every support check lives here, so the emitters only see tapes they can lower. Qt-free.

#include "engine/core/Result.h"
#include "engine/task/Task.h"

#include <optional>
#include <string>
#include <vector>

namespace kf::gen {

enum class Level { Const, Row, Column, Element };

struct Value {
    std::string name;                 ///< the task's name for it (input, step output)
    Level level = Level::Element;
    DType natural = DType::F32;       ///< the dtype LibTorch gives it (type promotion)
    std::vector<std::string> shape;   ///< symbolic extents
    int input = -1;                   ///< index into Task::inputs, or -1
    int output = -1;                  ///< index into Task::outputs, or -1
    int step = -1;                    ///< index into Tape::steps of its producer, or -1
    int uses = 0;                     ///< how many later steps read it
    int span = 0;                     ///< Column: trailing dims it covers; Row: trailing dims it is constant over
};

/// One operand of a step: a value or a float literal (the binary ops' "scalar").
struct Operand {
    int value = -1;                   ///< index into Tape::values, or -1 for the literal
    double literal = 0.0;
};

struct Step {
    std::string op;
    std::vector<Operand> args;        ///< x first; layer_norm/rms_norm: weight, bias after it
    int result = -1;                  ///< index into Tape::values
    // Attributes with their defaults filled in.
    std::string approximate = "none"; ///< gelu
    double eps = 0.0;                 ///< layer_norm, rms_norm
    DType to = DType::F32;            ///< to
    bool keepdim = false;             ///< sum, mean, amax
    std::string text;                 ///< "y = rms_norm(h, w, eps=1e-06)", for comments and errors
    bool live = true;                 ///< some task output depends on it (dead steps are not emitted)
    bool isReduction() const;         ///< sum, mean, amax, softmax, log_softmax, rms_norm, layer_norm
};

struct Tape {
    std::string task;                 ///< the task's name
    std::vector<Value> values;        ///< task inputs the tape reads, then each step's result
    std::vector<Step> steps;
    std::vector<std::string> full;    ///< the iteration space
    int rowDims = 0;                  ///< trailing dims that form a row (0: no reduction)
    int broadcastDims = 0;            ///< elementwise tapes: trailing dims a Column/Row operand spans
    bool reduces() const { return rowDims > 0; }
    /// Extents as an expression: "B * S"; "1" when empty.
    static std::string product(const std::vector<std::string>& dims);
    std::string elements() const { return product(full); }
    /// The length of a row (or of a broadcast period) and the number of rows.
    std::string rowLength() const;
    std::string rowCount() const;
    const Value* find(const std::string& name) const;
};

/// The names the generator supports, for the error that refuses a step.
std::string supportedSummary();

/// Checks `steps` (the task's reference, or a TorchScript reference read as steps) against the
/// generator's support and builds the tape. `file` names where the steps came from in errors;
/// `pointers[i]` is step i's place in it ("/reference/tape/1"), or empty for all.
Result<Tape> buildTape(const Task& task, const std::vector<OpStep>& steps, const std::string& file,
                       const std::vector<std::string>& pointers);

} // namespace kf::gen
