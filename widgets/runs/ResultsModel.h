#pragma once
// The results table: one row per (candidate, shape) with what the correctness report and the
// performance report say about it, side by side, in the numbers `kforge verify|bench` prints.

#include "widgets/runs/ResultRow.h"

#include "engine/protocol/RunReport.h"

#include <QAbstractTableModel>

#include <vector>

namespace kf::ui {

/// Rows from runner reports (docs/report-schema.md). GUI thread only; owned by its Qt parent.
///
/// Merging: a correctness report and a performance report of the same task, candidate and shape
/// fill one row (verdict and errors from the first, timings from the second). A newer report of the
/// same kind replaces that half of the row. Stale evidence is dropped: a report whose candidate
/// source hash differs from what a row's other half was measured on clears that half, and rows
/// left with nothing are removed. A report with verdict "error" adds one row for the candidate
/// whose Details column holds the error sentence; a later good report of the same kind removes it.
/// A correctness report with a compute-sanitizer section adds one sanitizer row for the candidate
/// (its sentence in Details); every correctness report of the candidate replaces or removes it. The
/// Ran on column says where each report ran (endpoint, host, GPU, attempt; docs/runners.md).
class ResultsModel : public QAbstractTableModel {
    Q_OBJECT

public:
    enum Column {
        CandidateColumn,
        ShapeColumn,
        SetColumn,
        VerdictColumn,
        MaxAbsErrorColumn,
        MaxRelErrorColumn,
        ErrorRatioColumn,
        MismatchesColumn,
        CandidateMedianColumn,
        BaselineMedianColumn,
        SpeedupColumn,
        CompileSpeedupColumn,
        BandwidthColumn,
        PlacementColumn,
        DetailsColumn,
        ColumnCount
    };
    /// Role with a value that sorts as a user expects (numbers as numbers, "nan" as the worst,
    /// shapes by their size). Use it as a QSortFilterProxyModel's sortRole.
    static constexpr int SortRole = Qt::UserRole + 1;

    explicit ResultsModel(QObject* parent = nullptr);

    /// Adds one report (the runner's, or one read from a `kforge --json` document).
    void addReport(const kf::protocol::RunReport& report);
    void clear();

    /// For tests and the panel: the row at `row` of the model (not of a sorted view).
    const ResultRow& rowAt(int row) const { return m_rows.at(static_cast<size_t>(row)); }
    /// The row of `candidate` at the shape with this label (or these dims, "B=7 D=4099"), -1 if none.
    /// An empty `shape` finds the candidate's error row.
    int findRow(const QString& candidate, const QString& shape) const;
    /// The candidate's sanitizer row, -1 if none.
    int findSanitizerRow(const QString& candidate) const;

    int rowCount(const QModelIndex& parent = {}) const override;
    int columnCount(const QModelIndex& parent = {}) const override;
    QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
    QVariant headerData(int section, Qt::Orientation orientation, int role = Qt::DisplayRole) const override;

private:
    int rowFor(const ResultRow& key);
    void dropStale(const QString& task, const QString& candidate, const QString& sourceHash);
    void removeErrorRow(const QString& task, const QString& candidate, const QString& kind);
    void removeSanitizerRow(const QString& task, const QString& candidate);
    void rowChanged(int row);

    QVariant display(const ResultRow& r, int column) const;
    QVariant sortValue(const ResultRow& r, int column) const;
    QVariant toolTip(const ResultRow& r, int column) const;
    QVariant foreground(const ResultRow& r, int column) const;
    QString details(const ResultRow& r) const;

    std::vector<ResultRow> m_rows;
};

} // namespace kf::ui
