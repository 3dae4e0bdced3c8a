#include "engine/task/DType.h"

#include <array>

namespace kf {

namespace {
struct DTypeInfo {
    DType type;
    std::string_view name;
    int size;
    bool floating;
    std::string_view cuda;
};
constexpr std::array<DTypeInfo, 10> kInfo = {{
    {DType::F64, "fp64", 8, true, "double"},
    {DType::F32, "fp32", 4, true, "float"},
    {DType::F16, "fp16", 2, true, "__half"},
    {DType::BF16, "bf16", 2, true, "__nv_bfloat16"},
    {DType::I64, "int64", 8, false, "long long"},
    {DType::I32, "int32", 4, false, "int"},
    {DType::I16, "int16", 2, false, "short"},
    {DType::I8, "int8", 1, false, "signed char"},
    {DType::U8, "uint8", 1, false, "unsigned char"},
    {DType::Bool, "bool", 1, false, "bool"},
}};
const DTypeInfo& info(DType t) { return kInfo[static_cast<size_t>(t)]; }
} // namespace

std::string_view dtypeName(DType t) { return info(t).name; }
int dtypeSize(DType t) { return info(t).size; }
bool isFloating(DType t) { return info(t).floating; }
std::string_view dtypeCudaName(DType t) { return info(t).cuda; }

std::optional<DType> parseDType(std::string_view name)
{
    for (const auto& i : kInfo)
        if (i.name == name)
            return i.type;
    return std::nullopt;
}

std::string dtypeNames()
{
    std::string s;
    for (const auto& i : kInfo)
        s += (s.empty() ? "" : ", ") + std::string(i.name);
    return s;
}

} // namespace kf
