#pragma once
// Turns one runner report into result rows, each holding only that report's half (correctness or
// performance) or an error row. ResultsModel merges them with what it already shows.

#include "widgets/runs/ResultRow.h"

#include "engine/protocol/RunReport.h"

#include <QString>

#include <vector>

namespace kf::ui::reportrows {

/// Rows for every shape of `report`, plus one error row when its verdict is "error". The numbers
/// come from CorrectnessShape::summary(), the same summary `kforge verify` prints.
std::vector<ResultRow> fromReport(const kf::protocol::RunReport& report);

/// `v` with `significant` digits, "nan"/"inf"/"-inf" as such (protocol::formatNumber).
QString numberText(double v, int significant = 3);

/// "81.0" for 0.081 ms: microseconds with 2, 1 or 0 decimals as the magnitude grows; "nan"/"inf".
QString microsecondsText(double ms);

} // namespace kf::ui::reportrows
