#pragma once
// The figures the Tune view draws besides the points (engine/tune/Tuner.h, Outcome): the roofline
// floor, eager's and torch.compile's times as geometric means over the tuning shapes, and how a
// point's stage reads. Values in, values out; no widgets.

#include "engine/protocol/BenchReport.h"
#include "engine/tune/Tuner.h"
#include "widgets/common/VerdictStyle.h"

#include <QString>

#include <optional>
#include <vector>

namespace kf::ui::tunefig {

/// The geometric mean of `values`; none when one is missing or not positive.
std::optional<double> geomean(const std::vector<std::optional<double>>& values);
/// The fastest time the bytes allow: per shape bytes ÷ the GPU's peak bandwidth, their geomean (ms).
std::optional<double> floorMs(const kf::tune::Outcome& o);
/// The runner's LibTorch (eager) median over the tuning shapes, geomean (ms).
std::optional<double> eagerMs(const kf::tune::Outcome& o);
/// torch.compile's best mode over a bench report's shapes, geomean (ms), when every shape has it.
std::optional<double> compileMs(const kf::protocol::BenchReport& r);

/// A point that stopped before it could be timed, or whose time was refused: drawn red.
bool failed(kf::tune::Stage s);
/// "winner", "finalist", "timed", "verify failed", "not reached"… as a user reads it.
QString stageText(kf::tune::Stage s);
Tone stageTone(kf::tune::Stage s);
/// A time in ms with 4 significant digits ("0.1234 ms", "12.35 ms").
QString msText(double ms);
/// The point's hover text in the chart: its values, stage, time or reason.
QString pointTip(const kf::tune::PointResult& p, int number);

} // namespace kf::ui::tunefig
