#include "widgets/runs/RunVerdict.h"
#include "engine/protocol/Verdict.h"

#include "widgets/runs/ReportRows.h"


#include <cmath>

namespace kf::ui {

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

RunVerdict RunVerdict::fromReports(const std::vector<kf::protocol::RunReport>& reports)
{
    int shapes = 0, failedShapes = 0, timedShapes = 0, correctnessReports = 0;
    QString firstError, untrustworthy, bestCandidate;
    std::optional<protocol::CompileBaselineSummary> bestCompile;
    double bestGeomean = std::nan("");
    int performanceReports = 0;
    int sanitizerProblems = 0;     // findings and failed tools of compute-sanitizer, over the correctness reports
    QString sanitizerPart;         // the sentence of the first section with a problem, else of the first section
    for (const auto& report : reports) {
        const kf::protocol::Header& h = report.header();
        if (h.isError()) {
            if (firstError.isEmpty())
                firstError = QString::fromStdString(h.errorSentence());
            continue;
        }
        if (report.verify()) {
            ++correctnessReports;
            for (const auto& s : report.verify()->shapes) {
                ++shapes;
                if (!s.passed)
                    ++failedShapes;
            }
            // A finding fails the verification even where every shape passed (docs/verification.md).
            if (const auto& san = report.verify()->sanitizer) {
                int failedTools = 0;
                for (const auto& t : san->tools)
                    failedTools += t.error.empty() ? 0 : 1;
                const int problems = san->ran ? int(san->findings.size()) + failedTools : 0;
                if (sanitizerPart.isEmpty() || (problems > 0 && sanitizerProblems == 0))
                    sanitizerPart = reportrows::sanitizerSentence(*san);
                sanitizerProblems += problems;
            }
        } else if (report.bench()) {
            ++performanceReports;
            timedShapes += static_cast<int>(report.bench()->shapes.size());
            if (h.verdict == kf::protocol::Verdict::Fail && untrustworthy.isEmpty())
                untrustworthy = QString::fromStdString(h.summary.empty() ? "the measurement is not trustworthy" : h.summary);
            const double g = report.bench()->geomeanSpeedup.value_or(std::nan(""));
            if (std::isnan(bestGeomean) || g > bestGeomean) {
                bestGeomean = g;
                bestCandidate = QString::fromStdString(h.candidate.file);
                bestCompile = report.bench()->compileBaseline;
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
        v.tone = failedShapes > 0 || sanitizerProblems > 0 ? Tone::Bad : Tone::Good;
        if (failedShapes > 0)
            parts << QStringLiteral("FAIL · %1 of %2 shapes failed").arg(failedShapes).arg(shapes);
        else if (sanitizerProblems > 0)
            parts << QStringLiteral("FAIL · %1/%1 shapes passed").arg(shapes);
        else
            parts << QStringLiteral("PASS · %1/%1 shapes").arg(shapes);
        if (!sanitizerPart.isEmpty())
            parts << sanitizerPart;
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
        // The second baseline, for the same candidate: beside eager, never instead of it.
        if (untrustworthy.isEmpty() && bestCompile) {
            if (bestCompile->measured && bestCompile->geomeanSpeedup)
                parts << QStringLiteral("%1× torch.compile").arg(QString::number(*bestCompile->geomeanSpeedup, 'f', 2));
            else
                parts << QStringLiteral("torch.compile not measured");
        }
        // A slower kernel is still correct: only a timing-only run turns amber for it.
        if (untrustworthy.isEmpty() && correctnessReports == 0 && v.tone == Tone::Good && bestGeomean < 1.0)
            v.tone = Tone::Warning;
    }
    v.text = parts.join(QStringLiteral(" · "));
    return v;
}

} // namespace kf::ui
