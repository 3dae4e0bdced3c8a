#include "widgets/tune/TuneFigures.h"

#include <QCoreApplication>

#include <cmath>

namespace kf::ui::tunefig {

namespace {
QString tr(const char* s) { return QCoreApplication::translate("kf::ui::tunefig", s); }
} // namespace

std::optional<double> geomean(const std::vector<std::optional<double>>& values)
{
    if (values.empty())
        return std::nullopt;
    double logSum = 0;
    for (const std::optional<double>& v : values) {
        if (!v || !(*v > 0))
            return std::nullopt;
        logSum += std::log(*v);
    }
    return std::exp(logSum / double(values.size()));
}

std::optional<double> floorMs(const kf::tune::Outcome& o)
{
    if (!(o.peakGbs > 0))
        return std::nullopt;
    std::vector<std::optional<double>> perShape;
    for (double bytes : o.bytes)
        perShape.push_back(bytes > 0 ? std::optional(bytes / (o.peakGbs * 1e9) * 1e3) : std::nullopt);
    return geomean(perShape);
}

std::optional<double> eagerMs(const kf::tune::Outcome& o) { return geomean(o.eagerMs); }

std::optional<double> compileMs(const kf::protocol::BenchReport& r)
{
    std::vector<std::optional<double>> best;
    for (const kf::protocol::BenchShape& s : r.shapes)
        best.push_back(s.compile && s.compile->measured ? s.compile->bestMs : std::nullopt);
    return geomean(best);
}

bool failed(kf::tune::Stage s)
{
    using kf::tune::Stage;
    return s == Stage::CompileFailed || s == Stage::Pruned || s == Stage::VerifyFailed || s == Stage::BenchFailed;
}

QString stageText(kf::tune::Stage s)
{
    using kf::tune::Stage;
    switch (s) {
    case Stage::NotReached: return tr("not reached");
    case Stage::CompileFailed: return tr("did not compile");
    case Stage::Pruned: return tr("pruned");
    case Stage::VerifyFailed: return tr("verify failed");
    case Stage::BenchFailed: return tr("bench failed");
    case Stage::Timed: return tr("timed");
    case Stage::Finalist: return tr("finalist");
    case Stage::Winner: return tr("winner");
    }
    return {};
}

Tone stageTone(kf::tune::Stage s)
{
    using kf::tune::Stage;
    if (failed(s))
        return Tone::Bad;
    return s == Stage::Winner ? Tone::Good : Tone::Neutral;
}

QString msText(double ms) { return QStringLiteral("%1 ms").arg(QString::number(ms, 'g', 4)); }

QString pointTip(const kf::tune::PointResult& p, int number)
{
    QString tip = QStringLiteral("<b>#%1 %2</b><br>%3").arg(number).arg(QString::fromStdString(p.point.label()).toHtmlEscaped(), stageText(p.stage));
    if (p.rankMs())
        tip += QStringLiteral(" · %1 geomean").arg(msText(*p.rankMs()));
    if (p.finalMs && p.geomeanMs)
        tip += tr(" (re-measured; first timed at %1)").arg(msText(*p.geomeanMs));
    if (p.pctPeak)
        tip += tr("<br>%1 % of HBM peak (lowest shape)").arg(QString::number(*p.pctPeak, 'f', 1));
    if (p.compiled)
        tip += tr("<br>%1 registers").arg(p.registers) +
               (p.occupancy ? tr(" · occupancy %1 %").arg(QString::number(100 * *p.occupancy, 'f', 0)) : QString());
    if (!p.reason.empty())
        tip += QStringLiteral("<br>") + QString::fromStdString(p.reason).toHtmlEscaped();
    return tip;
}

} // namespace kf::ui::tunefig
