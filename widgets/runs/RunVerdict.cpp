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

/// What the reports of a run add up to, before it is put in words.
struct Tally {
    int shapes = 0, failedShapes = 0, timedShapes = 0, correctnessReports = 0;
    QString firstError, untrustworthy, bestCandidate;
    std::optional<protocol::CompileBaselineSummary> bestCompile;
    double bestGeomean = std::nan("");
    int performanceReports = 0;
    int sanitizerProblems = 0;     // findings and failed tools of compute-sanitizer, over the correctness reports
    QString sanitizerPart;         // the sentence of the first section with a problem, else of the first section

    void add(const kf::protocol::RunReport& report)
    {
        const kf::protocol::Header& h = report.header();
        if (h.isError()) {
            if (firstError.isEmpty())
                firstError = QString::fromStdString(h.errorSentence());
        } else if (report.verify()) {
            addCorrectness(*report.verify());
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

    void addCorrectness(const kf::protocol::VerifyReport& verify)
    {
        ++correctnessReports;
        for (const auto& s : verify.shapes) {
            ++shapes;
            if (!s.passed)
                ++failedShapes;
        }
        // A finding fails the verification even where every shape passed (docs/verification.md).
        if (const auto& san = verify.sanitizer) {
            int failedTools = 0;
            for (const auto& t : san->tools)
                failedTools += t.error.empty() ? 0 : 1;
            const int problems = san->ran ? int(san->findings.size()) + failedTools : 0;
            if (sanitizerPart.isEmpty() || (problems > 0 && sanitizerProblems == 0))
                sanitizerPart = reportrows::sanitizerSentence(*san);
            sanitizerProblems += problems;
        }
    }
};

/// The banner's first words: an error, the correctness result, or (a timing-only run) the timing's.
void headline(Tally& t, RunVerdict& v, QStringList& parts)
{
    if (!t.firstError.isEmpty()) {
        v.tone = Tone::Bad;
        if (t.firstError.endsWith(QLatin1Char('.')))
            t.firstError.chop(1); // the banner goes on with " · …"
        parts << QStringLiteral("ERROR · ") + t.firstError;
    } else if (t.correctnessReports > 0) {
        v.tone = t.failedShapes > 0 || t.sanitizerProblems > 0 ? Tone::Bad : Tone::Good;
        if (t.failedShapes > 0)
            parts << QStringLiteral("FAIL · %1 of %2 shapes failed").arg(t.failedShapes).arg(t.shapes);
        else if (t.sanitizerProblems > 0)
            parts << QStringLiteral("FAIL · %1/%1 shapes passed").arg(t.shapes);
        else
            parts << QStringLiteral("PASS · %1/%1 shapes").arg(t.shapes);
        if (!t.sanitizerPart.isEmpty())
            parts << t.sanitizerPart;
    } else if (t.performanceReports > 0) {
        v.tone = t.untrustworthy.isEmpty() ? Tone::Good : Tone::Bad;
        parts << (t.untrustworthy.isEmpty() ? QStringLiteral("OK · %1 shapes timed").arg(t.timedShapes) : QStringLiteral("FAIL"));
    }
}

/// The timing's words: trustworthy or not, the best speedup, torch.compile beside it.
void timingParts(const Tally& t, RunVerdict& v, QStringList& parts)
{
    if (!t.untrustworthy.isEmpty()) {
        if (v.tone == Tone::Good)
            v.tone = Tone::Warning;
        parts << QStringLiteral("timing not trustworthy: ") + t.untrustworthy;
    } else if (t.performanceReports == 1) {
        parts << speedupSentence(t.bestGeomean);
    } else {
        parts << QStringLiteral("best ") + speedupSentence(t.bestGeomean) + QStringLiteral(" with ") + t.bestCandidate;
    }
    // The second baseline, for the same candidate: beside eager, never instead of it.
    if (t.untrustworthy.isEmpty() && t.bestCompile) {
        if (t.bestCompile->measured && t.bestCompile->geomeanSpeedup)
            parts << QStringLiteral("%1× torch.compile").arg(QString::number(*t.bestCompile->geomeanSpeedup, 'f', 2));
        else
            parts << QStringLiteral("torch.compile not measured");
    }
    // A slower kernel is still correct: only a timing-only run turns amber for it.
    if (t.untrustworthy.isEmpty() && t.correctnessReports == 0 && v.tone == Tone::Good && t.bestGeomean < 1.0)
        v.tone = Tone::Warning;
}

} // namespace

RunVerdict RunVerdict::fromReports(const std::vector<kf::protocol::RunReport>& reports)
{
    Tally t;
    for (const auto& report : reports)
        t.add(report);
    RunVerdict v;
    QStringList parts;
    headline(t, v, parts);
    if (t.performanceReports > 0)
        timingParts(t, v, parts);
    v.text = parts.join(QStringLiteral(" · "));
    return v;
}

} // namespace kf::ui
