#pragma once
// The LibTorch reference catalog: the ops a task's reference may name, with their arity and
// attributes. The runner maps each to LibTorch's own implementation (the fused one where it
// exists), because the reference is also the baseline a speedup is measured against.

#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace kf {

struct OpAttr {
    std::string_view name;
    std::string_view type;       ///< "number", "integer", "integer_list", "string", "bool", "dtype"
    bool required = false;
};

struct OpInfo {
    std::string_view name;
    int minInputs = 1;
    int maxInputs = 1;
    std::vector<OpAttr> attrs;
    std::string_view summary;
};

std::span<const OpInfo> opCatalog();
const OpInfo* findOp(std::string_view name);

} // namespace kf
