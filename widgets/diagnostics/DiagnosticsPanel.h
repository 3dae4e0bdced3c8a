#pragma once
// The "Problems" panel: a one-line summary, severity filters and a sortable table of diagnostics.

#include "engine/compile/Diagnostic.h"

#include <QString>
#include <QWidget>

#include <vector>

class QLabel;
class QSortFilterProxyModel;
class QTableView;
class QToolButton;

namespace kf::ui {

class DiagnosticsModel;

/// GUI thread only; owned by its Qt parent. Rows are sorted by line at first; clicking a
/// header sorts by that column (numerically for Line/Column, by rank for Severity).
class DiagnosticsPanel : public QWidget {
    Q_OBJECT

public:
    explicit DiagnosticsPanel(QWidget* parent = nullptr);

    void setDiagnostics(const std::vector<kf::Diagnostic>& diagnostics);
    /// Files are shown relative to `dir` (the workspace); DiagnosticsModel::setBaseDirectory.
    void setBaseDirectory(const QString& dir);

    DiagnosticsModel* model() const { return m_model; }
    QSortFilterProxyModel* proxy() const { return m_proxy; }
    QTableView* view() const { return m_view; }
    /// "2 errors, 1 warning" or "No problems".
    QString summary() const;

    /// Shows or hides each severity group (errors; warnings; remarks and notes).
    void setSeverityVisible(kf::Diagnostic::Severity severity, bool visible);

signals:
    /// A row was clicked or Enter was pressed on it. `line`/`column` are 1-based, 0 if unknown.
    void diagnosticActivated(const QString& file, int line, int column);

protected:
    bool eventFilter(QObject* watched, QEvent* event) override;

private:
    void activate(const QModelIndex& proxyIndex);
    void updateSummary();
    void updateFilter();
    /// The File and Source columns' widths: their contents, within what leaves the message 40 %.
    void fitFileColumn();

    DiagnosticsModel* m_model = nullptr;
    QSortFilterProxyModel* m_proxy = nullptr;
    QTableView* m_view = nullptr;
    QLabel* m_summary = nullptr;
    QToolButton* m_errors = nullptr;
    QToolButton* m_warnings = nullptr;
    QToolButton* m_infos = nullptr;
};

} // namespace kf::ui
