#pragma once
// Ties single-value form fields (line edits, text boxes, check boxes, combo boxes) to JSON
// pointers in the task document: user edits are written at the pointer as the user types,
// and document changes are shown in the fields, except in the one the user is typing in.
//
// GUI thread only. Fields and the document must outlive the binder (parent them together).

#include "widgets/task/CellKind.h"
#include "widgets/task/TaskDocument.h"

#include <QObject>

#include <string>
#include <vector>

class QWidget;

namespace kf::ui {

class FieldBinder : public QObject {
    Q_OBJECT
public:
    FieldBinder(TaskDocument* doc, QObject* parent = nullptr);

    /// Binds a QLineEdit, QPlainTextEdit, QCheckBox or editable QComboBox to `pointer`.
    void bind(QWidget* field, std::string pointer, CellKind kind);

    /// Marks the field whose pointer is `pointer` or one of its ancestors; returns it, or nullptr.
    QWidget* highlight(const std::string& pointer, const QString& message);
    void clearHighlight();

private:
    struct Binding {
        QWidget* field;
        std::string pointer;
        CellKind kind;
    };
    void refresh(TaskDocument::Source source);
    void write(const Binding& b, const QString& text);
    static QString fieldText(QWidget* field);
    static void setFieldText(QWidget* field, const QString& text);

    TaskDocument* m_doc;
    std::vector<Binding> m_bindings;
    QWidget* m_highlighted = nullptr;
    bool m_refreshing = false;
};

} // namespace kf::ui
