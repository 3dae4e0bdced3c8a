#include "widgets/runs/ResultsModel.h"

#include "widgets/runs/ReportRows.h"
#include "widgets/common/VerdictStyle.h"

#include <QGuiApplication>

#include <algorithm>
#include <cmath>
#include <limits>

namespace kf::ui {

namespace {

QString speedupText(double x)
{
    return std::isfinite(x) ? QString::number(x, 'f', 2) + QStringLiteral("×") : reportrows::numberText(x);
}

// NaN sorts as the worst value (largest), so "sort by max error" puts broken shapes together.
QVariant sortable(const std::optional<double>& v)
{
    if (!v)
        return {};
    return std::isnan(*v) ? std::numeric_limits<double>::infinity() : *v;
}

bool sameCell(const ResultRow& a, const ResultRow& b)
{
    if (a.task != b.task || a.candidate != b.candidate || a.isErrorRow != b.isErrorRow || a.isSanitizerRow != b.isSanitizerRow)
        return false;
    if (a.isSanitizerRow)
        return true;
    return a.isErrorRow ? a.errorKind == b.errorKind : a.shapeLabel == b.shapeLabel && a.dims == b.dims;
}

// Hashes are compared only when both are known: a report without one cannot prove staleness.
bool stale(const QString& rowHash, const QString& newHash)
{
    return !rowHash.isEmpty() && !newHash.isEmpty() && rowHash != newHash;
}

} // namespace

ResultsModel::ResultsModel(QObject* parent) : QAbstractTableModel(parent) {}

void ResultsModel::addReport(const kf::protocol::RunReport& report)
{
    const kf::protocol::Header& h = report.header();
    const QString task = QString::fromStdString(h.task.name.empty() ? "?" : h.task.name);
    const QString candidate = QString::fromStdString(h.candidate.file.empty() ? "?" : h.candidate.file);
    const QString kind = QString::fromLatin1(kf::protocol::reportKindName(h.kind));
    dropStale(task, candidate, QString::fromStdString(h.candidate.sourceHash));
    if (!h.isError())
        removeErrorRow(task, candidate, kind);
    // The candidate's compute-sanitizer row speaks for its last verification only.
    if (h.kind == kf::protocol::ReportKind::Correctness)
        removeSanitizerRow(task, candidate);

    for (ResultRow& incoming : reportrows::fromReport(report)) {
        auto it = std::find_if(m_rows.begin(), m_rows.end(), [&](const ResultRow& r) { return sameCell(r, incoming); });
        if (it == m_rows.end()) {
            const int row = rowCount();
            beginInsertRows({}, row, row);
            m_rows.push_back(std::move(incoming));
            endInsertRows();
            continue;
        }
        if (incoming.isErrorRow || incoming.isSanitizerRow) {
            *it = std::move(incoming);
        } else {
            if (incoming.correctness.present)
                it->correctness = std::move(incoming.correctness);
            if (incoming.performance.present)
                it->performance = std::move(incoming.performance);
            if (it->set.isEmpty() || incoming.correctness.present)
                it->set = incoming.set;
            it->arch = incoming.arch;
            it->gpu = incoming.gpu;
        }
        rowChanged(static_cast<int>(it - m_rows.begin()));
    }
}

void ResultsModel::dropStale(const QString& task, const QString& candidate, const QString& sourceHash)
{
    for (int row = rowCount() - 1; row >= 0; --row) {
        ResultRow& r = m_rows[static_cast<size_t>(row)];
        if (r.task != task || r.candidate != candidate)
            continue;
        bool changed = false;
        if (r.correctness.present && stale(r.correctness.sourceHash, sourceHash)) {
            r.correctness = {};
            changed = true;
        }
        if (r.performance.present && stale(r.performance.sourceHash, sourceHash)) {
            r.performance = {};
            changed = true;
        }
        const bool empty = r.isErrorRow       ? stale(r.errorSourceHash, sourceHash)
                           : r.isSanitizerRow ? stale(r.sanitizer.sourceHash, sourceHash)
                                              : !r.correctness.present && !r.performance.present;
        if (empty) {
            beginRemoveRows({}, row, row);
            m_rows.erase(m_rows.begin() + row);
            endRemoveRows();
        } else if (changed) {
            rowChanged(row);
        }
    }
}

void ResultsModel::removeErrorRow(const QString& task, const QString& candidate, const QString& kind)
{
    for (int row = rowCount() - 1; row >= 0; --row) {
        const ResultRow& r = m_rows[static_cast<size_t>(row)];
        if (r.isErrorRow && r.task == task && r.candidate == candidate && r.errorKind == kind) {
            beginRemoveRows({}, row, row);
            m_rows.erase(m_rows.begin() + row);
            endRemoveRows();
        }
    }
}

void ResultsModel::removeSanitizerRow(const QString& task, const QString& candidate)
{
    for (int row = rowCount() - 1; row >= 0; --row) {
        const ResultRow& r = m_rows[static_cast<size_t>(row)];
        if (r.isSanitizerRow && r.task == task && r.candidate == candidate) {
            beginRemoveRows({}, row, row);
            m_rows.erase(m_rows.begin() + row);
            endRemoveRows();
        }
    }
}

int ResultsModel::findSanitizerRow(const QString& candidate) const
{
    for (size_t i = 0; i < m_rows.size(); ++i)
        if (m_rows[i].isSanitizerRow && m_rows[i].candidate == candidate)
            return static_cast<int>(i);
    return -1;
}

void ResultsModel::clear()
{
    if (m_rows.empty())
        return;
    beginResetModel();
    m_rows.clear();
    endResetModel();
}

int ResultsModel::findRow(const QString& candidate, const QString& shape) const
{
    for (size_t i = 0; i < m_rows.size(); ++i) {
        const ResultRow& r = m_rows[i];
        if (r.candidate != candidate)
            continue;
        if (r.isSanitizerRow)
            continue;
        if (shape.isEmpty() ? r.isErrorRow : !r.isErrorRow && (r.shapeLabel == shape || r.dims == shape))
            return static_cast<int>(i);
    }
    return -1;
}

void ResultsModel::rowChanged(int row)
{
    emit dataChanged(index(row, 0), index(row, ColumnCount - 1));
}

int ResultsModel::rowCount(const QModelIndex& parent) const
{
    return parent.isValid() ? 0 : static_cast<int>(m_rows.size());
}

int ResultsModel::columnCount(const QModelIndex& parent) const
{
    return parent.isValid() ? 0 : ColumnCount;
}

QVariant ResultsModel::data(const QModelIndex& index, int role) const
{
    if (!checkIndex(index, CheckIndexOption::IndexIsValid | CheckIndexOption::ParentIsInvalid))
        return {};
    const ResultRow& r = m_rows[static_cast<size_t>(index.row())];
    const int column = index.column();
    switch (role) {
    case Qt::DisplayRole:
        return display(r, column);
    case SortRole:
        return sortValue(r, column);
    case Qt::ToolTipRole:
        return toolTip(r, column);
    case Qt::ForegroundRole:
        return foreground(r, column);
    case Qt::DecorationRole:
        if (column != VerdictColumn)
            return {};
        switch (r.verdict()) {
        case ResultRow::Verdict::Pass:
            return verdictstyle::icon(Tone::Good, QGuiApplication::palette());
        case ResultRow::Verdict::Fail:
        case ResultRow::Verdict::Error:
            return verdictstyle::icon(Tone::Bad, QGuiApplication::palette());
        case ResultRow::Verdict::None:
            return {};
        }
        return {};
    case Qt::TextAlignmentRole:
        if (column >= MaxAbsErrorColumn && column <= BandwidthColumn)
            return QVariant::fromValue(Qt::AlignRight | Qt::AlignVCenter);
        return QVariant::fromValue(Qt::AlignLeft | Qt::AlignVCenter);
    default:
        return {};
    }
}

QVariant ResultsModel::display(const ResultRow& r, int column) const
{
    const auto& c = r.correctness;
    const auto& p = r.performance;
    switch (column) {
    case CandidateColumn:
        return r.candidate;
    case ShapeColumn:
        if (r.isSanitizerRow)
            return r.sanitizer.shapes.isEmpty() ? QStringLiteral("—") : r.sanitizer.shapes;
        return r.isErrorRow ? QStringLiteral("—") : r.shapeText();
    case SetColumn:
        return r.set;
    case VerdictColumn:
        if (r.isSanitizerRow)
            switch (r.sanitizer.state) {
            case ResultRow::Sanitizer::State::Clean: return QStringLiteral("clean");
            case ResultRow::Sanitizer::State::Findings: return QStringLiteral("FAIL");
            case ResultRow::Sanitizer::State::Failed: return QStringLiteral("error");
            case ResultRow::Sanitizer::State::NotRun: return QStringLiteral("not run");
            }
        switch (r.verdict()) {
        case ResultRow::Verdict::Pass:
            return c.present ? QStringLiteral("pass") : QStringLiteral("ok");
        case ResultRow::Verdict::Fail:
            return QStringLiteral("FAIL");
        case ResultRow::Verdict::Error:
            return QStringLiteral("error");
        case ResultRow::Verdict::None:
            return QString();
        }
        return QString();
    case MaxAbsErrorColumn:
        return c.present && c.maxAbsError ? reportrows::numberText(*c.maxAbsError) : QString();
    case MaxRelErrorColumn:
        return c.present && c.maxRelError ? reportrows::numberText(*c.maxRelError) : QString();
    case ErrorRatioColumn:
        if (!c.present || !c.errorRatio)
            return QString();
        return std::isinf(*c.errorRatio) ? QStringLiteral("LibTorch exact")
                                         : reportrows::numberText(*c.errorRatio, 2) + QStringLiteral("×");
    case MismatchesColumn: {
        if (!c.present)
            return QString();
        QString text = QStringLiteral("%1 of %2").arg(c.mismatches).arg(c.elements);
        if (c.unwritten > 0)
            text += QStringLiteral(" (%1 unwritten)").arg(c.unwritten); // unwritten elements count as mismatches
        return text;
    }
    case CandidateMedianColumn:
        return p.candidateMedianMs ? reportrows::microsecondsText(*p.candidateMedianMs) : QString();
    case BaselineMedianColumn:
        return p.baselineMedianMs ? reportrows::microsecondsText(*p.baselineMedianMs) : QString();
    case SpeedupColumn:
        return p.speedup ? speedupText(*p.speedup) : QString();
    case CompileSpeedupColumn:
        if (p.compileSpeedup)
            return speedupText(*p.compileSpeedup);
        return p.compileNote.isEmpty() ? QString() : QStringLiteral("not measured");
    case BandwidthColumn:
        if (!p.achievedGbs)
            return QString();
        return std::isfinite(*p.achievedGbs) ? QString::number(*p.achievedGbs, 'f', 1) : reportrows::numberText(*p.achievedGbs);
    case PlacementColumn:
        return r.placementText();
    case DetailsColumn:
        return details(r);
    default:
        return {};
    }
}

QString ResultsModel::details(const ResultRow& r) const
{
    if (r.isErrorRow)
        return r.errorSentence;
    if (r.isSanitizerRow)
        return r.sanitizer.sentence;
    QStringList parts;
    if (r.correctness.present && !r.correctness.passed)
        parts << r.correctness.failure;
    if (r.performance.present && !r.performance.flags.isEmpty())
        parts << r.performance.flags.join(QStringLiteral("; "));
    return parts.join(QStringLiteral(" · "));
}

QVariant ResultsModel::sortValue(const ResultRow& r, int column) const
{
    const auto& c = r.correctness;
    const auto& p = r.performance;
    switch (column) {
    case ShapeColumn:
        return r.shapeSize;
    case VerdictColumn:
        return static_cast<int>(r.verdict());
    case MaxAbsErrorColumn:
        return c.present ? sortable(c.maxAbsError) : QVariant();
    case MaxRelErrorColumn:
        return c.present ? sortable(c.maxRelError) : QVariant();
    case ErrorRatioColumn:
        return c.present ? sortable(c.errorRatio) : QVariant();
    case MismatchesColumn:
        return c.present ? QVariant(c.mismatches) : QVariant();
    case CandidateMedianColumn:
        return sortable(p.candidateMedianMs);
    case BaselineMedianColumn:
        return sortable(p.baselineMedianMs);
    case SpeedupColumn:
        return sortable(p.speedup);
    case CompileSpeedupColumn:
        return sortable(p.compileSpeedup);
    case BandwidthColumn:
        return sortable(p.achievedGbs);
    default:
        return display(r, column);
    }
}

QVariant ResultsModel::toolTip(const ResultRow& r, int column) const
{
    const auto& c = r.correctness;
    const auto& p = r.performance;
    switch (column) {
    case CandidateColumn: {
        QString tip = r.task + QLatin1Char('/') + r.candidate;
        if (!r.arch.isEmpty())
            tip += QStringLiteral(" [") + r.arch + QLatin1Char(']');
        if (!r.gpu.isEmpty())
            tip += QStringLiteral(" on ") + r.gpu;
        return tip;
    }
    case PlacementColumn: {
        QStringList parts;
        if (r.isErrorRow)
            parts << r.errorPlacement.toolTip;
        else if (r.isSanitizerRow)
            parts << r.sanitizer.placement.toolTip;
        else {
            if (c.present && !c.placement.toolTip.isEmpty())
                parts << QStringLiteral("Verified on:\n") + c.placement.toolTip;
            if (p.present && !p.placement.toolTip.isEmpty())
                parts << QStringLiteral("Benchmarked on:\n") + p.placement.toolTip;
        }
        parts.removeAll(QString());
        return parts.isEmpty() ? QVariant() : QVariant(parts.join(QStringLiteral("\n\n")));
    }
    case VerdictColumn:
    case DetailsColumn: {
        if (r.isSanitizerRow)
            return (QStringList{r.sanitizer.sentence} + r.sanitizer.lines).join(QLatin1Char('\n'));
        if (r.isErrorRow)
            return r.errorSentence + (r.errorHint.isEmpty() ? QString() : QStringLiteral("\nWhat to do: ") + r.errorHint);
        QStringList lines;
        if (c.present) {
            lines << (c.passed ? QStringLiteral("All %1 trial(s) passed.").arg(c.trials) : QStringLiteral("First failure: ") + c.failure);
            lines << c.evidence;
        }
        if (p.present && !p.flags.isEmpty())
            lines << QStringLiteral("Timing flags: ") + p.flags.join(QStringLiteral("; "));
        return lines.isEmpty() ? QVariant() : QVariant(lines.join(QLatin1Char('\n')));
    }
    case MaxAbsErrorColumn:
    case ErrorRatioColumn:
        if (!c.present)
            return {};
        if (!c.errorRatio)
            return c.goldenNote.isEmpty() ? QStringLiteral("No float64 golden result in this report.")
                                          : QStringLiteral("No float64 golden result: ") + c.goldenNote;
        return QStringLiteral("The candidate's RMS error against the float64 golden result, divided by LibTorch's own "
                              "(worst over trials and outputs): below 1 the candidate is more accurate than LibTorch.");
    case MaxRelErrorColumn:
    case MismatchesColumn:
        if (!c.present)
            return {};
        return QStringLiteral("Worst over %1 trial(s), mismatches summed; non-finite values show as nan/inf.\n").arg(c.trials) +
               c.trialLines.join(QLatin1Char('\n'));
    case CandidateMedianColumn:
        return p.candidateStats.isEmpty() ? QVariant() : QVariant(QStringLiteral("Candidate: ") + p.candidateStats);
    case BaselineMedianColumn:
        return p.baselineStats.isEmpty() ? QVariant() : QVariant(QStringLiteral("LibTorch baseline: ") + p.baselineStats);
    case SpeedupColumn:
        if (!p.present)
            return {};
        return QStringLiteral("Baseline median / candidate median.") +
               (p.flags.isEmpty() ? QString() : QStringLiteral("\nFlags: ") + p.flags.join(QStringLiteral("; ")));
    case CompileSpeedupColumn:
        return p.compileNote.isEmpty() ? QVariant() : QVariant(p.compileNote);
    case BandwidthColumn:
        if (!p.pctPeakBandwidth)
            return {};
        return QStringLiteral("%1 % of the GPU's peak memory bandwidth").arg(reportrows::numberText(*p.pctPeakBandwidth));
    default:
        return {};
    }
}

QVariant ResultsModel::foreground(const ResultRow& r, int column) const
{
    const QPalette palette = QGuiApplication::palette();
    auto tone = [&](Tone t) { return QVariant(verdictstyle::color(t, palette)); };
    switch (column) {
    case VerdictColumn:
    case DetailsColumn:
        switch (r.verdict()) {
        case ResultRow::Verdict::Pass:
            return column == VerdictColumn ? tone(Tone::Good) : QVariant();
        case ResultRow::Verdict::Fail:
        case ResultRow::Verdict::Error:
            return tone(Tone::Bad);
        case ResultRow::Verdict::None:
            return {};
        }
        return {};
    case MismatchesColumn:
        return r.correctness.present && r.correctness.mismatches > 0 ? tone(Tone::Bad) : QVariant();
    case SpeedupColumn:
        if (!r.performance.speedup)
            return {};
        if (!r.performance.trustworthy)
            return tone(Tone::Bad);
        return tone(*r.performance.speedup >= 1.0 ? Tone::Good : Tone::Warning);
    case CompileSpeedupColumn:
        if (!r.performance.compileSpeedup)
            return {};
        return tone(*r.performance.compileSpeedup >= 1.0 ? Tone::Good : Tone::Warning);
    default:
        return {};
    }
}

QVariant ResultsModel::headerData(int section, Qt::Orientation orientation, int role) const
{
    if (orientation != Qt::Horizontal || section < 0 || section >= ColumnCount)
        return QAbstractTableModel::headerData(section, orientation, role);
    static const char* const titles[ColumnCount] = {
        "Candidate", "Shape", "Set", "Verdict", "Max abs error", "Max rel error", "Error vs LibTorch", "Mismatches",
        "Candidate median (µs)", "Baseline median (µs)", "Speedup", "vs torch.compile", "GB/s", "Ran on", "Details"};
    static const char* const tips[ColumnCount] = {
        "The candidate's source file",
        "Shape label and sizes",
        "Shape set: tests, benchmarks or held_out",
        "Correctness verdict over every trial (for a timing alone: whether the timing can be trusted)",
        "Largest absolute error against the reference (the float64 golden result where there is one), over all trials (nan wins)",
        "Largest relative error against the reference, over all trials",
        "The candidate's error against the float64 golden result divided by LibTorch's (below 1: more accurate than LibTorch)",
        "Elements outside tolerance, of all elements compared, summed over trials",
        "Median time of the candidate, L2 flushed and fresh inputs before every sample",
        "Median time of the LibTorch baseline, timed interleaved with the candidate",
        "Baseline median divided by candidate median",
        "torch.compile's faster mode divided by the candidate, both timed in one process by the torch.compile harness",
        "Memory bandwidth the candidate achieved (task's byte count / median)",
        "Where the report was made: the runner endpoint, its host, the GPU's UUID, and the attempt when a pool retried",
        "First failure, error sentence, compute-sanitizer's sentence or timing flags"};
    if (role == Qt::DisplayRole)
        return QString::fromUtf8(titles[section]);
    if (role == Qt::ToolTipRole)
        return QString::fromUtf8(tips[section]);
    return QAbstractTableModel::headerData(section, orientation, role);
}

} // namespace kf::ui
