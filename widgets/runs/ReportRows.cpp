#include "widgets/runs/ReportRows.h"

#include "engine/protocol/Report.h"

#include <QDir>
#include <QStringList>

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
    const protocol::Header& h = report.header();
    const QString sourceHash = qs(h.candidate.sourceHash);
    const ResultRow base = baseRow(h);
    const ResultRow::Placement placement = placementOf(h);
    if (report.verify())
        for (const protocol::CorrectnessShape& s : report.verify()->shapes) {
            ResultRow r = base;
            fillShape(r, s.id);
            fillCorrectness(r.correctness, s, sourceHash, qs(h.dumpDir));
            r.correctness.placement = placement;
            rows.push_back(std::move(r));
        }
    if (report.bench())
        for (const protocol::BenchShape& s : report.bench()->shapes) {
            ResultRow r = base;
            fillShape(r, s.id);
            fillPerformance(r.performance, s, sourceHash);
            r.performance.placement = placement;
            rows.push_back(std::move(r));
        }
    if (h.isError()) {
        ResultRow r = base;
        r.isErrorRow = true;
        r.errorKind = QString::fromLatin1(protocol::reportKindName(h.kind));
        r.errorSourceHash = sourceHash;
        r.errorSentence = qs(h.errorSentence());
        r.errorHint = qs(h.error ? h.error->hint : std::string());
        r.errorPlacement = placement;
        rows.push_back(std::move(r));
    }
    if (std::optional<ResultRow> r = sanitizerRow(report))
        rows.push_back(std::move(*r));
    return rows;
}

ResultRow::Placement placementOf(const protocol::Header& h)
{
    const protocol::Placement& p = h.placement;
    ResultRow::Placement out;
    if (p.empty())
        return out;
    // The endpoint's name; a plain local runner has none.
    QStringList parts{p.endpoint.empty() ? QStringLiteral("local") : qs(p.endpoint)};
    if (!p.host.empty())
        parts << qs(p.host);
    if (!p.gpuUuid.empty())
        parts << qs(p.gpuUuid).left(12);
    else if (!p.visibleDevices.empty())
        parts << QStringLiteral("GPU %1").arg(qs(p.visibleDevices));
    if (p.attempt > 1)
        parts << QStringLiteral("attempt %1").arg(p.attempt);
    out.text = parts.join(QStringLiteral(" · "));
    QStringList tip;
    tip << QStringLiteral("Endpoint: %1").arg(p.endpoint.empty() ? QStringLiteral("the local runner") : qs(p.endpoint));
    tip << QStringLiteral("Attempt: %1").arg(p.attempt);
    if (!p.host.empty())
        tip << QStringLiteral("Host: %1").arg(qs(p.host));
    if (!h.environment.gpu.empty())
        tip << QStringLiteral("GPU: %1").arg(qs(h.environment.gpu));
    if (!p.gpuUuid.empty())
        tip << QStringLiteral("GPU UUID: %1").arg(qs(p.gpuUuid));
    if (!p.pciBusId.empty())
        tip << QStringLiteral("PCI bus: %1").arg(qs(p.pciBusId));
    tip << QStringLiteral("CUDA_VISIBLE_DEVICES: %1").arg(p.visibleDevices.empty() ? QStringLiteral("(not set)") : qs(p.visibleDevices));
    out.toolTip = tip.join(QLatin1Char('\n'));
    return out;
}

