#include "widgets/profile/Roofline.h"

#include "widgets/profile/ProfileFormat.h"

#include <QCoreApplication>

#include <algorithm>
#include <cmath>
#include <optional>

namespace kf::ui {
namespace {

QString tr(const char* text)
{
    return QCoreApplication::translate("kf::ui::Roofline", text);
}

/// Points moved to an edge sit this factor inside it, so their marker is drawn whole.
constexpr double kEdgeInset = 1.5;

double decadeBelow(double v)
{
    return std::pow(10.0, std::floor(std::log10(v)));
}

double decadeAbove(double v)
{
    return std::pow(10.0, std::ceil(std::log10(v)));
}

/// The roof above `intensity` and which one it is, for "x % of the DRAM roof" in tooltips.
struct Roof {
    double gflops = 0;
    QString name;
};

Roof roofAt(const kf::profile::Ceilings& c, double intensity)
{
    const double compute = c.fp32Gflops;
    if (c.dramGbs > 0 && (compute <= 0 || c.dramGbs * intensity < compute))
        return {c.dramGbs * intensity, tr("DRAM roof")};
    if (compute > 0)
        return {compute, tr("FP32 roof")};
    return {};
}

QString describe(const RooflinePoint& p, const kf::profile::Ceilings& c, const kf::profile::Totals& t)
{
    QString text;
    switch (p.placement) {
    case RooflinePoint::Placement::Measured: {
        text = tr("%1: %2 at %3, %4 from DRAM")
                   .arg(p.label, flopRateText(p.gflops), intensityText(p.intensity), bandwidthText(p.dramGbs));
        const Roof roof = roofAt(c, p.intensity);
        if (roof.gflops > 0)
            text += tr("\n%1 of the %2 at this intensity (%3)")
                        .arg(percentText(100.0 * p.gflops / roof.gflops), roof.name, flopRateText(roof.gflops));
        break;
    }
    case RooflinePoint::Placement::NoFlops:
        text = tr("%1: no floating-point work counted, so no arithmetic intensity.\n"
                  "Drawn near the left edge at its DRAM bandwidth, %2")
                   .arg(p.label, bandwidthText(p.dramGbs));
        if (c.dramGbs > 0)
            text += tr(" (%1 of the %2 peak)").arg(percentText(100.0 * p.dramGbs / c.dramGbs), bandwidthText(c.dramGbs));
        break;
    case RooflinePoint::Placement::NoDramTraffic:
        text = tr("%1: %2 with no DRAM traffic counted (everything hit in cache), so the intensity is "
                  "unbounded; drawn near the right edge")
                   .arg(p.label, flopRateText(p.gflops));
        break;
    }
    text += tr("\n%1 in %2").arg(bytesText(t.dramBytes), durationText(t.durationNs));
    if (t.fp64Flops > 0)
        text += tr("; %1 of the FLOPs are fp64, which has no ceiling here").arg(percentText(100.0 * t.fp64Flops / t.flops));
    return text;
}

/// The x range: at least 0.01 .. 1000 FLOP/B (every ridge of a current GPU lies inside), widened
/// to whole decades around the ridges and whatever is measured. Adds the y values seen to `ys`.
void setXRange(Roofline& r, const kf::profile::Ceilings& c, const std::vector<RooflineInput>& inputs, std::vector<double>& ys)
{
    double xLo = 0.01, xHi = 1000;
    auto widenX = [&](double x) {
        xLo = std::min(xLo, decadeBelow(x / 2));
        xHi = std::max(xHi, decadeAbove(x * 2));
    };
    const double computePeaks[] = {c.fp32Gflops, c.fp16TensorGflops};
    for (double peak : computePeaks)
        if (peak > 0) {
            ys.push_back(peak);
            if (c.dramGbs > 0)
                widenX(peak / c.dramGbs);
        }
    for (const RooflineInput& in : inputs) {
        const kf::profile::Totals& t = in.totals;
        if (t.hasCounters && t.flops > 0 && t.dramBytes > 0) {
            widenX(t.arithmeticIntensity);
            ys.push_back(t.achievedGflops);
        }
    }
    r.xMin = xLo;
    r.xMax = xHi;
}

/// Where `in` is drawn in r's x range: measured, or moved to an edge when it has no FLOPs or no
/// DRAM traffic. Nothing (with a note in `r`) when it cannot be drawn.
std::optional<RooflinePoint> placePoint(Roofline& r, const kf::profile::Ceilings& c, const RooflineInput& in)
{
    const kf::profile::Totals& t = in.totals;
    RooflinePoint p;
    p.role = in.role;
    p.label = in.label;
    p.intensity = t.arithmeticIntensity;
    p.gflops = t.achievedGflops;
    p.dramGbs = t.achievedDramGbs;
    if (!t.hasCounters || t.durationNs <= 0) {
        r.notes << tr("%1 is not drawn: no counters were collected for it").arg(in.label);
        return std::nullopt;
    }
    if (t.flops > 0 && t.dramBytes > 0) {
        p.placement = RooflinePoint::Placement::Measured;
        p.plotted = QPointF(t.arithmeticIntensity, t.achievedGflops);
    } else if (t.dramBytes > 0) {
        p.placement = RooflinePoint::Placement::NoFlops;
        const double x = r.xMin * kEdgeInset;
        p.plotted = QPointF(x, t.achievedDramGbs * x);
    } else if (t.flops > 0) {
        p.placement = RooflinePoint::Placement::NoDramTraffic;
        p.plotted = QPointF(r.xMax / kEdgeInset, t.achievedGflops);
    } else {
        r.notes << tr("%1 is not drawn: it did neither floating-point work nor DRAM traffic").arg(in.label);
        return std::nullopt;
    }
    p.description = describe(p, c, t);
    return p;
}

/// The notes that explain the hollow marks at the edges.
void noteEdgePoints(Roofline& r)
{
    QStringList noFlops, noTraffic;
    for (const RooflinePoint& p : r.points) {
        if (p.placement == RooflinePoint::Placement::NoFlops)
            noFlops << p.label;
        else if (p.placement == RooflinePoint::Placement::NoDramTraffic)
            noTraffic << p.label;
    }
    if (!noFlops.isEmpty())
        r.notes << tr("Hollow marks (%1): no floating-point work, so no intensity; drawn near the left edge at "
                      "their DRAM bandwidth, so their distance below the DRAM roof shows how far they are from peak "
                      "bandwidth")
                       .arg(noFlops.join(QStringLiteral(", ")));
    if (!noTraffic.isEmpty())
        r.notes << tr("Hollow marks near the right edge (%1): FLOPs but no DRAM traffic, so the intensity is unbounded")
                       .arg(noTraffic.join(QStringLiteral(", ")));
}

/// The DRAM slope, up to the highest compute roof. Adds its ends to `ys`.
void addDramCeiling(Roofline& r, const kf::profile::Ceilings& c, std::vector<double>& ys)
{
    ys.push_back(c.dramGbs * r.xMin);
    const double top = std::max(c.fp32Gflops, c.fp16TensorGflops);
    RooflineCeiling dram;
    dram.kind = RooflineCeiling::Kind::Dram;
    dram.peak = c.dramGbs;
    dram.label = tr("DRAM %1").arg(bandwidthText(c.dramGbs));
    dram.description = tr("DRAM peak %1 (%2): below a ridge, a kernel can reach at most this bandwidth × its "
                          "intensity")
                           .arg(bandwidthText(c.dramGbs),
                                c.dramSource.empty() ? tr("source unknown")
                                                     : tr("from %1").arg(QString::fromStdString(c.dramSource)));
    const double end = top > 0 ? top / c.dramGbs : r.xMax;
    dram.line = {QPointF(r.xMin, c.dramGbs * r.xMin), QPointF(end, c.dramGbs * end)};
    ys.push_back(c.dramGbs * end);
    r.ceilings.push_back(std::move(dram));
}

/// A flat compute roof from its ridge (or the left edge without a DRAM peak) to the right edge.
void addComputeCeiling(Roofline& r, const kf::profile::Ceilings& c, RooflineCeiling::Kind kind, double peak, const QString& name)
{
    if (peak <= 0)
        return;
    RooflineCeiling ceiling;
    ceiling.kind = kind;
    ceiling.peak = peak;
    ceiling.label = QStringLiteral("%1 %2").arg(name, flopRateText(peak));
    ceiling.description = tr("%1 peak %2").arg(name, flopRateText(peak));
    double start = r.xMin;
    if (c.dramGbs > 0) {
        start = peak / c.dramGbs;
        ceiling.ridge = QPointF(start, peak);
        ceiling.description += tr("; ridge at %1: below it the DRAM slope is the lower roof").arg(intensityText(start));
    }
    ceiling.line = {QPointF(start, peak), QPointF(r.xMax, peak)};
    r.ceilings.push_back(std::move(ceiling));
}

} // namespace

Roofline Roofline::compute(const kf::profile::Ceilings& c, const std::vector<RooflineInput>& inputs)
{
    Roofline r;
    std::vector<double> ys;
    setXRange(r, c, inputs, ys);
    for (const RooflineInput& in : inputs)
        if (std::optional<RooflinePoint> p = placePoint(r, c, in)) {
            ys.push_back(p->plotted.y());
            r.points.push_back(std::move(*p));
        }
    noteEdgePoints(r);

    if (c.dramGbs > 0)
        addDramCeiling(r, c, ys);
    addComputeCeiling(r, c, RooflineCeiling::Kind::Fp32, c.fp32Gflops, tr("FP32"));
    addComputeCeiling(r, c, RooflineCeiling::Kind::Fp16Tensor, c.fp16TensorGflops, tr("FP16 tensor"));

    std::erase_if(ys, [](double y) { return !(y > 0) || !std::isfinite(y); });
    if (!ys.empty()) {
        const auto [lo, hi] = std::minmax_element(ys.begin(), ys.end());
        r.yMin = decadeBelow(*lo / 2);
        // Headroom above the highest ceiling for its label.
        r.yMax = decadeAbove(*hi * 4);
    }
    return r;
}

const RooflineCeiling* Roofline::ceiling(RooflineCeiling::Kind kind) const
{
    for (const RooflineCeiling& c : ceilings)
        if (c.kind == kind)
            return &c;
    return nullptr;
}

const RooflinePoint* Roofline::point(const QString& label) const
{
    for (const RooflinePoint& p : points)
        if (p.label == label)
            return &p;
    return nullptr;
}

} // namespace kf::ui
