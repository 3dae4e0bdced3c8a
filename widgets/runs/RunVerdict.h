#pragma once
// The one-line verdict of a run, read before anything else: "PASS · 6/6 shapes · 1.38× faster
// than LibTorch (geomean)", "FAIL · 2 of 6 shapes failed", "ERROR · <why>".

#include "widgets/common/VerdictStyle.h"

#include "engine/protocol/RunReport.h"

#include <QString>

#include <vector>

namespace kf::ui {

/// A value computed from the reports of one run (any mix of correctness and performance reports
/// of one or more candidates). Pure; any thread.
struct RunVerdict {
    Tone tone = Tone::Neutral;
    QString text; ///< empty when there were no reports

    static RunVerdict fromReports(const std::vector<kf::protocol::RunReport>& reports);
};

} // namespace kf::ui
