#include "widgets/inspect/ElementText.h"

#include <QObject>
#include <QStringList>

#include <cmath>
#include <limits>

namespace kf::ui::elementtext {

QString index(const std::vector<std::int64_t>& idx)
{
    QStringList parts;
    for (auto i : idx)
        parts << QString::number(i);
    return QLatin1Char('[') + parts.join(QStringLiteral(", ")) + QLatin1Char(']');
}

static QString special(double v)
{
    if (std::isnan(v))
        return QStringLiteral("nan");
    return v > 0 ? QStringLiteral("inf") : QStringLiteral("-inf");
}

QString number(double v)
{
    return std::isfinite(v) ? QString::number(v, 'g', 7) : special(v);
}

QString shortNumber(double v)
{
    return std::isfinite(v) ? QString::number(v, 'g', 3) : special(v);
}

QString className(ElementClass c)
{
    switch (c) {
    case ElementClass::Ok: return QObject::tr("ok");
    case ElementClass::OutsideTolerance: return QObject::tr("outside tolerance");
    case ElementClass::NonFinite: return QObject::tr("NaN/Inf mismatch");
    case ElementClass::Unwritten: return QObject::tr("never written");
    }
    return {};
}

double relError(double expected, const ElementVerdict& v)
{
    if (v.cls == ElementClass::Unwritten)
        return std::numeric_limits<double>::quiet_NaN();
    if (!std::isfinite(v.absError))
        return v.absError;
    if (expected != 0)
        return v.absError / std::fabs(expected);
    return v.absError == 0 ? 0.0 : std::numeric_limits<double>::infinity();
}

} // namespace kf::ui::elementtext
