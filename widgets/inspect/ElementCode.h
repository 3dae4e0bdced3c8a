#pragma once
// One byte per output element: its class (kf::classify) and log10 of its error-to-tolerance
// ratio, quantised. The codes are ordered so that max() over a block is "worst class wins, then
// the largest ratio": zoomed out, one bad element in 4096² still colours its pixel.

#include "engine/verify/Compare.h"

#include <cmath>
#include <cstdint>

namespace kf::ui::elementcode {

inline constexpr std::uint8_t kExact = 0;          ///< ratio 0 (equal values, or NaN == NaN)
inline constexpr std::uint8_t kRatioFirst = 1;     ///< log10(ratio) = kLogLo
inline constexpr std::uint8_t kRatioLast = 240;    ///< log10(ratio) ≥ kLogHi − kLogStep
inline constexpr std::uint8_t kOutsideInf = 241;   ///< outside tolerance with a zero tolerance
inline constexpr std::uint8_t kUnwritten = 242;
inline constexpr std::uint8_t kNonFinite = 243;
inline constexpr double kLogLo = -12.0;
inline constexpr double kLogStep = 0.1;
/// The first code of a ratio above 1: every code from here to kOutsideInf is OutsideTolerance.
inline constexpr std::uint8_t kFirstOutside = 1 + 120;

inline std::uint8_t encode(const ElementVerdict& v)
{
    switch (v.cls) {
    case ElementClass::Unwritten: return kUnwritten;
    case ElementClass::NonFinite: return kNonFinite;
    default: break;
    }
    if (!(v.ratio > 0))
        return kExact;
    if (std::isinf(v.ratio))
        return kOutsideInf;
    double b = std::floor((std::log10(v.ratio) - kLogLo) / kLogStep);
    b = b < 0 ? 0 : b > kRatioLast - 1 ? kRatioLast - 1 : b;
    auto c = static_cast<std::uint8_t>(kRatioFirst + b);
    // The class is classify()'s, never the bin's: ratio exactly 1 is within tolerance.
    if (v.cls == ElementClass::Ok && c >= kFirstOutside)
        c = kFirstOutside - 1;
    if (v.cls == ElementClass::OutsideTolerance && c < kFirstOutside)
        c = kFirstOutside;
    return c;
}

inline ElementClass classOf(std::uint8_t c)
{
    if (c == kNonFinite)
        return ElementClass::NonFinite;
    if (c == kUnwritten)
        return ElementClass::Unwritten;
    return c >= kFirstOutside ? ElementClass::OutsideTolerance : ElementClass::Ok;
}

inline bool isMismatch(std::uint8_t c) { return c >= kFirstOutside; }

/// The ratio a code stands for (the middle of its bin); exact is 0, the special classes inf.
inline double approxRatio(std::uint8_t c)
{
    if (c == kExact)
        return 0;
    if (c > kRatioLast)
        return INFINITY;
    return std::pow(10.0, kLogLo + (c - kRatioFirst + 0.5) * kLogStep);
}

} // namespace kf::ui::elementcode
