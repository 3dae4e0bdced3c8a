#include "widgets/inspect/Colormaps.h"

#include "widgets/inspect/ElementCode.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <initializer_list>

namespace kf::ui::colormaps {

namespace {

using Lut = std::array<QRgb, 256>;

Lut makeLut(std::initializer_list<QRgb> stops)
{
    Lut lut{};
    const std::vector<QRgb> s(stops);
    for (int i = 0; i < 256; ++i) {
        const double x = i / 255.0 * static_cast<double>(s.size() - 1);
        const size_t k = std::min(static_cast<size_t>(x), s.size() - 2);
        const double f = x - static_cast<double>(k);
        auto mix = [&](int a, int b) { return static_cast<int>(std::lround(a + (b - a) * f)); };
        lut[static_cast<size_t>(i)] = qRgb(mix(qRed(s[k]), qRed(s[k + 1])), mix(qGreen(s[k]), qGreen(s[k + 1])),
                                           mix(qBlue(s[k]), qBlue(s[k + 1])));
    }
    return lut;
}

// YlGnBu, reversed: no saturated red, magenta or yellow anywhere.
const std::initializer_list<QRgb> kValueStops = {0xff081d58, 0xff253494, 0xff225ea8, 0xff1d91c0, 0xff41b6c4,
                                                  0xff7fcdbb, 0xffc7e9b4, 0xffedf8d9};
const std::initializer_list<QRgb> kAbsStops = {0xff141a2b, 0xff1f3356, 0xff2a5a8a, 0xff3c8dba, 0xff7cc3e0, 0xffd6f0fa};
const std::initializer_list<QRgb> kBelowStops = {0xff111726, 0xff1c2f57, 0xff24508f, 0xff3f7fc4, 0xff8dbbeb, 0xffd9e8fb};
const std::initializer_list<QRgb> kAboveStops = {0xfffb8466, 0xffef4a36, 0xffd7191c, 0xffb50d1c, 0xff9c0518};

enum class Map { Value, Abs, Below, Above };

const Lut& lut(Map m)
{
    static const std::array<Lut, 4> luts = {makeLut(kValueStops), makeLut(kAbsStops), makeLut(kBelowStops),
                                            makeLut(kAboveStops)};
    return luts[static_cast<size_t>(m)];
}

/// The colour of `t` on map `m`: 0 and 1 are its ends, values beyond them (and NaN, read as 0) clamp.
QRgb at(Map m, double t)
{
    const int i = !(t > 0) ? 0 : t >= 1 ? 255 : static_cast<int>(t * 255.0 + 0.5);
    return lut(m)[static_cast<size_t>(i)];
}

QGradientStops stopsOf(std::initializer_list<QRgb> s)
{
    QGradientStops out;
    int i = 0;
    for (QRgb c : s)
        out.append({static_cast<double>(i++) / static_cast<double>(s.size() - 1), QColor(c)});
    return out;
}

} // namespace

QRgb value(double t) { return at(Map::Value, t); }
QRgb absError(double t) { return at(Map::Abs, t); }

QRgb ratioColor(double l)
{
    // Below the edge: 1e-8 … 1 across the blues; above: 1 … 1e6 across the reds.
    if (l <= 0)
        return at(Map::Below, (l + 8.0) / 8.0);
    return at(Map::Above, l / 6.0);
}

QRgb ratioCode(std::uint8_t code)
{
    static const auto lut = [] {
        std::array<QRgb, 256> t{};
        for (int c = 0; c < 256; ++c) {
            const auto code8 = static_cast<std::uint8_t>(c);
            if (code8 == elementcode::kExact)
                t[static_cast<size_t>(c)] = at(Map::Below, 0);
            else if (code8 == elementcode::kOutsideInf)
                t[static_cast<size_t>(c)] = at(Map::Above, 1);
            else if (code8 == elementcode::kNonFinite)
                t[static_cast<size_t>(c)] = kNonFinite;
            else if (code8 == elementcode::kUnwritten)
                t[static_cast<size_t>(c)] = kHazardYellow;
            else if (code8 > elementcode::kNonFinite)
                t[static_cast<size_t>(c)] = at(Map::Below, 0);
            else {
                const double l = elementcode::kLogLo + (c - elementcode::kRatioFirst + 0.5) * elementcode::kLogStep;
                // Codes decide the side, not the bin middle: the first outside bin is red.
                t[static_cast<size_t>(c)] = code8 >= elementcode::kFirstOutside ? ratioColor(std::max(l, 1e-9))
                                                                                 : ratioColor(std::min(l, 0.0));
            }
        }
        return t;
    }();
    return lut[code];
}

QGradientStops valueStops() { return stopsOf(kValueStops); }
QGradientStops absStops() { return stopsOf(kAbsStops); }

} // namespace kf::ui::colormaps
