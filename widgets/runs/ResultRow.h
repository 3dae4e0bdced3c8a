#pragma once
// One row of the results table: what a correctness report and a performance report say about one
// (candidate, shape), or one run of a candidate that could not be done at all.

#include <QString>
#include <QStringList>

#include <optional>

namespace kf::ui {

/// A plain value; ResultsModel builds and owns them. Numbers are std::nullopt when the report did
/// not give them, and NaN or ±infinity when it gave "nan" or "inf" (the user must see those).
struct ResultRow {
    enum class Verdict { None, Pass, Fail, Error };

    /// Where a report was made (its "placement" block, docs/runners.md): which endpoint, host and GPU.
    struct Placement {
        QString text;          ///< "box · gpu-box · GPU-1a2b3c4d" (· attempt 2); empty when the report has none
        QString toolTip;       ///< every field on a line of its own

        bool operator==(const Placement&) const = default;
    };

    /// Facts from a correctness report, summed over its trials and outputs as `kforge verify` does.
    struct Correctness {
        bool present = false;
        bool passed = false;
        QString sourceHash;
        std::optional<double> maxAbsError; ///< the worst over trials; NaN anywhere wins
        std::optional<double> maxRelError;
        /// The worst "candidate error ÷ LibTorch's" against the float64 golden result over trials
        /// and outputs (inf when only LibTorch was exact); none when no output had a golden result.
        std::optional<double> errorRatio;
        QString goldenNote;    ///< why an output had no golden result (the first such note)
        qint64 mismatches = 0;
        qint64 elements = 0; ///< compared elements over all trials and outputs
        qint64 unwritten = 0;
        int trials = 0;
        QString failure;       ///< "trial 0: y: 12 of 20495 elements outside tolerance (…)"; empty on a pass
        QStringList evidence;  ///< guard violations, modified inputs, launch errors, disagreeing runs
        QStringList trialLines; ///< one line per trial for tooltips: seed, mismatches, errors
        /// Absolute folders of the failing trials whose tensors the runner saved (the report's
        /// dump_dir joined with each trial's "case"), in trial order; empty when none were saved.
        QStringList caseDirs;
        Placement placement;   ///< where the verification ran
    };

    /// Facts from a performance report for this shape.
    struct Performance {
        bool present = false;
        bool trustworthy = true; ///< false when below the roofline floor or a re-check failed
        QString sourceHash;
        std::optional<double> candidateMedianMs;
        std::optional<double> baselineMedianMs;
        std::optional<double> speedup; ///< baseline median / candidate median
        /// Over torch.compile's faster mode (docs/benchmarks.md); none when not compared.
        std::optional<double> compileSpeedup;
        QString compileNote;   ///< the modes' medians, or why the comparison was not made
        std::optional<double> achievedGbs;
        std::optional<double> pctPeakBandwidth;
        QString candidateStats; ///< "median 81.0 µs, IQR 2.0 µs, min …, 120 samples, spread 0.4 %"
        QString baselineStats;
        QStringList flags; ///< the runner's flags plus "below roofline floor" / "re-check failed: …"
        Placement placement;   ///< where the benchmark ran
    };

    /// The compute-sanitizer section of a correctness report (docs/verification.md): one row per
    /// candidate, beside its shapes.
    struct Sanitizer {
        enum class State { Clean, Findings, Failed, NotRun };
        State state = State::NotRun;
        QString sentence;      ///< "compute-sanitizer 2025.3.1.0: clean — memcheck, … on 2 shapes (2.4 s)"
        QString shapes;        ///< "N=1 · N=1000"
        QStringList lines;     ///< every finding and tool, for the tooltip
        int findings = 0;
        QString sourceHash;
        Placement placement;
    };

    QString task;
    QString candidate; ///< the candidate's file, e.g. "optimized.cu"
    QString arch;
    QString gpu;
    QString shapeLabel; ///< may be empty
    QString dims;       ///< "B=7 D=4099"
    QString set;        ///< tests | benchmarks | held_out
    double shapeSize = 0; ///< product of the dimensions, to sort shapes by size

    /// An error row stands for a whole run that could not be done (verdict "error").
    bool isErrorRow = false;
    QString errorKind; ///< "correctness" or "performance": a later good report of that kind clears the row
    QString errorSentence;
    QString errorHint;
    QString errorSourceHash;
    Placement errorPlacement;

    /// A sanitizer row holds a correctness report's compute-sanitizer section; the next
    /// verification of the candidate replaces it (or removes it, when it did not run the tools).
    bool isSanitizerRow = false;
    Sanitizer sanitizer;

    Correctness correctness;
    Performance performance;

    /// Error for error rows; a sanitizer row's Pass (clean), Fail (findings, a tool failed) or
    /// None (not run); else the correctness verdict; else Fail for an untrustworthy timing,
    /// Pass for a trustworthy one; None when nothing is known.
    Verdict verdict() const
    {
        if (isErrorRow)
            return Verdict::Error;
        if (isSanitizerRow) {
            switch (sanitizer.state) {
            case Sanitizer::State::Clean: return Verdict::Pass;
            case Sanitizer::State::Findings:
            case Sanitizer::State::Failed: return Verdict::Fail;
            case Sanitizer::State::NotRun: return Verdict::None;
            }
            return Verdict::None;
        }
        if (correctness.present)
            return correctness.passed ? Verdict::Pass : Verdict::Fail;
        if (performance.present)
            return performance.trustworthy ? Verdict::Pass : Verdict::Fail;
        return Verdict::None;
    }
    /// A failing correctness row with saved tensors: the inspector can open it.
    bool canInspect() const { return verdict() == Verdict::Fail && correctness.present && !correctness.caseDirs.isEmpty(); }
    /// The row's placement text: both halves' when they ran in different places.
    QString placementText() const
    {
        if (isErrorRow)
            return errorPlacement.text;
        if (isSanitizerRow)
            return sanitizer.placement.text;
        const Placement& c = correctness.placement;
        const Placement& p = performance.placement;
        if (!correctness.present || c.text.isEmpty())
            return performance.present ? p.text : QString();
        if (!performance.present || p.text.isEmpty() || p.text == c.text)
            return c.text;
        return QStringLiteral("verify: ") + c.text + QStringLiteral(" / bench: ") + p.text;
    }
    /// "tail (B=7 D=4099)", or the dimensions alone when there is no label.
    QString shapeText() const
    {
        if (shapeLabel.isEmpty())
            return dims;
        return dims.isEmpty() ? shapeLabel : shapeLabel + QStringLiteral(" (") + dims + QLatin1Char(')');
    }
};

} // namespace kf::ui
