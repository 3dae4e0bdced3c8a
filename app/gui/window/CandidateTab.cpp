#include "app/gui/window/CandidateTab.h"

#include "engine/compile/CompileTypes.h"
#include "engine/core/Files.h"
#include "widgets/diagnostics/SanitizerDiagnostics.h"
#include "widgets/editor/EncodingBanner.h"
#include "widgets/editor/KernelEditor.h"

#include <QFileInfo>
#include <QStringDecoder>
#include <QVBoxLayout>

#include <optional>
#include <string_view>
#include <utility>

namespace kf::app {

namespace {
constexpr int kSnapshotMs = 2000; // at most two seconds of typing lost to a crash

std::string_view view(const QByteArray& b) { return {b.constData(), static_cast<std::size_t>(b.size())}; }

/// The text of a file that is not UTF-8, decoded without loss: UTF-16/32 by their byte-order
/// mark, other bytes as Latin-1 (every byte is a Latin-1 character). Nullopt when there is no
/// such decoding: a NUL byte, UTF-16 with a broken surrogate pair.
std::optional<QString> losslessText(const QByteArray& bytes, const kf::EncodingCheck& check)
{
    std::optional<QStringConverter::Encoding> encoding;
    switch (check.encoding) {
    case kf::SourceEncoding::Utf16Le: encoding = QStringConverter::Utf16LE; break;
    case kf::SourceEncoding::Utf16Be: encoding = QStringConverter::Utf16BE; break;
    case kf::SourceEncoding::Utf32Le: encoding = QStringConverter::Utf32LE; break;
    case kf::SourceEncoding::Utf32Be: encoding = QStringConverter::Utf32BE; break;
    case kf::SourceEncoding::InvalidUtf8: break;
    default: return std::nullopt;
    }
    QString text;
    if (encoding) {
        QStringDecoder decode(*encoding);   // drops the byte-order mark
        text = decode(bytes.mid(static_cast<qsizetype>(check.bomSize())));
        if (decode.hasError())
            return std::nullopt;
    } else {
        text = QString::fromLatin1(bytes);
    }
    if (text.contains(QChar(0)))
        return std::nullopt;   // the editor cannot hold a NUL
    return text;
}

} // namespace

CandidateTab::CandidateTab(const QString& filePath, const QByteArray& bytes, int debounceMs, QWidget* parent)
    : QWidget(parent)
    , m_filePath(filePath)
    , m_editor(new kf::ui::KernelEditor(this))
    , m_banner(new kf::ui::EncodingBanner(this))
    , m_bytes(bytes)
    , m_encoding(kf::checkSourceEncoding(view(bytes)))
{
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->setSpacing(0);
    layout->addWidget(m_banner);
    layout->addWidget(m_editor);
    m_editor->setFilePath(filePath);
    QString text;
    if (m_encoding.isUtf8()) {
        text = QString::fromUtf8(bytes.mid(static_cast<qsizetype>(m_encoding.bomSize())));
    } else {
        if (auto decoded = losslessText(bytes, m_encoding)) {
            m_converted = *decoded;
            m_canConvert = true;
        }
        // Read-only until converted: UTF-16/32 shows its text, other bytes what a UTF-8 reader
        // makes of them (U+FFFD), so the banner's line and column can be found.
        const bool bomText = m_canConvert && m_encoding.encoding != kf::SourceEncoding::InvalidUtf8;
        text = bomText ? m_converted : QString::fromUtf8(bytes);
        text.replace(QChar(0), QChar(0x2400));   // QScintilla would end the text at a NUL
    }
    m_editor->setText(text);
    m_editor->setModified(false);
    m_editor->SendScintilla(QsciScintillaBase::SCI_EMPTYUNDOBUFFER);
    if (!m_encoding.isUtf8())
        lock();

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
    connect(m_banner, &kf::ui::EncodingBanner::actionRequested, this, [this] { convertToUtf8(); });
}

void CandidateTab::lock()
{
    m_locked = true;
    m_editor->setReadOnly(true);
    QString action;
    if (m_canConvert)
        action = m_encoding.encoding == kf::SourceEncoding::InvalidUtf8 ? tr("Open as Latin-1") : tr("Convert to UTF-8");
    m_banner->showProblem(tr("%1: it is open read-only, so that no save can damage it.%2")
                              .arg(encodingProblem(),
                                   m_canConvert ? tr(" %1 puts its text in the editor; saving then writes it as UTF-8.").arg(action)
                                                : tr(" A kernel source must be UTF-8 text.")),
                          action);
}

QString CandidateTab::fileName() const { return QFileInfo(m_filePath).fileName(); }
QString CandidateTab::taskDir() const { return QFileInfo(m_filePath).absolutePath(); }
QString CandidateTab::text() const { return m_editor->text(); }
bool CandidateTab::isModified() const { return m_editor->isModified() || m_unsavedConversion; }
QString CandidateTab::title() const { return fileName() + (isModified() ? "*" : ""); }

QString CandidateTab::encodingProblem() const
{
    const std::string problem = kf::encodingProblem(m_encoding);
    return problem.empty() ? QString() : fileName() + QLatin1Char(' ') + QString::fromStdString(problem);
}

bool CandidateTab::convertToUtf8()
{
    if (!m_locked || !m_canConvert)
        return false;
    m_locked = false;
    m_unsavedConversion = true;
    m_banner->hide();
    m_editor->setReadOnly(false);
    if (m_editor->text() != m_converted)
        m_editor->setText(m_converted);   // Latin-1: the bytes read again, without U+FFFD
    // Undo must not bring back the unconverted text, which a save would then write.
    m_editor->SendScintilla(QsciScintillaBase::SCI_EMPTYUNDOBUFFER);
    emit titleChanged(this);
    compileNow();   // the build read the file's bytes until now
    return true;
}

void CandidateTab::restoreBuffer(const QString& text)
{
    if (m_locked) {
        m_locked = false;
        m_unsavedConversion = true;
        m_banner->hide();
        m_editor->setReadOnly(false);
    }
    m_editor->setText(text); // an undoable edit on top of the file: modified, not saved
}

std::string CandidateTab::compileSource() const
{
    return m_locked ? m_bytes.toStdString() : text().toStdString();
}

bool CandidateTab::save(QString* error)
{
    auto refuse = [error](const QString& why) {
        if (error)
            *error = why;
        return false;
    };
    if (m_locked)
        return refuse(tr("%1: not saved, so as not to replace the file with what the editor could read of it. Convert it "
                         "with the bar above the editor first.")
                          .arg(encodingProblem()));
    // Another program may have saved the file in another encoding since it was opened: writing
    // the buffer would replace text this tab never read.
    if (auto disk = kf::readFileBytes(m_filePath.toStdString())) {
        const QByteArray now = QByteArray::fromStdString(*disk);
        const kf::EncodingCheck check = kf::checkSourceEncoding(view(now));
        if (!check.isUtf8() && now != m_bytes)
            return refuse(tr("%1 %2 on disk now (another program saved it after it was opened): not saved, so as not to "
                             "replace it. Close the tab and open the file again.")
                              .arg(fileName(), QString::fromStdString(kf::encodingProblem(check))));
    }
    QByteArray bytes = text().toUtf8();
    if (m_encoding.encoding == kf::SourceEncoding::Utf8Bom)
        bytes.prepend("\xEF\xBB\xBF");   // the mark the file had
    auto written = kf::writeFileAtomic(m_filePath.toStdString(), view(bytes));
    if (!written)
        return refuse(QString::fromStdString(written.error().message()));
    m_bytes = bytes;
    m_encoding = kf::checkSourceEncoding(view(m_bytes));
    const bool converted = std::exchange(m_unsavedConversion, false);
    m_editor->setModified(false);
    if (converted)
        emit titleChanged(this);
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
