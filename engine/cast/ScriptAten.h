#pragma once
// The ATen half of the TorchScript reader (engine/cast/ScriptTape.h): one call `torch.<op>(...)`
// as TorchScript prints it, its arguments already evaluated, mapped to one op of the reference
// catalog (engine/task/OpCatalog.cpp) with its attributes. Each op's positional order and
// keyword names follow its ATen schema (add(self, other, alpha), layer_norm(input,
// normalized_shape, weight, bias, eps, cudnn_enable), ...); an argument the catalog cannot
// express (alpha=2, a dtype on softmax, a reduction over two dims) is refused by name.

#include <nlohmann/json.hpp>

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace kf::cast::script {

/// What a TorchScript expression evaluates to. Tensors are numbered: the inputs first, then
/// one per op step.
struct Value {
    enum class Kind { Tensor, Int, Float, Bool, None, Str, List, Tuple };
    Kind kind = Kind::None;
    int tensor = -1;
    std::int64_t integer = 0;
    double number = 0.0;
    bool flag = false;
    std::string text;
    std::vector<Value> items;   ///< List, Tuple
    std::size_t weight = 1;     ///< values inside, this one included (bounded by the evaluator)
    int depth = 1;              ///< nesting of lists and tuples (bounded by the evaluator)
};

/// "a tensor", "the integer 3", "None", "a list"...: for refusals.
std::string describe(const Value& v);
/// The value as Python writes it ("2", "\"floor\"", "[0, 1]"; "a tensor"): for refusals.
std::string shown(const Value& v);

/// One op step before its tensors have names.
struct MappedCall {
    std::string op;
    std::vector<int> inputs;
    nlohmann::json attrs = nlohmann::json::object();
};

/// Whether `name` is an ATen op this reader maps ("add", "layer_norm", "cumsum").
bool knownAtenOp(std::string_view name);

/// Maps `callee` (as written, "torch.add"), whose ATen name is `name` ("add"), called at `line`
/// with these arguments. Throws ScriptError naming the op and the argument at fault.
MappedCall mapAtenCall(const std::string& callee, std::string_view name, int line, const std::vector<Value>& positional,
                       const std::vector<std::pair<std::string, Value>>& keywords);

/// The task schema's dtype name for a c10::ScalarType code (5 → "fp16"), "" when it has none.
std::string dtypeOfScalarType(std::int64_t code);

} // namespace kf::cast::script
