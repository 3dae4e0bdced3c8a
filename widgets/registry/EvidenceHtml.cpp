#include "widgets/registry/EvidenceHtml.h"

#include "engine/cast/ModelRuns.h"

#include "widgets/registry/RegistryModel.h"
#include "widgets/runs/ReportRows.h"

#include <QLocale>
#include <QObject>
#include <QStringList>

#include <cmath>

namespace kf::ui::evidencehtml {

namespace {


QString esc(const QString& s)
{
    return s.toHtmlEscaped();
}

QString qs(const std::string& s)
{
    return QString::fromStdString(s);
}

struct Colors {
    QString good;
    QString bad;
    QString warn;
    QString scopeBg;
    QString muted;
};

Colors colors(bool dark)
{
    if (dark)
        return {QStringLiteral("#6ccf7f"), QStringLiteral("#ff7b72"), QStringLiteral("#f0b44c"), QStringLiteral("#2b3340"),
                QStringLiteral("#9aa4b2")};
    return {QStringLiteral("#1b7f37"), QStringLiteral("#c62828"), QStringLiteral("#9a6000"), QStringLiteral("#eef3fb"),
            QStringLiteral("#5f6b7a")};
}

QString textOr(const std::string& v, const QString& fallback = QStringLiteral("—"))
{
    return v.empty() ? fallback : qs(v);
}

QString numberText(double v) { return reportrows::numberText(v, 4); }

QString row(const QString& key, const QString& valueHtml)
{
    return QStringLiteral("<tr><td style='padding-right:14px'><b>%1</b></td><td>%2</td></tr>").arg(esc(key), valueHtml);
}

QString heading(const QString& title)
{
    return QStringLiteral("<h3 style='margin-top:14px; margin-bottom:4px'>%1</h3>").arg(esc(title));
}

QString seedsText(const std::vector<std::string>& seeds)
{
    if (seeds.empty())
        return QStringLiteral("—");
    QStringList out;
    for (const std::string& s : seeds)
        out << qs(s);
    return out.join(QStringLiteral(", "));
}

// "13000" from cuDriverGetVersion reads as "13.0".
QString cudaVersion(std::int64_t n)
{
    if (n <= 0)
        return QStringLiteral("—");
    return QStringLiteral("%1.%2").arg(n / 1000).arg((n % 1000) / 10);
}

QString scopeBox(const RegistryDetails& d, const Colors& c)
{
    QString scope = qs(d.promotion->evidenceScope);
    if (scope.isEmpty())
        scope = QObject::tr("unknown: promotion.json does not state the evidence scope");
    // The engine's sentence says it is no end-to-end speedup; an older or foreign one may not.
    QString caveat;
    if (!scope.contains(QLatin1String("end-to-end")))
        caveat = QStringLiteral("<br><span style='color:%1'>%2</span>")
                     .arg(c.muted, esc(QObject::tr("An op-level microbenchmark of this kernel against LibTorch on the shapes "
                                                   "below; never an end-to-end model speedup.")));
    return QStringLiteral("<table width='100%' cellpadding='8' style='background:%1; margin-bottom:6px'><tr><td>"
                          "<b>%2</b> %3%4</td></tr></table>")
        .arg(c.scopeBg, esc(QObject::tr("What this speedup means:")), esc(scope), caveat);
}

QString speedupSection(const RegistryDetails& d, const Colors& c)
{
    const kf::PromotionRecord& p = *d.promotion;
    const double geomean = p.geomeanSpeedup.value_or(d.entry.geomeanSpeedup);
    const double minimum = p.minSpeedup.value_or(d.entry.minSpeedup);
    QString html = heading(QObject::tr("Speedup over LibTorch"));
    html += QStringLiteral("<p>%1 <b>%2</b> · %3 <b>%4</b>")
                .arg(esc(QObject::tr("geometric mean")), RegistryModel::speedupText(geomean), esc(QObject::tr("slowest shape")),
                     RegistryModel::speedupText(minimum));
    if (p.threshold)
        html += QStringLiteral(" · %1 %2").arg(esc(QObject::tr("threshold at promotion")), RegistryModel::speedupText(*p.threshold));
    html += QStringLiteral("</p>");
    // The second baseline (docs/benchmarks.md): what one line of torch.compile would have given.
    const kf::protocol::BenchReport* bench = d.performance && d.performance->bench() ? &*d.performance->bench() : nullptr;
    html += QStringLiteral("<p>%1 ").arg(esc(QObject::tr("Against torch.compile:")));
    if (p.compileSpeedup)
        html += QStringLiteral("<b>%1</b> %2").arg(RegistryModel::speedupText(*p.compileSpeedup), esc(QObject::tr("geometric mean over its faster mode")));
    else if (bench && bench->compileBaseline && !bench->compileBaseline->measured)
        html += esc(QObject::tr("not measured: ") + qs(bench->compileBaseline->reason));
    else
        html += esc(QObject::tr("not compared (promoted with --baseline eager, or before the comparison existed)"));
    if (p.compileThreshold)
        html += QStringLiteral(" · %1 %2").arg(esc(QObject::tr("required at promotion")), RegistryModel::speedupText(*p.compileThreshold));
    html += QStringLiteral("</p>");
    if (p.perShape.empty())
        return html;
    html += QStringLiteral("<table cellpadding='3'><tr><th align='left'>%1</th><th align='right'>%2</th><th align='right'>%3</th>"
                           "<th align='right'>%4</th><th align='right'>%5</th></tr>")
                .arg(esc(QObject::tr("shape")), esc(QObject::tr("kernel median (µs)")), esc(QObject::tr("LibTorch median (µs)")),
                     esc(QObject::tr("speedup")), esc(QObject::tr("vs torch.compile")));
    for (const kf::PromotionRecord::ShapeSpeedup& s : p.perShape) {
        const QString dims = qs(s.shape.dimsText());
        const QString name = s.shape.label.empty() ? dims : qs(s.shape.label) + QStringLiteral(" (") + dims + QLatin1Char(')');
        const double v = s.speedup.value_or(std::nan(""));
        const QString colour = v >= 1.0 ? c.good : c.bad;
        const auto micros = [](const std::optional<double>& ms) {
            return ms ? reportrows::microsecondsText(*ms) : QStringLiteral("—");
        };
        // The comparison of the same shape in the stored performance report, if it has one.
        QString versus = QStringLiteral("—");
        if (bench)
            for (const kf::protocol::BenchShape& b : bench->shapes)
                if (b.id.dims == s.shape.dims && b.compile && b.compile->measured && b.compile->speedup)
                    versus = RegistryModel::speedupText(*b.compile->speedup) + QStringLiteral(" (") + qs(b.compile->bestMode) +
                             QLatin1Char(')');
        html += QStringLiteral("<tr><td>%1</td><td align='right'>%2</td><td align='right'>%3</td>"
                               "<td align='right' style='color:%4'><b>%5</b></td><td align='right'>%6</td></tr>")
                    .arg(esc(name), micros(s.candidateMedianMs), micros(s.baselineMedianMs), colour, RegistryModel::speedupText(v),
                         esc(versus));
    }
    return html + QStringLiteral("</table>");
}

/// Whole models this version's kernel ran in: a different scope from the speedup above, and said so.
QString modelRunsSection(const RegistryDetails& d, const Colors& c)
{
    if (d.modelRuns.empty())
        return {};
    QString html = heading(QObject::tr("Model-level evidence (end to end)"));
    html += QStringLiteral("<p style='color:%1'>%2</p>")
                .arg(c.muted, esc(QObject::tr("Whole models run with and without this package's kernels (kforge cast run --record). "
                                              "The speedup is the model's time per pass, not this kernel's microbenchmark above.")));
    html += QStringLiteral("<table cellpadding='3'><tr><th align='left'>%1</th><th align='left'>%2</th><th align='right'>%3</th>"
                           "<th align='right'>%4</th><th align='right'>%5</th><th align='left'>%6</th><th align='left'>%7</th></tr>")
                .arg(esc(QObject::tr("model (package)")), esc(QObject::tr("GPU, runtime")), esc(QObject::tr("with (ms)")),
                     esc(QObject::tr("without (ms)")), esc(QObject::tr("end to end")), esc(QObject::tr("call sites")),
                     esc(QObject::tr("recorded")));
    for (const nlohmann::json& r : d.modelRuns) {
        const kf::cast::RunTally tally = kf::cast::tallyOf(r);   // checked by modelRunsOf
        const int subs = tally.substituted;
        const std::int64_t fallbacks = tally.fallbacks;
        auto median = [&](const char* key) {
            return r.contains(key) && r[key].is_object() ? numberText(r[key]["median"].get<double>()) : QStringLiteral("—");
        };
        const bool timed = r["speedup"].is_number();
        const double v = timed ? r["speedup"].get<double>() : std::nan("");
        QString sites = QObject::tr("%1 of %2 substituted").arg(subs).arg(r["substitution"].size());
        if (fallbacks)
            sites += QStringLiteral(", <span style='color:%1'><b>%2</b></span>").arg(c.warn, esc(QObject::tr("%1 fallbacks").arg(fallbacks)));
        const std::string gpu = r["gpu"].get<std::string>();
        html += QStringLiteral("<tr><td>%1 (%2 %3)</td><td>%4, %5</td><td align='right'>%6</td><td align='right'>%7</td>"
                               "<td align='right' style='color:%8'><b>%9</b></td><td>%10</td><td>%11</td></tr>")
                    .arg(esc(qs(r["model"].get<std::string>())), esc(qs(r["package"]["name"].get<std::string>())),
                         esc(qs(r["package"]["version"].get<std::string>())), esc(gpu.empty() ? QObject::tr("CPU") : qs(gpu)),
                         esc(qs(r["runtime"].get<std::string>())), median("with_kernels_ms"), median("without_kernels_ms"),
                         fallbacks ? c.warn : v >= 1.0 ? c.good : c.bad, timed ? RegistryModel::speedupText(v) : QStringLiteral("—"), sites,
                         esc(RegistryModel::localDateText(r["created_at"].get<std::string>())));
    }
    return html + QStringLiteral("</table>");
}

QString gatesSection(const RegistryDetails& d, const Colors& c)
{
    const std::vector<kf::GateCheck>& gates = d.promotion->gates;
    QString html = heading(QObject::tr("Promotion gates"));
    if (gates.empty())
        return html + QStringLiteral("<p>%1</p>").arg(esc(QObject::tr("promotion.json lists no gates.")));
    // The policy the sanitizer gate was judged under, and what compute-sanitizer ran.
    if (const auto& san = d.promotion->sanitizer) {
        QString line = QObject::tr("Sanitizer policy at promotion: %1").arg(qs(kf::sanitizerPolicyName(san->policy)));
        if (san->outcome == "passed") {
            QStringList tools;
            for (const std::string& t : san->tools)
                tools << qs(t);
            line += QStringLiteral(" · ") + QObject::tr("compute-sanitizer %1 ran %2").arg(qs(san->toolVersion), tools.join(QStringLiteral(", ")));
        }
        html += QStringLiteral("<p>%1</p>").arg(esc(line));
    }
    html += QStringLiteral("<table cellpadding='3'>");
    for (const kf::GateCheck& g : gates) {
        QString detail = esc(qs(g.detail));
        if (!g.passed && !g.hint.empty())
            detail += QStringLiteral("<br><i>%1</i>").arg(esc(qs(g.hint)));
        // A gate the policy let go without a run is neither a pass nor a failure.
        const QString mark = g.passed ? QStringLiteral("✓") : g.notRun ? QStringLiteral("–") : QStringLiteral("✗");
        const QString title = g.notRun ? QObject::tr("%1 (not run)").arg(qs(g.title)) : qs(g.title);
        html += QStringLiteral("<tr><td valign='top' style='color:%1'><b>%2</b></td><td valign='top'><b>%3</b></td>"
                               "<td valign='top'>%4</td></tr>")
                    .arg(g.passed ? c.good : g.notRun ? c.warn : c.bad, mark, esc(title), detail);
    }
    return html + QStringLiteral("</table>");
}

QString environmentSection(const RegistryDetails& d)
{
    const kf::protocol::Environment& env = d.promotion->environment;
    QString html = heading(QObject::tr("Environment"));
    html += QStringLiteral("<table cellpadding='2'>");
    QString gpu = textOr(env.gpu, qs(d.entry.gpu));
    if (!env.computeCapability.empty())
        gpu += QStringLiteral(" (compute capability %1, %2)").arg(qs(env.computeCapability), qs(d.entry.arch));
    html += row(QObject::tr("GPU"), esc(gpu));
    if (env.memoryBytes > 0)
        html += row(QObject::tr("GPU memory"), esc(QLocale::c().formattedDataSize(env.memoryBytes, 1, QLocale::DataSizeTraditionalFormat)));
    html += row(QObject::tr("Driver"), esc(textOr(env.driver)));
    html += row(QObject::tr("CUDA (driver API)"), esc(cudaVersion(env.cudaDriverApi)));
    html += row(QObject::tr("NVRTC"), esc(textOr(env.nvrtc)));
    html += row(QObject::tr("LibTorch"), esc(textOr(env.torch)));
    return html + QStringLiteral("</table>");
}

QString methodSection(const RegistryDetails& d)
{
    const kf::PromotionRecord& p = *d.promotion;
    QString html = heading(QObject::tr("Seeds, tolerances and held-out shapes"));
    html += QStringLiteral("<table cellpadding='2'>");
    html += row(QObject::tr("Correctness seeds"), esc(seedsText(p.correctnessSeeds)));
    if (!p.performanceSeeds.empty())
        html += row(QObject::tr("Benchmark seeds"), esc(seedsText(p.performanceSeeds)));
    html += row(QObject::tr("Trials per shape"), esc(p.trialsPerShape > 0 ? QString::number(p.trialsPerShape) : QStringLiteral("—")));

    QStringList tolerances;
    for (const kf::PromotionRecord::ToleranceUsed& t : p.tolerances)
        tolerances << QStringLiteral("%1: rtol %2, atol %3%4")
                          .arg(qs(t.output), numberText(t.rtol), numberText(t.atol),
                               t.atolRelativeToRms ? QObject::tr(" × reference RMS") : QString());
    html += row(QObject::tr("Tolerances"), tolerances.isEmpty() ? QStringLiteral("—") : esc(tolerances.join(QStringLiteral("; "))));

    QStringList heldOut;
    for (const kf::protocol::ShapeId& s : p.heldOutShapes)
        heldOut << qs(s.dimsText());
    html += row(QObject::tr("Held-out shapes"), heldOut.isEmpty() ? esc(QObject::tr("none (the task admits no shape beside its tests)"))
                                                                  : esc(heldOut.join(QStringLiteral("; "))));
    html += row(QObject::tr("Benchmark shapes"), esc(qs(d.entry.shapesText())));
    return html + QStringLiteral("</table>");
}

QString provenanceSection(const RegistryDetails& d)
{
    const kf::PromotionRecord& p = *d.promotion;
    QString html = heading(QObject::tr("Provenance"));
    html += QStringLiteral("<table cellpadding='2'>");
    html += row(QObject::tr("Task"), esc(QStringLiteral("%1 (hash %2)").arg(textOr(p.task.name, qs(d.entry.taskName)),
                                                                           textOr(p.task.hash, qs(d.entry.taskHash)))));
    html += row(QObject::tr("Kernel file"), esc(QStringLiteral("%1 (hash %2)").arg(textOr(p.candidate.file, qs(d.entry.kernelFile)),
                                                                                  textOr(p.candidate.sourceHash, qs(d.entry.sourceHash)))));
    QStringList options;
    for (const std::string& o : p.candidate.compileOptions)
        options << qs(o);
    if (!options.isEmpty())
        html += row(QObject::tr("NVRTC options"), QStringLiteral("<code>%1</code>").arg(esc(options.join(QLatin1Char(' ')))));
    QString promoted = QStringLiteral("%1 (%2 UTC)").arg(RegistryModel::localDateText(d.entry.promotedAt), qs(d.entry.promotedAt));
    if (!p.promotedBy.empty())
        promoted += QObject::tr(" by %1").arg(qs(p.promotedBy));
    html += row(QObject::tr("Promoted"), esc(promoted));
    return html + QStringLiteral("</table>");
}

} // namespace

QString render(const RegistryDetails& details, const kf::RegistryEntry* live, bool dark)
{
    const Colors c = colors(dark);
    const kf::RegistryEntry& e = live ? *live : details.entry;
    // The ID is the pane's title already.
    QString html = QStringLiteral("<p style='margin-top:0; color:%1'>%2</p>")
                .arg(c.muted, esc(QStringLiteral("%1 · %2 · %3 · %4").arg(qs(e.op), qs(e.dtype), qs(e.gpu), qs(e.shapesText()))));
    if (e.deprecated()) {
        const QString reason = e.deprecationReason.empty() ? QObject::tr("no reason given") : qs(e.deprecationReason);
        const QString when = e.deprecatedAt.empty() ? QString() : QLatin1Char(' ') + RegistryModel::localDateText(e.deprecatedAt);
        html += QStringLiteral("<p style='color:%1'><b>%2</b> %3</p>").arg(c.warn, esc(QObject::tr("Deprecated%1:").arg(when)), esc(reason));
    }
    if (!details.error.isEmpty())
        html += QStringLiteral("<p style='color:%1'><b>%2</b></p>").arg(c.bad, esc(details.error));
    if (!details.promotion) {
        // Without promotion.json there is no scope to state: say so, not a made-up one.
        html += QStringLiteral("<p>%1</p>").arg(esc(QObject::tr("promotion.json could not be read, so the evidence cannot be shown.")));
        return html;
    }
    html += scopeBox(details, c);
    html += speedupSection(details, c);
    html += modelRunsSection(details, c);
    html += gatesSection(details, c);
    html += environmentSection(details);
    html += methodSection(details);
    html += provenanceSection(details);
    return html;
}

} // namespace kf::ui::evidencehtml
