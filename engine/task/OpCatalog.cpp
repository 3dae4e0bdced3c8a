#include "engine/task/OpCatalog.h"

namespace kf {

namespace {
const std::vector<OpInfo>& catalog()
{
    static const std::vector<OpInfo> ops = [] {
        std::vector<OpInfo> v;
        auto binary = [&](std::string_view n, std::string_view s) {
            v.push_back({n, 1, 2, {{"scalar", "number", false}}, s});
        };
        binary("add", "a + b (or a + scalar)");
        binary("sub", "a - b (or a - scalar)");
        binary("mul", "a * b (or a * scalar)");
        binary("div", "a / b (or a / scalar)");
        for (std::string_view n : {"neg", "abs", "exp", "log", "sqrt", "rsqrt", "tanh", "sigmoid", "relu", "silu"})
            v.push_back({n, 1, 1, {}, "elementwise"});
        v.push_back({"gelu", 1, 1, {{"approximate", "string", false}}, "GELU; approximate \"none\" or \"tanh\""});
        v.push_back({"softmax", 1, 1, {{"dim", "integer", false}}, "softmax over dim (default -1)"});
        v.push_back({"log_softmax", 1, 1, {{"dim", "integer", false}}, "log-softmax over dim (default -1)"});
        v.push_back({"layer_norm", 1, 3, {{"eps", "number", false}, {"normalized_dims", "integer", false}},
                     "layer norm over the last normalized_dims dims; inputs x[, weight[, bias]]"});
        v.push_back({"rms_norm", 1, 2, {{"eps", "number", false}, {"normalized_dims", "integer", false}},
                     "RMS norm over the last normalized_dims dims; inputs x[, weight]"});
        v.push_back({"matmul", 2, 2, {}, "matrix product (half types accumulate in fp32)"});
        v.push_back({"bmm", 2, 2, {}, "batched matrix product"});
        v.push_back({"transpose", 1, 1, {{"dim0", "integer", true}, {"dim1", "integer", true}}, "swap two dims (contiguous result)"});
        v.push_back({"permute", 1, 1, {{"dims", "integer_list", true}}, "reorder dims (contiguous result)"});
        for (std::string_view n : {"sum", "mean", "amax"})
            v.push_back({n, 1, 1, {{"dim", "integer", false}, {"keepdim", "bool", false}}, "reduction over dim (default: all)"});
        v.push_back({"cumsum", 1, 1, {{"dim", "integer", true}}, "inclusive prefix sum along dim"});
        v.push_back({"to", 1, 1, {{"dtype", "dtype", true}}, "convert dtype (always a fresh tensor)"});
        v.push_back({"clone", 1, 1, {}, "copy (a streaming-copy baseline)"});
        return v;
    }();
    return ops;
}
} // namespace

std::span<const OpInfo> opCatalog() { return catalog(); }

const OpInfo* findOp(std::string_view name)
{
    for (const auto& op : catalog())
        if (op.name == name)
            return &op;
    return nullptr;
}

} // namespace kf
