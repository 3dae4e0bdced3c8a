#include "widgets/profile/ProfileFormat.h"

#include <QCoreApplication>

#include <array>
#include <cmath>
#include <string_view>

namespace kf::ui {
namespace {

QString tr(const char* text)
{
    return QCoreApplication::translate("kf::ui::ProfileFormat", text);
}

/// Three significant digits once scaled into [1, 1000): "2.91", "29.1", "291".
QString threeDigits(double v)
{
    const double a = std::fabs(v);
    const int decimals = a >= 100 || a == 0 ? 0 : a >= 10 ? 1 : 2;
    return QString::number(v, 'f', decimals);
}

/// `value` with the largest prefix of ("", k, M, G, T, P) that keeps it >= 1.
QString withPrefix(double value, const QString& unit)
{
    static constexpr std::array<const char*, 6> prefixes{"", "k", "M", "G", "T", "P"};
    if (!std::isfinite(value))
        return QStringLiteral("—");
    size_t i = 0;
    double v = value;
    while (std::fabs(v) >= 999.5 && i + 1 < prefixes.size()) {
        v /= 1000.0;
        ++i;
    }
    const QString number = i == 0 && v == std::floor(v) ? QString::number(v, 'f', 0) : threeDigits(v);
    return number + QLatin1Char(' ') + QLatin1String(prefixes[i]) + unit;
}

} // namespace

QString percentText(std::optional<double> pct)
{
    if (!pct || !std::isfinite(*pct))
        return QStringLiteral("—");
    QString s = QString::number(*pct, 'f', 1);
    if (s.endsWith(QLatin1String(".0")))
        s.chop(2);
    return s + QStringLiteral(" %");
}

QString bytesText(double bytes)
{
    return withPrefix(bytes, QStringLiteral("B"));
}

QString durationText(double ns)
{
    if (!std::isfinite(ns))
        return QStringLiteral("—");
    if (ns < 1e3)
        return threeDigits(ns) + QStringLiteral(" ns");
    if (ns < 1e6)
        return threeDigits(ns / 1e3) + QStringLiteral(" µs");
    if (ns < 1e9)
        return threeDigits(ns / 1e6) + QStringLiteral(" ms");
    return threeDigits(ns / 1e9) + QStringLiteral(" s");
}

QString bandwidthText(double gbs)
{
    return withPrefix(gbs * 1e9, QStringLiteral("B/s"));
}

QString flopRateText(double gflops)
{
    return withPrefix(gflops * 1e9, QStringLiteral("FLOP/s"));
}

QString countText(double n)
{
    return withPrefix(n, QString()).trimmed();
}

QString intensityText(double flopPerByte)
{
    if (!std::isfinite(flopPerByte))
        return QStringLiteral("—");
    const QString n = flopPerByte >= 1000 ? QString::number(flopPerByte, 'f', 0)
                      : flopPerByte >= 0.01 || flopPerByte == 0 ? threeDigits(flopPerByte)
                                                                : QString::number(flopPerByte, 'g', 2);
    return n + QStringLiteral(" FLOP/B");
}

QString metricValueText(const kf::profile::MetricInfo& info, double value)
{
    const std::string_view unit = info.unit;
    if (unit == "%")
        return percentText(value);
    if (unit == "bytes")
        return bytesText(value);
    if (unit == "ns")
        return durationText(value);
    if (unit == "Hz")
        return withPrefix(value, QStringLiteral("Hz"));
    if (unit == "instructions")
        return countText(value);
    return countText(value) + QLatin1Char(' ') + QString::fromUtf8(info.unit);
}

QString shortKernelName(const kf::profile::KernelRecord& k)
{
    QString name = QString::fromStdString(k.demangled.empty() ? k.name : k.demangled);
    // "void f<4>(float const*, ...)": the return type and parameters only repeat the source.
    if (name.startsWith(QLatin1String("void ")))
        name.remove(0, 5);
    int depth = 0;
    for (int i = 0; i < name.size(); ++i) {
        const QChar c = name.at(i);
        if (c == QLatin1Char('<'))
            ++depth;
        else if (c == QLatin1Char('>'))
            --depth;
        else if (c == QLatin1Char('(') && depth == 0 && i > 0)
            return name.left(i);
    }
    return name;
}

QString dimText(const std::array<std::int64_t, 3>& d)
{
    if (d[0] == 0 && d[1] == 0 && d[2] == 0)
        return QStringLiteral("—");
    return QStringLiteral("%1×%2×%3").arg(d[0]).arg(d[1]).arg(d[2]);
}

QString limiterWords(const std::string& limiter)
{
    if (limiter == "warps")
        return tr("warp slots");
    if (limiter == "blocks")
        return tr("block slots");
    if (limiter == "registers")
        return tr("registers");
    if (limiter == "shared_memory" || limiter == "shared memory")
        return tr("shared memory");
    if (limiter == "block_size")
        return tr("block size");
    return QString::fromStdString(limiter);
}

QString limiterSentence(const kf::profile::KernelRecord& k)
{
    const kf::profile::StaticResources& s = k.statics;
    if (!s.known || s.activeBlocksPerSm <= 0)
        return {};
    const QString resident = tr("%1 blocks per SM (%2 of %3 warps)")
                                 .arg(s.activeBlocksPerSm)
                                 .arg(s.activeWarpsPerSm)
                                 .arg(s.maxWarpsPerSm);
    if (s.theoreticalOccupancyPct >= 99.95)
        return tr("full occupancy: %1").arg(resident);
    const std::int64_t threads = k.threadsPerBlock();
    if (s.limiter == "registers")
        return tr("limited by registers: %1 registers × %2 threads allow %3").arg(s.registers).arg(threads).arg(resident);
    if (s.limiter == "shared_memory" || s.limiter == "shared memory")
        return tr("limited by shared memory: %1 static + %2 dynamic per block allow %3")
            .arg(bytesText(s.staticSharedBytes), bytesText(static_cast<double>(k.dynamicSharedBytes)), resident);
    if (s.limiter == "warps")
        return tr("limited by warp slots: %1 warps per block allow %2").arg((threads + 31) / 32).arg(resident);
    if (s.limiter == "blocks")
        return tr("limited by block slots: %1-thread blocks allow %2").arg(threads).arg(resident);
    return tr("limited by %1: %2").arg(limiterWords(s.limiter), resident);
}

} // namespace kf::ui
