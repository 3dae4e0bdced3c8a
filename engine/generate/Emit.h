#pragma once
// Internal to engine/generate: what the two kernel templates (elementwise, row) share — names,
// named constants, and the float expression of each step. See docs/generate.md.

#include "engine/generate/Generate.h"

#include <algorithm>
#include <set>
#include <string>
#include <vector>

namespace kf::gen::detail {

/// Source text with indentation.
class Code {
public:
    void line(int indent, const std::string& text = {});
    void raw(const std::string& text) { m_text += text; }
    const std::string& text() const { return m_text; }

private:
    std::string m_text;
};

struct Context {
    Context(const Task& t, const Tape& tp, const GenerateOptions& o);
    const Task& task;
    const Tape& tape;
    const GenerateOptions& options;
    int vec = 4;               ///< elements per 16-byte access of the widest stored type
    std::string kernel;        ///< the extern "C" name

    /// A named constant of the generated file (emitted once, in first-use order).
    std::string constant(const std::string& name, const std::string& type, const std::string& value,
                         const std::string& comment);
    const std::vector<std::string>& constantLines() const { return m_constantLines; }

    /// A knob of the schedule: a macro the candidate's "defines" set (NVRTC's -D) and `kforge
    /// tune` varies over `values`; the source keeps `value` as its default (#ifndef). Returns
    /// the macro's name. Emitted once, in first-use order.
    std::string knob(const std::string& name, int value, std::vector<int> values, const std::string& comment);
    struct Knob {
        std::string name;
        int value = 0;
        std::vector<int> values;   ///< what the tune block lists, ascending, the default among them
        std::string comment;
    };
    const std::vector<Knob>& knobs() const { return m_knobs; }
    /// A condition of the tune block's "where" over the knobs (an impossible combination).
    void where(const std::string& condition)
    {
        if (std::find(m_where.begin(), m_where.end(), condition) == m_where.end())
            m_where.push_back(condition);
    }
    const std::vector<std::string>& conditions() const { return m_where; }

    /// The kernel parameter of a tensor (its task name, unless that would clash with ours).
    std::string pointer(const Value& v) const;
    /// The float that holds v where an expression reads it: x_j (per element), s_r (per row),
    /// c_c (one for the launch).
    std::string token(const Value& v) const;
    /// The float expression of step s per element (elementwise ops, and the per-element result of
    /// softmax, log_softmax, rms_norm, layer_norm from their row statistics).
    std::string expression(const Step& s);
    /// "const float h_j = <expr>;" — rounded to its natural dtype when it is a task output that
    /// later steps read (they read what LibTorch stored).
    std::string definition(const Value& v, const std::string& expr) const;
    /// Row statistics' names for step s: "<out>_mean", "<out>_rstd", "<out>_max", "<out>_sum".
    std::string rowName(const Step& s, const char* what) const;
    std::string cudaType(DType t) const;
    std::string stepLabel(const Step& s) const;   ///< "step 2: y = rms_norm(h, w, eps=1e-06)"

private:
    std::string operand(const Step& s, size_t i);
    std::vector<std::string> m_identifiers;   ///< per value: its identifier in the source
    std::vector<std::string> m_constantLines;
    std::set<std::string> m_constantNames;
    std::vector<Knob> m_knobs;
    std::vector<std::string> m_where;
};

std::string floatLiteral(double v);

struct Emitted {
    std::string helpers;                 ///< device functions before the kernel
    std::string kernel;                  ///< the extern "C" kernel
    nlohmann::ordered_json launches = nlohmann::ordered_json::array();   ///< the candidate's "launches"
    nlohmann::ordered_json scratch;      ///< the candidate's "scratch", when a launch needs one
    std::string mode;                    ///< how it is launched, in words
};

Emitted emitElementwise(Context& c);
Emitted emitRow(Context& c);

/// Inputs the tape reads, then outputs, in the task's order: the kernel's tensor parameters.
std::vector<const Value*> parameters(const Tape& tape);
std::string parameterList(Context& c, const std::vector<const Value*>& params, const std::string& tail);
std::string argumentList(Context& c, const std::vector<const Value*>& params, const std::string& tail);
/// The pointers the vector path reads or writes 16 bytes at a time (per-element and per-column
/// tensors), comma-separated: the arguments of kf::aligned16.
std::string alignedPointers(Context& c, const std::vector<const Value*>& params);
/// The launch plan's "args" for the tensor parameters: their task names, in order.
nlohmann::ordered_json tensorArguments(const std::vector<const Value*>& params);

} // namespace kf::gen::detail
