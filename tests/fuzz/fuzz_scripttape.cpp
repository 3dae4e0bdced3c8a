// A task's TorchScript reference read as an op tape (engine/cast/ScriptTape.h): code/__torch__.py
// text through the lexer, the parser and the evaluator. The first byte shapes the task so seeds
// reach the evaluation: (byte % 4) + 1 inputs x0.., ((byte / 4) % 3) + 1 outputs y0..; the rest
// is the code. A tape that reads is checked: every op is a catalog op with catalog attributes,
// every step reads only tensors defined before it, every task output is written.
#include "engine/cast/ScriptTape.h"
#include "engine/task/OpCatalog.h"

#include <cstddef>
#include <cstdint>
#include <set>
#include <string>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size)
{
    if (size < 1)
        return 0;
    kf::Task task;
    task.name = "fuzz";
    for (int i = 0; i < data[0] % 4 + 1; ++i)
        task.inputs.push_back(kf::TensorSpec{"x" + std::to_string(i)});
    for (int i = 0; i < (data[0] / 4) % 3 + 1; ++i)
        task.outputs.push_back(kf::TensorSpec{"y" + std::to_string(i)});
    task.reference.kind = kf::Reference::Kind::TorchScript;
    const std::string_view code(reinterpret_cast<const char*>(data) + 1, size - 1);
    auto tape = kf::cast::scriptTapeFromSource(code, task, "fuzz.py");
    if (!tape)
        return 0;
    std::set<std::string> defined;
    for (const kf::TensorSpec& t : task.inputs)
        defined.insert(t.name);
    for (const kf::OpStep& s : tape.value()) {
        const kf::OpInfo* op = kf::findOp(s.op);
        if (!op || static_cast<int>(s.inputs.size()) > op->maxInputs || !s.attrs.is_object())
            __builtin_trap();
        for (const auto& [key, value] : s.attrs.items()) {
            bool known = false;
            for (const kf::OpAttr& a : op->attrs)
                known = known || a.name == key;
            if (!known)
                __builtin_trap();
        }
        for (const std::string& in : s.inputs)
            if (!defined.count(in))
                __builtin_trap();
        if (s.output.empty() || !defined.insert(s.output).second)
            __builtin_trap();
    }
    for (const kf::TensorSpec& t : task.outputs)
        if (!defined.count(t.name))
            __builtin_trap();
    return 0;
}
