#pragma once
// The roofline's geometry, apart from any chart so it can be checked number by number: the
// device's ceilings as line segments on log-log axes, the measured points, and where a point that
// has no intensity (a copy kernel does no floating-point work) is drawn instead, and why.

#include "engine/protocol/ProfileReport.h"

#include <QList>
#include <QPointF>
#include <QString>
#include <QStringList>

#include <optional>
#include <vector>

namespace kf::ui {

struct RooflineInput {
    enum class Role { Candidate, Baseline, Kernel };
    Role role = Role::Candidate;
    QString label;                      ///< "candidate", "baseline", "copy_kernel"
    kf::profile::Totals totals;
};

struct RooflineCeiling {
    enum class Kind { Dram, Fp32, Fp16Tensor };
    Kind kind = Kind::Dram;
    QString label;                      ///< "DRAM 3.35 TB/s", "FP32 66.9 TFLOP/s"
    QString description;                ///< the tooltip: the peak, where it comes from, the ridge
    double peak = 0;                    ///< GB/s for DRAM, GFLOP/s otherwise
    QList<QPointF> line;                ///< (FLOP/B, GFLOP/s), two points
    std::optional<QPointF> ridge;       ///< where a compute ceiling meets the DRAM slope
};

struct RooflinePoint {
    /// Measured: at (intensity, GFLOP/s). NoFlops: the kernel did no floating-point work, so it
    /// has no intensity; it is drawn near the left edge, at x = 1.5 × xMin and y = GB/s × x,
    /// which keeps its distance below the DRAM roof equal to its share of peak bandwidth.
    /// NoDramTraffic: FLOPs but no DRAM bytes (everything hit in cache): drawn near the right
    /// edge (x = xMax / 1.5) at its FLOP/s.
    enum class Placement { Measured, NoFlops, NoDramTraffic };
    RooflineInput::Role role = RooflineInput::Role::Candidate;
    QString label;
    Placement placement = Placement::Measured;
    double intensity = 0;               ///< as measured (0 without FLOPs)
    double gflops = 0;
    double dramGbs = 0;
    QPointF plotted;                    ///< where the chart draws it (FLOP/B, GFLOP/s)
    QString description;                ///< the tooltip: the numbers and, if moved, why
};

struct Roofline {
    double xMin = 0.01, xMax = 1000;    ///< FLOP/B, whole decades
    double yMin = 1, yMax = 1e6;        ///< GFLOP/s, whole decades
    std::vector<RooflineCeiling> ceilings;  ///< only those the device reports (non-zero)
    std::vector<RooflinePoint> points;  ///< in input order, those that could be placed
    QStringList notes;                  ///< what is not drawn, or drawn somewhere unusual, and why

    /// Lays out `inputs` against `ceilings`. Inputs without counters (no duration) are left out
    /// with a note.
    static Roofline compute(const kf::profile::Ceilings& ceilings, const std::vector<RooflineInput>& inputs);

    const RooflineCeiling* ceiling(RooflineCeiling::Kind kind) const;
    const RooflinePoint* point(const QString& label) const;
};

} // namespace kf::ui