QString sanitizerSentence(const protocol::SanitizerSection& s)
{
    if (!s.ran)
        return QStringLiteral("compute-sanitizer: not run: %1").arg(s.reason.empty() ? QStringLiteral("the runner gave no reason") : qs(s.reason));
    const QString who = s.toolVersion.empty() ? QStringLiteral("compute-sanitizer") : QStringLiteral("compute-sanitizer %1").arg(qs(s.toolVersion));
    const QString took = QStringLiteral("(%1 s)").arg(QString::number(double(s.durationMs) / 1000.0, 'f', 1));
    // A problem's own sentence starts with "compute-sanitizer <tool>: "; the row says the first part once.
    auto withoutPrefix = [](std::string text) {
        const std::string prefix = "compute-sanitizer ";
        return qs(text.rfind(prefix, 0) == 0 ? text.substr(prefix.size()) : text);
    };
    if (!s.findings.empty()) {
        const int n = int(s.findings.size());
        return QStringLiteral("%1: %2 — %3%4 %5")
            .arg(who, n == 1 ? QStringLiteral("1 finding") : QStringLiteral("%1 findings").arg(n),
                 n == 1 ? QString() : QStringLiteral("first: "), withoutPrefix(s.findings.front().summary()), took);
    }
    int failed = 0;
    for (const protocol::SanitizerToolRun& t : s.tools)
        failed += t.error.empty() ? 0 : 1;
    if (failed > 0)
        return QStringLiteral("%1: %2 — %3 %4")
            .arg(who, failed == 1 ? QStringLiteral("1 tool failed") : QStringLiteral("%1 tools failed").arg(failed),
                 withoutPrefix(s.firstProblem()), took);
    QStringList ran;
    for (const protocol::SanitizerToolRun& t : s.tools)
        if (t.ran)
            ran << qs(t.tool);
    const QString shapes = s.shapes.size() == 1 ? QStringLiteral("1 shape") : QStringLiteral("%1 shapes").arg(s.shapes.size());
    if (!s.clean()) // ran, nothing found and nothing failed, yet not clean: a tool stopped at its print limit, or none ran
        return QStringLiteral("%1: not clean — %2 on %3 %4").arg(who, ran.isEmpty() ? QStringLiteral("no tool ran") : ran.join(QStringLiteral(", ")), shapes, took);
    return QStringLiteral("%1: clean — %2 on %3 %4").arg(who, ran.join(QStringLiteral(", ")), shapes, took);
}

std::optional<ResultRow> sanitizerRow(const protocol::RunReport& report)
{
    if (!report.verify() || !report.verify()->sanitizer)
        return std::nullopt;
    const protocol::SanitizerSection& s = *report.verify()->sanitizer;
    const protocol::Header& h = report.header();
    ResultRow r = baseRow(h);
    r.isSanitizerRow = true;
    r.set = QStringLiteral("compute-sanitizer");
    ResultRow::Sanitizer& out = r.sanitizer;
    out.sentence = sanitizerSentence(s);
    out.sourceHash = qs(h.candidate.sourceHash);
    out.placement = placementOf(h);
    out.findings = int(s.findings.size());
    QStringList shapes;
    for (const std::string& shape : s.shapes)
        shapes << qs(shape);
    out.shapes = shapes.join(QStringLiteral(" · "));
    bool toolFailed = false;
    for (const protocol::SanitizerToolRun& t : s.tools) {
        toolFailed = toolFailed || !t.error.empty();
        QString line = QStringLiteral("%1: ").arg(qs(t.tool));
        if (!t.error.empty())
            line += QStringLiteral("FAILED: ") + qs(t.error);
        else if (!t.skipped.empty())
            line += QStringLiteral("skipped: ") + qs(t.skipped);
        else if (t.ran)
            line += QStringLiteral("%1 finding(s) in %2 s").arg(t.findings).arg(QString::number(double(t.durationMs) / 1000.0, 'f', 1));
        else
            line += QStringLiteral("did not run");
        if (t.truncated)
            line += QStringLiteral(" (stopped at its print limit)");
        if (t.ignored > 0)
            line += QStringLiteral("; %1 record(s) outside the candidate ignored").arg(t.ignored);
        out.lines << line;
    }
    for (const protocol::SanitizerFinding& f : s.findings)
        out.lines << qs(f.summary()) + (f.count > 1 ? QStringLiteral(" (reported %1 times)").arg(f.count) : QString());
    if (!s.ran)
        out.state = ResultRow::Sanitizer::State::NotRun;
    else if (!s.findings.empty())
        out.state = ResultRow::Sanitizer::State::Findings;
    else if (toolFailed || !s.clean())
        out.state = ResultRow::Sanitizer::State::Failed;
    else
        out.state = ResultRow::Sanitizer::State::Clean;
    return r;
}

} // namespace kf::ui::reportrows
