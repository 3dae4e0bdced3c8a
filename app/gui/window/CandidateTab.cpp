#include "app/gui/window/CandidateTab.h"

#include "engine/compile/CompileTypes.h"
#include "engine/core/Files.h"
#include "widgets/diagnostics/SanitizerDiagnostics.h"
#include "widgets/editor/KernelEditor.h"

#include <QFileInfo>
#include <QVBoxLayout>

namespace kf::app {

namespace {
constexpr int kSnapshotMs = 2000; // at most two seconds of typing lost to a crash
}

CandidateTab::CandidateTab(const QString& filePath, const QString& text, int debounceMs, QWidget* parent)
    : QWidget(parent)
    , m_filePath(filePath)
    , m_editor(new kf::ui::KernelEditor(this))
{
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->addWidget(m_editor);
    m_editor->setFilePath(filePath);
    m_editor->setText(text);
    m_editor->setModified(false);
    m_editor->SendScintilla(QsciScintillaBase::SCI_EMPTYUNDOBUFFER);

    m_debounce.setSingleShot(true);
    m_debounce.setInterval(debounceMs);
    m_snapshot.setSingleShot(true);
    m_snapshot.setInterval(kSnapshotMs);
    connect(&m_debounce, &QTimer::timeout, this, [this] { emit compileDue(this); });
    connect(&m_snapshot, &QTimer::timeout, this, [this] { emit snapshotDue(this); });
    connect(m_editor, &QsciScintilla::textChanged, this, [this] {
        ++m_textRevision;
        m_debounce.start(); // restart: compile once the user pauses
        if (!m_snapshot.isActive())
            m_snapshot.start(); // do not restart: a long burst of typing still gets snapshots
    });
    connect(m_editor, &QsciScintilla::modificationChanged, this, [this] { emit titleChanged(this); });
}

QString CandidateTab::fileName() const { return QFileInfo(m_filePath).fileName(); }
QString CandidateTab::taskDir() const { return QFileInfo(m_filePath).absolutePath(); }
QString CandidateTab::text() const { return m_editor->text(); }
bool CandidateTab::isModified() const { return m_editor->isModified(); }
QString CandidateTab::title() const { return fileName() + (isModified() ? "*" : ""); }

bool CandidateTab::save(QString* error)
{
    const QByteArray bytes = text().toUtf8();
    auto written = kf::writeFileAtomic(m_filePath.toStdString(), std::string_view(bytes.constData(), bytes.size()));
    if (!written) {
        if (error)
            *error = QString::fromStdString(written.error().message());
        return false;
    }
    m_editor->setModified(false);
    return true;
}

void CandidateTab::reloadText(const QString& text)
{
    const int line = m_editor->SendScintilla(QsciScintillaBase::SCI_GETFIRSTVISIBLELINE);
    m_editor->setText(text);
    m_editor->setModified(false);
    m_editor->SendScintilla(QsciScintillaBase::SCI_SETFIRSTVISIBLELINE, line);
}

void CandidateTab::compileNow()
{
    m_debounce.stop();
    emit compileDue(this);
}

void CandidateTab::setRunDiagnostics(std::vector<kf::Diagnostic> diagnostics, const QString& verifiedText)
{
    m_runDiagnostics = std::move(diagnostics);
    m_verifiedText = verifiedText;
}

std::vector<kf::Diagnostic> CandidateTab::runDiagnostics() const
{
    if (m_runDiagnostics.empty())
        return {};
    return kf::ui::followEdits(m_runDiagnostics, m_filePath, m_verifiedText, text());
}

} // namespace kf::app
