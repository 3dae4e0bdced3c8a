#include "widgets/task/TaskEditor.h"

#include "engine/task/Task.h"
#include "widgets/task/FormSection.h"
#include "widgets/task/JsonTextPane.h"
#include "widgets/task/TaskDocument.h"
#include "widgets/task/TaskForm.h"

#include <QKeySequence>
#include <QLabel>
#include <QShortcut>
#include <QTabWidget>
#include <QVBoxLayout>

namespace kf::ui {

TaskEditor::TaskEditor(QWidget* parent)
    : QWidget(parent), m_doc(new TaskDocument(this)), m_banner(new QLabel(this)), m_tabs(new QTabWidget(this)),
      m_form(new TaskForm(m_doc, this)), m_json(new JsonTextPane(this))
{
    m_banner->setObjectName(QStringLiteral("validationBanner"));
    m_banner->setWordWrap(true);
    m_banner->setTextFormat(Qt::RichText);
    m_banner->setMargin(6);
    connect(m_banner, &QLabel::linkActivated, this, [this] {
        m_tabs->setCurrentWidget(m_form);
        m_form->revealError();
    });

    m_tabs->addTab(m_form, tr("Form"));
    m_tabs->addTab(m_json, tr("JSON"));

    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->addWidget(m_banner);
    layout->addWidget(m_tabs);

    connect(m_doc, &TaskDocument::changed, this,
            [this](TaskDocument::Source source) { onDocumentChanged(static_cast<int>(source)); });
    connect(m_json, &JsonTextPane::textParsed, this,
            [this](const nlohmann::json& doc) { m_doc->reset(doc, TaskDocument::Source::Text); });
    connect(m_json, &JsonTextPane::syntaxErrorChanged, this, &TaskEditor::onSyntaxError);

    auto* save = new QShortcut(QKeySequence::Save, this);
    save->setContext(Qt::WidgetWithChildrenShortcut);
    connect(save, &QShortcut::activated, this, [this] {
        flushPendingEdits();
        emit saveRequested();
    });

    validate();
}

void TaskEditor::setDocument(const nlohmann::json& doc, const QString& filePath, const QString& taskDir)
{
    m_filePath = filePath;
    m_taskDir = taskDir;
    m_loading = true;
    m_doc->reset(doc, TaskDocument::Source::Load);
    m_loading = false;
    // reset() is silent for an equal document, but the text and the verdict may be stale.
    m_json->showDocument(m_doc->json());
    m_form->setEnabled(true);
    validate();
    setModified(false);
}

void TaskEditor::setText(const QString& text, const QString& filePath, const QString& taskDir)
{
    m_filePath = filePath;
    m_taskDir = taskDir;
    m_loading = true;
    // Text that does not parse leaves an empty task behind it: the form shows nothing to edit
    // (it is read-only until the text parses) and the text keeps what the file has.
    m_doc->reset(nlohmann::json::object(), TaskDocument::Source::Text);
    m_json->showText(text);   // a document that parses arrives through textParsed(), as typing does
    m_loading = false;
    m_form->setEnabled(m_json->syntaxError().isEmpty());
    validate();
    setModified(false);
}

void TaskEditor::goToText(int line, int column)
{
    m_tabs->setCurrentWidget(m_json);
    m_json->goTo(line, column);
}

nlohmann::json TaskEditor::document() const
{
    return m_doc->json();
}

void TaskEditor::flushPendingEdits()
{
    m_json->flush();
}

void TaskEditor::setModified(bool modified)
{
    if (m_modified == modified)
        return;
    m_modified = modified;
    emit modifiedChanged(modified);
}

QString TaskEditor::messageForPointer(const QString& pointer) const
{
    FormSection* section = m_form->sectionFor(pointer.toStdString());
    return section ? section->message() : QString();
}

QLabel* TaskEditor::messageLabelFor(const QString& pointer) const
{
    FormSection* section = m_form->sectionFor(pointer.toStdString());
    return section ? section->messageLabel() : nullptr;
}

void TaskEditor::onDocumentChanged(int source)
{
    if (static_cast<TaskDocument::Source>(source) != TaskDocument::Source::Text)
        m_json->showDocument(m_doc->json());
    validate();
    if (m_loading)
        return;
    setModified(true);
    emit documentChanged();
}

void TaskEditor::onSyntaxError(const QString& message)
{
    // While the text does not parse the form shows the last good document; editing it would
    // overwrite what the user is typing, so it is read-only until the text parses again.
    m_form->setEnabled(message.isEmpty());
    if (!message.isEmpty())
        setValidity(false, message, tr("The form shows the last valid JSON until the text parses again."), {});
    else
        validate();
}

void TaskEditor::validate()
{
    if (!m_json->syntaxError().isEmpty())
        return;
    Result<Task> r = parseTask(m_doc->json(), m_filePath.toStdString(), m_taskDir.toStdString());
    if (r) {
        m_form->clearError();
        setValidity(true, {}, {}, {});
        return;
    }
    const Error& e = r.error();
    const QString why = QString::fromStdString(e.why);
    m_form->showError(e.pointer, why);
    setValidity(false, why, QString::fromStdString(e.hint), QString::fromStdString(e.pointer));
}

void TaskEditor::setValidity(bool valid, const QString& message, const QString& hint, const QString& pointer)
{
    m_message = message;
    m_errorPointer = pointer;
    if (valid) {
        m_banner->setText(tr("Valid task"));
        m_banner->setStyleSheet(QStringLiteral("color: #1b5e20; background: #e8f5e9;"));
    } else {
        QString html = QStringLiteral("<b>%1</b>").arg(message.toHtmlEscaped());
        if (!pointer.isEmpty())
            html = QStringLiteral("<a href=\"#field\">%1</a>: ").arg(pointer.toHtmlEscaped()) + html;
        if (!hint.isEmpty())
            html += QStringLiteral("<br><small>%1</small>").arg(hint.toHtmlEscaped());
        m_banner->setText(html);
        m_banner->setStyleSheet(QStringLiteral("color: #b00020; background: #fdecea;"));
    }
    if (valid != m_valid) {
        m_valid = valid;
        emit validityChanged(valid);
    }
}

} // namespace kf::ui
