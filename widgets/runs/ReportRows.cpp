#include "widgets/runs/ReportRows.h"

#include "widgets/runs/ReportJson.h"

#include <QDir>

#include <algorithm>
#include <cmath>
#include <limits>

using nlohmann::json;

namespace kf::ui::reportrows {

namespace rj = reportjson;

namespace {

// The worst of several errors, as the CLI's verify table computes it: NaN anywhere wins.
void addWorst(std::optional<double>& worst, const json& v)
{
    if (!rj::isNumber(v))
        return;
    const double d = rj::number(v);
    if (!worst)
        worst = d;
    else if (!std::isnan(*worst) && (std::isnan(d) || d > *worst))
        worst = d;
}

std::optional<double> optionalNumber(const json& v)
{
    if (!rj::isNumber(v))
        return std::nullopt;
    return rj::number(v);
}

qint64 integer(const json& v)
{
    return v.is_number_integer() ? v.get<qint64>() : 0;
}

QString indexText(const json& index)
{
    if (!index.is_array())
        return rj::numberText(rj::number(index), 17);
    QStringList parts;
    for (const auto& i : index)
        parts << rj::numberText(rj::number(i), 17);
    return QLatin1Char('[') + parts.join(QStringLiteral(", ")) + QLatin1Char(']');
}

ResultRow baseRow(const json& report)
{
    ResultRow r;
    r.task = rj::text(rj::field(report, "task"), "name", QStringLiteral("?"));
    const json& cand = rj::field(report, "candidate");
    r.candidate = rj::text(cand, "file", QStringLiteral("?"));
    r.arch = rj::text(cand, "arch");
    r.gpu = rj::text(rj::field(report, "environment"), "gpu");
    return r;
}

void fillShape(ResultRow& r, const json& s)
{
    r.shapeLabel = rj::text(s, "label");
    r.dims = rj::dimsText(s);
    r.set = rj::text(s, "set");
    double size = 1;
    const json& shape = rj::field(s, "shape");
    if (shape.is_object())
        for (const auto& v : shape)
            size *= v.is_number() ? v.get<double>() : 1.0;
    r.shapeSize = size;
}

// A trial's saved case folder: relative to the report's dump_dir (docs/report-schema.md).
QString caseFolder(const json& trial, const QString& dumpDir)
{
    const QString name = rj::text(trial, "case");
    if (name.isEmpty())
        return {};
    if (QDir::isAbsolutePath(name))
        return QDir::cleanPath(name);
    return dumpDir.isEmpty() ? QString() : QDir::cleanPath(QDir(dumpDir).filePath(name));
}

void fillCorrectness(ResultRow::Correctness& c, const json& s, const QString& sourceHash, const QString& dumpDir)
{
    c.present = true;
    c.sourceHash = sourceHash;
    c.passed = rj::field(s, "passed") == json(true);
    for (const auto& t : rj::field(s, "trials")) {
        ++c.trials;
        const QString trial = rj::numberText(rj::number(rj::field(t, "trial")), 17);
        qint64 trialMismatches = 0, trialElements = 0;
        std::optional<double> trialAbs;
        for (const auto& o : rj::field(t, "outputs")) {
            addWorst(c.maxAbsError, rj::field(o, "max_abs_error"));
            addWorst(c.maxRelError, rj::field(o, "max_rel_error"));
            addWorst(trialAbs, rj::field(o, "max_abs_error"));
            if (const json& g = rj::field(o, "golden"); rj::field(g, "available") == json(true)) {
                const json& r = rj::field(g, "error_ratio");
                const double ratio = r.is_number() ? r.get<double>() : std::numeric_limits<double>::infinity();
                if (!c.errorRatio || ratio > *c.errorRatio)
                    c.errorRatio = ratio;
            } else if (c.goldenNote.isEmpty() && rj::field(g, "available") == json(false)) {
                c.goldenNote = rj::text(g, "note");
            }
            trialMismatches += integer(rj::field(o, "mismatches"));
            trialElements += integer(rj::field(o, "elements"));
            c.unwritten += integer(rj::field(o, "unwritten"));
        }
        c.mismatches += trialMismatches;
        c.elements += trialElements;
        const bool passed = rj::field(t, "passed") == json(true);
        if (const QString dir = caseFolder(t, dumpDir); !dir.isEmpty())
            c.caseDirs << dir;
        c.trialLines << QStringLiteral("trial %1 (seed %2): %3 — %4 of %5 mismatches, max abs error %6")
                            .arg(trial, rj::text(t, "seed", QStringLiteral("?")),
                                 passed ? QStringLiteral("pass") : QStringLiteral("FAIL"))
                            .arg(trialMismatches)
                            .arg(trialElements)
                            .arg(trialAbs ? rj::numberText(*trialAbs) : QStringLiteral("-"));
        if (passed || !c.failure.isEmpty())
            continue;
        // The first failing trial is the evidence a user reads, as in `kforge verify`.
        const QString why = rj::text(t, "failure", rj::text(t, "launch_error", QStringLiteral("failed")));
        c.failure = QStringLiteral("trial %1: %2").arg(trial, why);
        if (const QString le = rj::text(t, "launch_error"); !le.isEmpty())
            c.evidence << QStringLiteral("launch error: ") + le;
        for (const auto& g : rj::field(t, "guard_violations"))
            c.evidence << QStringLiteral("out-of-bounds write: %1, %2 the buffer, at byte offset %3")
                              .arg(rj::text(g, "buffer", QStringLiteral("?")), rj::text(g, "side", QStringLiteral("?")),
                                   rj::numberText(rj::number(rj::field(g, "offset_bytes")), 17));
        if (const json& mi = rj::field(t, "modified_inputs"); mi.is_array() && !mi.empty()) {
            QStringList names;
            for (const auto& n : mi)
                names << (n.is_string() ? QString::fromStdString(n.get<std::string>()) : QString::fromStdString(n.dump()));
            c.evidence << QStringLiteral("inputs modified by the candidate: ") + names.join(QStringLiteral(", "));
        }
        for (const auto& o : rj::field(t, "outputs")) {
            const QString name = rj::text(o, "output", QStringLiteral("?"));
            int shown = 0;
            for (const auto& m : rj::field(o, "first_mismatches")) {
                if (shown++ == 5)
                    break;
                c.evidence << QStringLiteral("%1%2: expected %3, got %4 (abs error %5, rel error %6)")
                                  .arg(name, indexText(rj::field(m, "index")),
                                       rj::numberText(rj::number(rj::field(m, "expected")), 6),
                                       rj::numberText(rj::number(rj::field(m, "actual")), 6),
                                       rj::numberText(rj::number(rj::field(m, "abs_error"))),
                                       rj::numberText(rj::number(rj::field(m, "rel_error"))));
            }
            if (const json& u = rj::field(o, "first_unwritten"); u.is_array() && !u.empty()) {
                QStringList idx;
                for (size_t i = 0; i < u.size() && i < 5; ++i)
                    idx << indexText(u[i]);
                c.evidence << QStringLiteral("%1: never written at %2%3")
                                  .arg(name, idx.join(QStringLiteral(", ")), u.size() > 5 ? QStringLiteral(", …") : QString());
            }
        }
        if (rj::field(t, "runs_agree") == json(false))
            c.evidence << QStringLiteral("two runs of the candidate disagreed on %1 element(s) (max difference %2)")
                              .arg(integer(rj::field(t, "run_disagreements")))
                              .arg(rj::numberText(rj::number(rj::field(t, "run_max_abs_diff"))));
    }
}

QString statsText(const json& stats)
{
    if (!rj::isNumber(rj::field(stats, "median_ms")))
        return {};
    auto us = [&](const char* key) { return microsecondsText(rj::number(rj::field(stats, key))); };
    QString text = QStringLiteral("median %1 µs, IQR %2 µs, min %3, max %4, mean %5 µs, %6 samples")
                       .arg(us("median_ms"), us("iqr_ms"), us("min_ms"), us("max_ms"), us("mean_ms"))
                       .arg(integer(rj::field(stats, "samples")));
    if (rj::isNumber(rj::field(stats, "median_rel_spread")))
        text += QStringLiteral(", median spread %1 %").arg(rj::numberText(100.0 * rj::number(rj::field(stats, "median_rel_spread"))));
    return text;
}

void fillPerformance(ResultRow::Performance& p, const json& s, const QString& sourceHash)
{
    p.present = true;
    p.sourceHash = sourceHash;
    const json& cand = rj::field(s, "candidate");
    const json& base = rj::field(s, "baseline");
    p.candidateMedianMs = optionalNumber(rj::field(cand, "median_ms"));
    p.baselineMedianMs = optionalNumber(rj::field(base, "median_ms"));
    p.speedup = optionalNumber(rj::field(s, "speedup"));
    p.achievedGbs = optionalNumber(rj::field(s, "achieved_gbs"));
    p.pctPeakBandwidth = optionalNumber(rj::field(s, "pct_peak_bandwidth"));
    p.candidateStats = statsText(cand);
    p.baselineStats = statsText(base);
    for (const auto& f : rj::field(s, "flags"))
        if (f.is_string())
            p.flags << QString::fromStdString(f.get<std::string>());
    // Shown even when the runner did not flag them: either one makes the number a lie.
    auto addFlag = [&](const QString& flag) {
        if (!p.flags.contains(flag))
            p.flags << flag;
    };
    if (rj::field(s, "below_floor") == json(true)) {
        p.trustworthy = false;
        addFlag(QStringLiteral("below roofline floor"));
    }
    if (const json& rc = rj::field(s, "recheck"); rj::field(rc, "passed") == json(false)) {
        p.trustworthy = false;
        const QString failure = rj::text(rc, "failure");
        addFlag(QStringLiteral("re-check failed") + (failure.isEmpty() ? QString() : QStringLiteral(": ") + failure));
    }
}

} // namespace

QString microsecondsText(double ms)
{
    if (!std::isfinite(ms))
        return rj::numberText(ms);
    const double us = ms * 1000.0;
    const double mag = std::fabs(us);
    return QString::number(us, 'f', mag < 10 ? 2 : mag < 1000 ? 1 : 0);
}

std::vector<ResultRow> fromReport(const json& report)
{
    std::vector<ResultRow> rows;
    if (!report.is_object())
        return rows;
    const QString kind = rj::text(report, "kind");
    const QString verdict = rj::text(report, "verdict");
    const QString sourceHash = rj::text(rj::field(report, "candidate"), "source_hash");
    const ResultRow base = baseRow(report);
    for (const auto& s : rj::field(report, "shapes")) {
        if (!s.is_object())
            continue;
        ResultRow r = base;
        fillShape(r, s);
        if (kind == QLatin1String("correctness"))
            fillCorrectness(r.correctness, s, sourceHash, rj::text(report, "dump_dir"));
        else if (kind == QLatin1String("performance"))
            fillPerformance(r.performance, s, sourceHash);
        else
            continue;
        rows.push_back(std::move(r));
    }
    if (verdict == QLatin1String("error")) {
        ResultRow r = base;
        r.isErrorRow = true;
        r.errorKind = kind;
        r.errorSourceHash = sourceHash;
        const json& e = rj::field(report, "error");
        r.errorSentence = rj::text(e, "why", rj::text(report, "summary", QStringLiteral("the run could not be done")));
        r.errorHint = rj::text(e, "hint");
        rows.push_back(std::move(r));
    }
    return rows;
}

} // namespace kf::ui::reportrows
