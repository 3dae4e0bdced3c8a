#pragma once
// Every element of an output that fails, in C order, read lazily: the view asks for more
// (canFetchMore/fetchMore) and each fetch scans the element codes for the next kChunk
// mismatches, so a tensor with millions of them opens at once.

#include <QAbstractTableModel>

#include <cstdint>
#include <memory>
#include <vector>

namespace kf::ui {

class CaseData;
struct TensorAnalysis;

/// GUI thread only.
class MismatchListModel : public QAbstractTableModel {
    Q_OBJECT

public:
    static constexpr int kChunk = 1000;
    enum Column { IndexColumn, ExpectedColumn, ActualColumn, AbsErrorColumn, RelErrorColumn, ClassColumn, ColumnCount };
    /// Qt::UserRole on any column: the element's flat index (qlonglong).
    static constexpr int FlatIndexRole = Qt::UserRole + 1;

    explicit MismatchListModel(QObject* parent = nullptr);

    /// Lists the mismatches of `analysis` (an output's); null clears the list.
    void setSource(std::shared_ptr<const CaseData> data, std::shared_ptr<const TensorAnalysis> analysis);
    std::int64_t flatIndex(int row) const { return m_rows.at(static_cast<size_t>(row)); }
    /// The row of a flat index, fetching as far as needed; -1 when it is no mismatch.
    int rowOf(std::int64_t flat);

    int rowCount(const QModelIndex& parent = {}) const override;
    int columnCount(const QModelIndex& parent = {}) const override;
    QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
    QVariant headerData(int section, Qt::Orientation orientation, int role = Qt::DisplayRole) const override;
    bool canFetchMore(const QModelIndex& parent) const override;
    void fetchMore(const QModelIndex& parent) override;

private:
    std::shared_ptr<const CaseData> m_data;
    std::shared_ptr<const TensorAnalysis> m_analysis;
    std::vector<std::int64_t> m_rows;
    std::int64_t m_scanned = 0;  ///< codes before this flat index have been scanned
    /// Set while this model's own change notifications run: a fetchMore() from a slot then would
    /// nest a second change inside the first, so it is left for the view's next request.
    bool m_notifying = false;
};

} // namespace kf::ui
