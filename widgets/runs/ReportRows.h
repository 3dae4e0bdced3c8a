#pragma once
// Turns one runner report into result rows, each holding only that report's half (correctness or
// performance) or an error row. ResultsModel merges them with what it already shows.

#include "widgets/runs/ResultRow.h"

#include "engine/protocol/RunReport.h"

#include <QString>

#include <optional>
#include <vector>

namespace kf::ui::reportrows {

/// Rows for every shape of `report`, plus one error row when its verdict is "error". The numbers
/// come from CorrectnessShape::summary(), the same summary `kforge verify` prints.
std::vector<ResultRow> fromReport(const kf::protocol::RunReport& report);

/// The sanitizer row of a correctness report with a compute-sanitizer section (none without one).
std::optional<ResultRow> sanitizerRow(const kf::protocol::RunReport& report);

/// One sentence for a sanitizer section: "compute-sanitizer 2025.3.1.0: clean — memcheck, racecheck,
/// initcheck, synccheck on 2 shapes (2.4 s)", "… 3 findings — first: memcheck: out-of-bounds read …",
/// "… 1 tool failed — initcheck: …", "compute-sanitizer: not run: <reason>".
QString sanitizerSentence(const kf::protocol::SanitizerSection& section);

/// A report's placement for the Ran on column; empty when the report has no placement block.
ResultRow::Placement placementOf(const kf::protocol::Header& header);

/// `v` with `significant` digits, "nan"/"inf"/"-inf" as such (protocol::formatNumber).
QString numberText(double v, int significant = 3);

/// "81.0" for 0.081 ms: microseconds with 2, 1 or 0 decimals as the magnitude grows; "nan"/"inf".
QString microsecondsText(double ms);

} // namespace kf::ui::reportrows
