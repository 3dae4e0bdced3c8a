#include "widgets/registry/EvidenceHtml.h"

#include "widgets/registry/RegistryModel.h"
#include "widgets/runs/ReportJson.h"
#include "widgets/runs/ReportRows.h"

#include <QLocale>
#include <QObject>
#include <QStringList>

namespace kf::ui::evidencehtml {

namespace {

namespace rj = reportjson;
using nlohmann::json;

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

// A JSON value as a user reads it: strings bare, report numbers via numberText, others compact.
QString valueText(const json& v)
{
    if (v.is_null())
        return QStringLiteral("—");
    if (v.is_string())
        return qs(v.get<std::string>());
    if (v.is_number_integer())
        return QString::number(v.get<long long>());
    if (v.is_number())
        return rj::numberText(v.get<double>(), 4);
    return qs(v.dump());
}

QString shapeText(const json& shape)
{
    return rj::dimsText(json{{"shape", shape}});
}

QString row(const QString& key, const QString& valueHtml)
{
    return QStringLiteral("<tr><td style='padding-right:14px'><b>%1</b></td><td>%2</td></tr>").arg(esc(key), valueHtml);
}

QString heading(const QString& title)
{
    return QStringLiteral("<h3 style='margin-top:14px; margin-bottom:4px'>%1</h3>").arg(esc(title));
}

QString seedsText(const json& seeds)
{
    if (!seeds.is_array() || seeds.empty())
        return QStringLiteral("—");
    QStringList out;
    for (const json& s : seeds)
        out << valueText(s);
    return out.join(QStringLiteral(", "));
}

// "13000" from cuDriverGetVersion reads as "13.0".
QString cudaVersion(const json& v)
{
    if (!v.is_number_integer())
        return valueText(v);
    const long long n = v.get<long long>();
    return QStringLiteral("%1.%2").arg(n / 1000).arg((n % 1000) / 10);
}

QString scopeBox(const RegistryDetails& d, const Colors& c)
{
    QString scope = rj::text(d.promotion, "evidence_scope");
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
    const json& speedup = rj::field(d.promotion, "speedup");
    const double geomean = rj::isNumber(rj::field(speedup, "geomean")) ? rj::number(rj::field(speedup, "geomean"))
                                                                       : d.entry.geomeanSpeedup;
    const double minimum = rj::isNumber(rj::field(speedup, "min")) ? rj::number(rj::field(speedup, "min")) : d.entry.minSpeedup;
    const json& threshold = rj::field(d.promotion, "threshold");
    QString html = heading(QObject::tr("Speedup over LibTorch"));
    html += QStringLiteral("<p>%1 <b>%2</b> · %3 <b>%4</b>")
                .arg(esc(QObject::tr("geometric mean")), RegistryModel::speedupText(geomean), esc(QObject::tr("slowest shape")),
                     RegistryModel::speedupText(minimum));
    if (rj::isNumber(threshold))
        html += QStringLiteral(" · %1 %2").arg(esc(QObject::tr("threshold at promotion")), RegistryModel::speedupText(rj::number(threshold)));
    html += QStringLiteral("</p>");
    const json& perShape = rj::field(speedup, "per_shape");
    if (!perShape.is_array() || perShape.empty())
        return html;
    html += QStringLiteral("<table cellpadding='3'><tr><th align='left'>%1</th><th align='right'>%2</th><th align='right'>%3</th>"
                           "<th align='right'>%4</th></tr>")
                .arg(esc(QObject::tr("shape")), esc(QObject::tr("kernel median (µs)")), esc(QObject::tr("LibTorch median (µs)")),
                     esc(QObject::tr("speedup")));
    for (const json& s : perShape) {
        QString name = rj::text(s, "label");
        const QString dims = shapeText(rj::field(s, "shape"));
        name = name.isEmpty() ? dims : name + QStringLiteral(" (") + dims + QLatin1Char(')');
        const double v = rj::number(rj::field(s, "speedup"));
        const QString colour = v >= 1.0 ? c.good : c.bad;
        const auto micros = [&](const char* key) {
            const json& ms = rj::field(s, key);
            return rj::isNumber(ms) ? reportrows::microsecondsText(rj::number(ms)) : QStringLiteral("—");
        };
        html += QStringLiteral("<tr><td>%1</td><td align='right'>%2</td><td align='right'>%3</td>"
                               "<td align='right' style='color:%4'><b>%5</b></td></tr>")
                    .arg(esc(name), micros("candidate_median_ms"), micros("baseline_median_ms"), colour, RegistryModel::speedupText(v));
    }
    return html + QStringLiteral("</table>");
}

QString gatesSection(const RegistryDetails& d, const Colors& c)
{
    const json& gates = rj::field(d.promotion, "gates");
    QString html = heading(QObject::tr("Promotion gates"));
    if (!gates.is_array() || gates.empty())
        return html + QStringLiteral("<p>%1</p>").arg(esc(QObject::tr("promotion.json lists no gates.")));
    html += QStringLiteral("<table cellpadding='3'>");
    for (const json& g : gates) {
        const bool passed = rj::field(g, "passed").is_boolean() && rj::field(g, "passed").get<bool>();
        QString detail = esc(rj::text(g, "detail"));
        if (!passed && !rj::text(g, "hint").isEmpty())
            detail += QStringLiteral("<br><i>%1</i>").arg(esc(rj::text(g, "hint")));
        html += QStringLiteral("<tr><td valign='top' style='color:%1'><b>%2</b></td><td valign='top'><b>%3</b></td>"
                               "<td valign='top'>%4</td></tr>")
                    .arg(passed ? c.good : c.bad, passed ? QStringLiteral("✓") : QStringLiteral("✗"), esc(rj::text(g, "title")), detail);
    }
    return html + QStringLiteral("</table>");
}

QString environmentSection(const RegistryDetails& d)
{
    const json& env = rj::field(d.promotion, "environment");
    QString html = heading(QObject::tr("Environment"));
    html += QStringLiteral("<table cellpadding='2'>");
    QString gpu = rj::text(env, "gpu", qs(d.entry.gpu));
    const QString cc = rj::text(env, "compute_capability");
    if (!cc.isEmpty())
        gpu += QStringLiteral(" (compute capability %1, %2)").arg(cc, qs(d.entry.arch));
    html += row(QObject::tr("GPU"), esc(gpu));
    const json& memory = rj::field(env, "memory_bytes");
    if (memory.is_number())
        html += row(QObject::tr("GPU memory"), esc(QLocale::c().formattedDataSize(memory.get<qint64>(), 1, QLocale::DataSizeTraditionalFormat)));
    html += row(QObject::tr("Driver"), esc(valueText(rj::field(env, "driver"))));
    html += row(QObject::tr("CUDA (driver API)"), esc(cudaVersion(rj::field(env, "cuda_driver_api"))));
    html += row(QObject::tr("NVRTC"), esc(valueText(rj::field(env, "nvrtc"))));
    html += row(QObject::tr("LibTorch"), esc(valueText(rj::field(env, "torch"))));
    return html + QStringLiteral("</table>");
}

QString methodSection(const RegistryDetails& d)
{
    QString html = heading(QObject::tr("Seeds, tolerances and held-out shapes"));
    html += QStringLiteral("<table cellpadding='2'>");
    const json& seeds = rj::field(d.promotion, "seeds");
    html += row(QObject::tr("Correctness seeds"), esc(seedsText(rj::field(seeds, "correctness"))));
    if (!rj::field(seeds, "performance").is_null())
        html += row(QObject::tr("Benchmark seeds"), esc(seedsText(rj::field(seeds, "performance"))));
    html += row(QObject::tr("Trials per shape"), esc(valueText(rj::field(d.promotion, "trials_per_shape"))));

    QStringList tolerances;
    for (const json& t : rj::field(d.promotion, "tolerances").is_array() ? rj::field(d.promotion, "tolerances") : json::array()) {
        const bool rms = rj::text(t, "atol_mode") == QLatin1String("rms");
        tolerances << QStringLiteral("%1: rtol %2, atol %3%4")
                          .arg(rj::text(t, "output"), valueText(rj::field(t, "rtol")), valueText(rj::field(t, "atol")),
                               rms ? QObject::tr(" × reference RMS") : QString());
    }
    html += row(QObject::tr("Tolerances"), tolerances.isEmpty() ? QStringLiteral("—") : esc(tolerances.join(QStringLiteral("; "))));

    QStringList heldOut;
    for (const json& s : rj::field(d.promotion, "held_out_shapes").is_array() ? rj::field(d.promotion, "held_out_shapes") : json::array())
        heldOut << shapeText(s);
    html += row(QObject::tr("Held-out shapes"), heldOut.isEmpty() ? esc(QObject::tr("none (the task admits no shape beside its tests)"))
                                                                  : esc(heldOut.join(QStringLiteral("; "))));
    html += row(QObject::tr("Benchmark shapes"), esc(qs(d.entry.shapesText())));
    return html + QStringLiteral("</table>");
}

QString provenanceSection(const RegistryDetails& d)
{
    QString html = heading(QObject::tr("Provenance"));
    html += QStringLiteral("<table cellpadding='2'>");
    const json& task = rj::field(d.promotion, "task");
    const json& candidate = rj::field(d.promotion, "candidate");
    html += row(QObject::tr("Task"), esc(QStringLiteral("%1 (hash %2)").arg(rj::text(task, "name", qs(d.entry.taskName)),
                                                                           rj::text(task, "hash", qs(d.entry.taskHash)))));
    html += row(QObject::tr("Kernel file"), esc(QStringLiteral("%1 (hash %2)").arg(rj::text(candidate, "file", qs(d.entry.kernelFile)),
                                                                                  rj::text(candidate, "source_hash", qs(d.entry.sourceHash)))));
    QStringList options;
    for (const json& o : rj::field(candidate, "compile_options").is_array() ? rj::field(candidate, "compile_options") : json::array())
        options << valueText(o);
    if (!options.isEmpty())
        html += row(QObject::tr("NVRTC options"), QStringLiteral("<code>%1</code>").arg(esc(options.join(QLatin1Char(' ')))));
    QString promoted = QStringLiteral("%1 (%2 UTC)").arg(RegistryModel::localDateText(d.entry.promotedAt), qs(d.entry.promotedAt));
    const QString by = rj::text(d.promotion, "promoted_by");
    if (!by.isEmpty())
        promoted += QObject::tr(" by %1").arg(by);
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
    html += scopeBox(details, c);
    if (details.promotion.is_null())
        return html;
    html += speedupSection(details, c);
    html += gatesSection(details, c);
    html += environmentSection(details);
    html += methodSection(details);
    html += provenanceSection(details);
    return html;
}

} // namespace kf::ui::evidencehtml
