#include "widgets/runs/ReportRows.h"

#include "engine/protocol/Report.h"

#include <QDir>

#include <cmath>

namespace kf::ui::reportrows {

namespace {

QString qs(const std::string& s) { return QString::fromStdString(s); }

ResultRow baseRow(const protocol::Header& h)
{
    ResultRow r;
    r.task = qs(h.task.name.empty() ? "?" : h.task.name);
    r.candidate = qs(h.candidate.file.empty() ? "?" : h.candidate.file);
    r.arch = qs(h.candidate.arch);
    r.gpu = qs(h.environment.gpu);
    return r;
}

void fillShape(ResultRow& r, const protocol::ShapeId& id)
{
    r.shapeLabel = qs(id.label);
    r.dims = qs(id.dimsText());
    r.set = qs(id.set);
    r.shapeSize = id.size();
}

// A trial's saved case folder: relative to the report's dump_dir (docs/report-schema.md).
QString caseFolder(const protocol::Trial& trial, const QString& dumpDir)
{
    const QString name = qs(trial.caseDir);
    if (name.isEmpty())
        return {};
    if (QDir::isAbsolutePath(name))
        return QDir::cleanPath(name);
    return dumpDir.isEmpty() ? QString() : QDir::cleanPath(QDir(dumpDir).filePath(name));
}

void fillCorrectness(ResultRow::Correctness& c, const protocol::CorrectnessShape& s, const QString& sourceHash,
                     const QString& dumpDir)
{
    // The table's numbers are the CLI's: one summary function computes them for both.
    const protocol::ShapeSummary sum = s.summary();
    c.present = true;
    c.sourceHash = sourceHash;
    c.passed = sum.passed;
    c.maxAbsError = sum.maxAbsError;
    c.maxRelError = sum.maxRelError;
    c.errorRatio = sum.errorRatio;
    c.goldenNote = qs(sum.goldenNote);
    c.mismatches = sum.mismatches;
    c.elements = sum.elements;
    c.unwritten = sum.unwritten;
    c.trials = sum.trials;
    c.failure = qs(sum.firstFailure);
    for (const protocol::Trial& t : s.trials) {
        std::int64_t mismatches = 0, elements = 0;
        std::optional<double> worstAbs;
        for (const OutputCheck& o : t.outputs) {
            mismatches += o.mismatches;
            elements += o.elements;
            // NaN anywhere wins, as in the summary.
            if (!worstAbs || (!std::isnan(*worstAbs) && (std::isnan(o.maxAbsError) || o.maxAbsError > *worstAbs)))
                worstAbs = o.maxAbsError;
        }
        if (const QString dir = caseFolder(t, dumpDir); !dir.isEmpty())
            c.caseDirs << dir;
        c.trialLines << QStringLiteral("trial %1 (seed %2): %3 — %4 of %5 mismatches, max abs error %6")
                            .arg(t.trial)
                            .arg(qs(t.seed.empty() ? "?" : t.seed), t.passed ? QStringLiteral("pass") : QStringLiteral("FAIL"))
                            .arg(mismatches)
                            .arg(elements)
                            .arg(worstAbs ? numberText(*worstAbs) : QStringLiteral("-"));
    }
    // The first failing trial is the evidence a user reads, as in `kforge verify`.
    if (const protocol::Trial* t = s.firstFailingTrial())
        for (const std::string& line : t->evidence())
            c.evidence << qs(line);
}

QString statsText(const protocol::TimingSummary& t)
{
    if (!t.medianMs)
        return {};
    auto us = [](const std::optional<double>& v) { return v ? microsecondsText(*v) : QStringLiteral("-"); };
    QString text = QStringLiteral("median %1 µs, IQR %2 µs, min %3, max %4, mean %5 µs, %6 samples")
                       .arg(us(t.medianMs), us(t.iqrMs), us(t.minMs), us(t.maxMs), us(t.meanMs))
                       .arg(t.samples);
    if (t.medianRelSpread)
        text += QStringLiteral(", median spread %1 %").arg(numberText(100.0 * *t.medianRelSpread));
    return text;
}

void fillPerformance(ResultRow::Performance& p, const protocol::BenchShape& s, const QString& sourceHash)
{
    p.present = true;
    p.sourceHash = sourceHash;
    p.candidateMedianMs = s.candidate.medianMs;
    p.baselineMedianMs = s.baseline.medianMs;
    p.speedup = s.speedup;
    p.achievedGbs = s.achievedGbs;
    p.pctPeakBandwidth = s.pctPeakBandwidth;
    p.candidateStats = statsText(s.candidate);
    p.baselineStats = statsText(s.baseline);
    // Shown even when the runner did not flag them: either one makes the number a lie.
    for (const std::string& f : s.allFlags())
        p.flags << qs(f);
    p.trustworthy = s.trustworthy();
    if (const auto& c = s.compile) {
        if (c->measured)
            p.compileSpeedup = c->speedup;
        QStringList lines;
        lines << (c->measured ? QStringLiteral("torch.compile's faster mode (%1) divided by the candidate, in one process")
                                    .arg(qs(c->bestMode))
                              : QStringLiteral("Not compared with torch.compile: ") + qs(c->reason));
        for (const auto& m : c->modes)
            lines << (m.medianMs ? QStringLiteral("%1: %2, compiled in %3 s")
                                       .arg(qs(m.mode), microsecondsText(*m.medianMs), numberText(m.compileS.value_or(NAN)))
                                 : QStringLiteral("%1: not measured: %2").arg(qs(m.mode), qs(m.reason)));
        for (const std::string& f : c->flags)
            lines << qs(f);
        p.compileNote = lines.join(QLatin1Char('\n'));
    }
}

} // namespace

QString numberText(double v, int significant) { return qs(protocol::formatNumber(v, significant)); }

QString microsecondsText(double ms)
{
    if (!std::isfinite(ms))
        return numberText(ms);
    const double us = ms * 1000.0;
    const double mag = std::fabs(us);
    return QString::number(us, 'f', mag < 10 ? 2 : mag < 1000 ? 1 : 0);
}

std::vector<ResultRow> fromReport(const protocol::RunReport& report)
{
    std::vector<ResultRow> rows;
    const protocol::Header& h = report.header;
    const QString sourceHash = qs(h.candidate.sourceHash);
    const ResultRow base = baseRow(h);
    if (report.verify)
        for (const protocol::CorrectnessShape& s : report.verify->shapes) {
            ResultRow r = base;
            fillShape(r, s.id);
            fillCorrectness(r.correctness, s, sourceHash, qs(h.dumpDir));
            rows.push_back(std::move(r));
        }
    if (report.bench)
        for (const protocol::BenchShape& s : report.bench->shapes) {
            ResultRow r = base;
            fillShape(r, s.id);
            fillPerformance(r.performance, s, sourceHash);
            rows.push_back(std::move(r));
        }
    if (h.isError()) {
        ResultRow r = base;
        r.isErrorRow = true;
        r.errorKind = QString::fromLatin1(protocol::reportKindName(h.kind));
        r.errorSourceHash = sourceHash;
        r.errorSentence = qs(h.errorSentence());
        r.errorHint = qs(h.error ? h.error->hint : std::string());
        rows.push_back(std::move(r));
    }
    return rows;
}

} // namespace kf::ui::reportrows
