#pragma once
// The "Form" tab of the task editor: one section per part of task.json (General, Symbols,
// Inputs, Outputs, Test shapes, Benchmark shapes, Reference, Candidates, Launch plan, Compile)
// with tables where rows repeat. Every field writes into the TaskDocument at its JSON pointer.
// showError() puts the validator's sentence in the section that owns the pointer (or its
// nearest ancestor the form shows) and highlights the cell or field.
//
// GUI thread only. The document must outlive the form.

#include "widgets/task/CellKind.h"
#include "widgets/task/TaskDocument.h"

#include <QWidget>

#include <initializer_list>
#include <string>
#include <vector>

class QScrollArea;

namespace kf::ui {

class FieldBinder;
class FormSection;
class JsonTable;

class TaskForm : public QWidget {
    Q_OBJECT
public:
    explicit TaskForm(TaskDocument* doc, QWidget* parent = nullptr);

    /// Shows `message` beside the field at `pointer`; clears any earlier error first.
    void showError(const std::string& pointer, const QString& message);
    void clearError();
    /// Scrolls the section with the current error into view.
    void revealError();

    /// The section that owns `pointer` (the nearest ancestor the form shows).
    FormSection* sectionFor(const std::string& pointer) const;
    /// The table whose rows `pointer` falls in, or nullptr.
    JsonTable* tableFor(const std::string& pointer) const;

private:
    struct Anchor {
        std::string prefix;
        FormSection* section;
        JsonTable* table;
    };
    void buildGeneral();
    void buildSymbols();
    void buildTensors();
    void buildShapes();
    void buildReference();
    void buildCandidates();
    void buildCompile();
    FormSection* addSection(const QString& title, const QString& objectName);
    /// One labelled field of a section's form, bound to the value at `pointer`.
    struct Field {
        QString label;
        QWidget* widget;
        std::string pointer;
        CellKind kind;
    };
    /// Lays `fields` out as a form at the end of `section` and binds each to its value.
    void addFields(FormSection* section, std::initializer_list<Field> fields);
    void refresh();
    void updateShapeColumns();
    void updateReferenceRows();
    void selectCandidate(int row);
    const Anchor* anchorFor(const std::string& pointer) const;

    TaskDocument* m_doc;
    FieldBinder* m_fields;
    QScrollArea* m_scroll;
    QWidget* m_content;
    std::vector<Anchor> m_anchors;
    FormSection* m_errorSection = nullptr;
    FormSection* m_launchSection = nullptr;
    JsonTable* m_testShapes = nullptr;
    JsonTable* m_benchShapes = nullptr;
    JsonTable* m_reference = nullptr;
    JsonTable* m_candidates = nullptr;
    JsonTable* m_launches = nullptr;
    int m_candidateRow = 0;
};

} // namespace kf::ui
