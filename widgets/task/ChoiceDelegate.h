#pragma once
// Edits a table cell with a combo box when its model offers choices (JsonTableModel::ChoicesRole:
// dtypes, ops), and with a line edit otherwise. The combo stays editable so a value the list
// does not know can still be typed and then named by the validator.

#include <QStyledItemDelegate>

namespace kf::ui {

class ChoiceDelegate : public QStyledItemDelegate {
    Q_OBJECT
public:
    using QStyledItemDelegate::QStyledItemDelegate;

    QWidget* createEditor(QWidget* parent, const QStyleOptionViewItem& option, const QModelIndex& index) const override;
    void setEditorData(QWidget* editor, const QModelIndex& index) const override;
    void setModelData(QWidget* editor, QAbstractItemModel* model, const QModelIndex& index) const override;
};

} // namespace kf::ui
