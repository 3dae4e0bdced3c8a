#pragma once
// A JsonTableModel in a compact table with "Add" and "Remove" buttons. The table grows with
// its rows up to a limit, then scrolls, so short lists do not waste the form's height.
//
// GUI thread only. The model is owned by this widget.

#include <QWidget>

class QTableView;

namespace kf::ui {

class JsonTableModel;
class TaskDocument;

class JsonTable : public QWidget {
    Q_OBJECT
public:
    JsonTable(TaskDocument* doc, const QString& objectName, QWidget* parent = nullptr);

    JsonTableModel* model() const { return m_model; }
    QTableView* view() const { return m_view; }

    /// Highlights and scrolls to the cell the validator named (column -1: the row).
    void showError(int row, int column, const QString& message);
    void clearError();

    QSize sizeHint() const override;
    QSize minimumSizeHint() const override;

private:
    void updateHeight();

    JsonTableModel* m_model;
    QTableView* m_view;
};

} // namespace kf::ui
