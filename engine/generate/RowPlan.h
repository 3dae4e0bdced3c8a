#pragma once
// Internal to engine/generate: how the row template schedules a row (docs/generate.md) — which
// statistics each pass over the row gathers, which values each pass computes and writes, and which
// inputs stay in registers between passes. engine/generate/EmitRow.cpp writes the code for it.

#include "engine/generate/Tape.h"

#include <set>
#include <utility>
#include <vector>

namespace kf::gen::detail {

enum class StatKind { Sum, SumSq, Centered, Max, Softmax };

struct Stat {
    int step = -1;
    StatKind kind = StatKind::Sum;
    int input = -1;     ///< value reduced
    int pass = 1;
};

struct Plan {
    std::vector<Stat> stats;
    std::vector<std::set<int>> needs;   ///< per value: the statistics its computation uses
    std::vector<int> ready;             ///< per value: the pass after which it can be computed
    int passes = 1;
};

/// The statistics of the tape's reductions, each in the first pass after its input is known.
Plan schedule(const Tape& tape);

/// The smallest and largest row length the task admits.
std::pair<long long, long long> rowRange(const Task& task, const Tape& tape);

/// What each pass over a row touches: the element values it computes, the pass that writes each
/// output, and the inputs kept in registers between passes.
struct PassLayout {
    std::vector<std::set<int>> closure;   ///< per pass: the element and column values it computes
    std::vector<int> writePass;           ///< per value: the pass that stores it (outputs only)
    std::vector<const Value*> cached;     ///< inputs read by more than one pass
};

PassLayout layoutPasses(const Tape& tape, const Plan& plan, const std::vector<const Value*>& params);

} // namespace kf::gen::detail
