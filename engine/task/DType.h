#pragma once
#include <optional>
#include <string>
#include <string_view>

namespace kf {

enum class DType { F64, F32, F16, BF16, I64, I32, I16, I8, U8, Bool };

/// "fp64", "fp32", "fp16", "bf16", "int64", "int32", "int16", "int8", "uint8", "bool".
std::string_view dtypeName(DType t);
std::optional<DType> parseDType(std::string_view name);
/// Every accepted spelling, comma-separated, for error messages.
std::string dtypeNames();
int dtypeSize(DType t);
bool isFloating(DType t);
/// The CUDA C++ type a kernel uses for it: float, __half, __nv_bfloat16, int64_t...
std::string_view dtypeCudaName(DType t);

} // namespace kf
