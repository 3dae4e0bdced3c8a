#include "widgets/task/FieldBinder.h"

#include <QCheckBox>
#include <QComboBox>
#include <QLineEdit>
#include <QPlainTextEdit>

namespace kf::ui {

FieldBinder::FieldBinder(TaskDocument* doc, QObject* parent) : QObject(parent), m_doc(doc)
{
    connect(m_doc, &TaskDocument::changed, this, &FieldBinder::refresh);
}

void FieldBinder::bind(QWidget* field, std::string pointer, CellKind kind)
{
    m_bindings.push_back({field, std::move(pointer), kind});
    const Binding b = m_bindings.back();
    if (auto* line = qobject_cast<QLineEdit*>(field)) {
        connect(line, &QLineEdit::textEdited, this, [this, b](const QString& t) { write(b, t); });
    } else if (auto* text = qobject_cast<QPlainTextEdit*>(field)) {
        connect(text, &QPlainTextEdit::textChanged, this, [this, b, text] {
            if (!m_refreshing)
                write(b, text->toPlainText());
        });
    } else if (auto* check = qobject_cast<QCheckBox*>(field)) {
        connect(check, &QCheckBox::clicked, this,
                [this, b](bool on) { write(b, on ? QStringLiteral("true") : QStringLiteral("false")); });
    } else if (auto* combo = qobject_cast<QComboBox*>(field)) {
        connect(combo, &QComboBox::currentTextChanged, this, [this, b](const QString& t) {
            if (!m_refreshing)
                write(b, t);
        });
    }
    m_refreshing = true;
    setFieldText(field, cellText(m_doc->find(b.pointer), kind));
    m_refreshing = false;
}

void FieldBinder::write(const Binding& b, const QString& text)
{
    if (auto v = cellValue(text, b.kind))
        m_doc->setValue(b.pointer, std::move(*v), TaskDocument::Source::Form);
    else
        m_doc->erase(b.pointer, TaskDocument::Source::Form);
}

void FieldBinder::refresh(TaskDocument::Source source)
{
    m_refreshing = true;
    for (const Binding& b : m_bindings) {
        // Rewriting the field being typed in would move the cursor ("sm_90," shows as "sm_90, ").
        if (source == TaskDocument::Source::Form && b.field->hasFocus())
            continue;
        const QString text = cellText(m_doc->find(b.pointer), b.kind);
        if (fieldText(b.field) != text)
            setFieldText(b.field, text);
    }
    m_refreshing = false;
}

QString FieldBinder::fieldText(QWidget* field)
{
    if (auto* line = qobject_cast<QLineEdit*>(field))
        return line->text();
    if (auto* text = qobject_cast<QPlainTextEdit*>(field))
        return text->toPlainText();
    if (auto* check = qobject_cast<QCheckBox*>(field))
        return check->isChecked() ? QStringLiteral("true") : QStringLiteral("false");
    if (auto* combo = qobject_cast<QComboBox*>(field))
        return combo->currentText();
    return {};
}

void FieldBinder::setFieldText(QWidget* field, const QString& text)
{
    if (auto* line = qobject_cast<QLineEdit*>(field))
        line->setText(text);
    else if (auto* edit = qobject_cast<QPlainTextEdit*>(field))
        edit->setPlainText(text);
    else if (auto* check = qobject_cast<QCheckBox*>(field))
        check->setChecked(text == u"true");
    else if (auto* combo = qobject_cast<QComboBox*>(field))
        combo->setCurrentText(text);
}

QWidget* FieldBinder::highlight(const std::string& pointer, const QString& message)
{
    clearHighlight();
    for (const Binding& b : m_bindings) {
        const bool inside = pointer.compare(0, b.pointer.size(), b.pointer) == 0 &&
                            (pointer.size() == b.pointer.size() || pointer[b.pointer.size()] == '/');
        if (inside) {
            m_highlighted = b.field;
            m_highlighted->setStyleSheet(QStringLiteral("border: 2px solid #b00020;"));
            m_highlighted->setToolTip(message);
            return m_highlighted;
        }
    }
    return nullptr;
}

void FieldBinder::clearHighlight()
{
    if (!m_highlighted)
        return;
    m_highlighted->setStyleSheet({});
    m_highlighted->setToolTip({});
    m_highlighted = nullptr;
}

} // namespace kf::ui
