#pragma once
// The Tune view's table: one row per point of the search (engine/tune/Tuner.h, PointResult) in the
// space's order, with its parameters, registers, occupancy, time, ratio to eager, % of HBM peak,
// stage and the reason it stopped. Read-only; rows update as the search reports its steps.

#include "engine/tune/Tuner.h"

#include <QAbstractTableModel>

#include <optional>
#include <vector>

namespace kf::ui {

class TuneTableModel : public QAbstractTableModel {
    Q_OBJECT
public:
    enum Column { Number, Parameters, Stage, Registers, Occupancy, Time, VsEager, PctPeak, Reason, ColumnCount };
    /// A number to sort by (the time, the stage's order…); display text sorts wrong for figures.
    static constexpr int SortRole = Qt::UserRole + 1;

    explicit TuneTableModel(QObject* parent = nullptr);

    /// Every point at once (the search ended, or a new one begins with none).
    void setPoints(std::vector<kf::tune::PointResult> points);
    /// One point's newest result (a step of a search under way): its row replaced, or added.
    void updatePoint(const kf::tune::PointResult& point);
    const std::vector<kf::tune::PointResult>& points() const { return m_points; }
    const kf::tune::PointResult* pointAt(int row) const;

    int rowCount(const QModelIndex& parent = {}) const override;
    int columnCount(const QModelIndex& parent = {}) const override;
    QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
    QVariant headerData(int section, Qt::Orientation orientation, int role = Qt::DisplayRole) const override;

private:
    QVariant display(const kf::tune::PointResult& p, int row, int column) const;
    QVariant sortKey(const kf::tune::PointResult& p, int row, int column) const;

    std::vector<kf::tune::PointResult> m_points;
};

} // namespace kf::ui
