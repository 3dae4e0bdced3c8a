#include "widgets/runs/RunVerdict.h"

#include "widgets/runs/ReportJson.h"

#include <cmath>

namespace kf::ui {

namespace rj = reportjson;

namespace {

QString speedupSentence(double geomean)
{
    if (std::isnan(geomean))
        return QStringLiteral("speedup unknown (nan)");
    if (geomean >= 1.0)
        return QStringLiteral("%1× faster than LibTorch (geomean)").arg(QString::number(geomean, 'f', 2));
    return QStringLiteral("%1× of LibTorch's speed, slower (geomean)").arg(QString::number(geomean, 'f', 2));
}

} // namespace

RunVerdict RunVerdict::fromReports(const std::vector<nlohmann::json>& reports)
{
    int shapes = 0, failedShapes = 0, timedShapes = 0, correctnessReports = 0;
    QString firstError, untrustworthy, bestCandidate;
    double bestGeomean = std::nan("");
    int performanceReports = 0;
    for (const auto& report : reports) {
        const QString kind = rj::text(report, "kind");
        const QString verdict = rj::text(report, "verdict");
        if (verdict == QLatin1String("error")) {
            if (firstError.isEmpty())
                firstError = rj::text(rj::field(report, "error"), "why", rj::text(report, "summary", QStringLiteral("the run could not be done")));
            continue;
        }
        const nlohmann::json& list = rj::field(report, "shapes");
        if (kind == QLatin1String("correctness")) {
            ++correctnessReports;
            for (const auto& s : list) {
                ++shapes;
                if (rj::field(s, "passed") != nlohmann::json(true))
                    ++failedShapes;
            }
        } else if (kind == QLatin1String("performance")) {
            ++performanceReports;
            timedShapes += list.is_array() ? static_cast<int>(list.size()) : 0;
            if (verdict == QLatin1String("fail") && untrustworthy.isEmpty())
                untrustworthy = rj::text(report, "summary", QStringLiteral("the measurement is not trustworthy"));
            const double g = rj::number(rj::field(report, "geomean_speedup"));
            if (std::isnan(bestGeomean) || g > bestGeomean) {
                bestGeomean = g;
                bestCandidate = rj::text(rj::field(report, "candidate"), "file");
            }
        }
    }

    RunVerdict v;
    QStringList parts;
    if (!firstError.isEmpty()) {
        v.tone = Tone::Bad;
        if (firstError.endsWith(QLatin1Char('.')))
            firstError.chop(1); // the banner goes on with " · …"
        parts << QStringLiteral("ERROR · ") + firstError;
    } else if (correctnessReports > 0) {
        v.tone = failedShapes > 0 ? Tone::Bad : Tone::Good;
        parts << (failedShapes > 0 ? QStringLiteral("FAIL · %1 of %2 shapes failed").arg(failedShapes).arg(shapes)
                                   : QStringLiteral("PASS · %1/%1 shapes").arg(shapes));
    } else if (performanceReports > 0) {
        v.tone = untrustworthy.isEmpty() ? Tone::Good : Tone::Bad;
        parts << (untrustworthy.isEmpty() ? QStringLiteral("OK · %1 shapes timed").arg(timedShapes) : QStringLiteral("FAIL"));
    }
    if (performanceReports > 0) {
        if (!untrustworthy.isEmpty()) {
            if (v.tone == Tone::Good)
                v.tone = Tone::Warning;
            parts << QStringLiteral("timing not trustworthy: ") + untrustworthy;
        } else if (performanceReports == 1) {
            parts << speedupSentence(bestGeomean);
        } else {
            parts << QStringLiteral("best ") + speedupSentence(bestGeomean) + QStringLiteral(" with ") + bestCandidate;
        }
        // A slower kernel is still correct: only a timing-only run turns amber for it.
        if (untrustworthy.isEmpty() && correctnessReports == 0 && v.tone == Tone::Good && bestGeomean < 1.0)
            v.tone = Tone::Warning;
    }
    v.text = parts.join(QStringLiteral(" · "));
    return v;
}

} // namespace kf::ui
