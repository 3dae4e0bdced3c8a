#pragma once
// The inspector's colours. Value panes use a sequential map (dark blue → pale cream) that
// holds no saturated red, magenta or yellow, and the difference pane's in-tolerance colours
// are blues, so the class markings (red, magenta ×, black/yellow stripes) stay unmistakable.
// Thread-safe: the lookup tables are built once, on first use.

#include <QColor>
#include <QGradientStops>
#include <QRgb>

#include <cstdint>

namespace kf::ui::colormaps {

inline constexpr QRgb kOutside = qRgb(215, 25, 28);         ///< outside tolerance (abs mode fill)
inline constexpr QRgb kOutline = qRgb(255, 255, 255);       ///< outline of an outside cell ≥ 6 px
inline constexpr QRgb kNonFinite = qRgb(255, 0, 255);       ///< NaN/Inf mismatch, with an ×
inline constexpr QRgb kCross = qRgb(20, 20, 20);
inline constexpr QRgb kHazardYellow = qRgb(255, 205, 0);    ///< never written: stripes with black
inline constexpr QRgb kHazardBlack = qRgb(0, 0, 0);
inline constexpr QRgb kNaNValue = qRgb(150, 150, 150);      ///< value panes: NaN
inline constexpr QRgb kPosInfValue = qRgb(255, 255, 255);
inline constexpr QRgb kNegInfValue = qRgb(70, 70, 70);

/// Black/yellow diagonal stripes, 4 px wide, continuous across tiles (x, y in level pixels).
inline QRgb hazard(std::int64_t x, std::int64_t y) { return ((x + y) & 7) < 4 ? kHazardYellow : kHazardBlack; }

/// Sequential value map, t in [0, 1] (clamped).
QRgb value(double t);
/// |error| map for in-tolerance elements, t in [0, 1] of the log range.
QRgb absError(double t);
/// Ratio-to-tolerance map indexed by an element code (ElementCode.h): blues below 1, reds above.
QRgb ratioCode(std::uint8_t code);
/// The colour a code gets in ratio mode, including the special classes (stripes excluded).
QRgb ratioColor(double log10Ratio);

QGradientStops valueStops();
QGradientStops absStops();

} // namespace kf::ui::colormaps
