#pragma once
// One open kernel file: its editor, the debounce that turns keystrokes into compile requests,
// and the snapshot timer that feeds crash recovery. The main window owns the services; a tab
// only says when it is due for a compile or a snapshot.
//
// A file that is not UTF-8 (engine/compile/SourceEncoding.h) opens read-only under a banner that
// says what it is; it becomes editable only when the user converts it with the banner's button,
// and save() never writes over a file whose bytes this tab could not read back losslessly.
#include <QByteArray>
#include <QString>
#include <QTimer>
#include <QWidget>

#include "engine/compile/Diagnostic.h"
#include "engine/compile/SourceEncoding.h"

#include <memory>
#include <string>
#include <vector>

namespace kf {
struct CompileResult;
}
namespace kf::ui {
class EncodingBanner;
class KernelEditor;
}

namespace kf::app {

/// GUI thread only; owned by the main window's tab widget.
class CandidateTab : public QWidget {
    Q_OBJECT
public:
    /// `bytes` are the file as read. UTF-8 opens for editing (a byte-order mark is kept for the
    /// save); anything else opens read-only with the banner.
    CandidateTab(const QString& filePath, const QByteArray& bytes, int debounceMs, QWidget* parent = nullptr);

    kf::ui::KernelEditor* editor() const { return m_editor; }
    QString filePath() const { return m_filePath; }
    QString fileName() const;
    /// The task folder (the file's folder).
    QString taskDir() const;
    QString text() const;
    bool isModified() const;
    /// "optimized.cu" or "optimized.cu*".
    QString title() const;
    /// Writes the buffer atomically as UTF-8 (after the byte-order mark the file had); on failure
    /// returns false with a sentence in `error`. Refused while the file is locked (not UTF-8, not
    /// converted), and when the file on disk is no longer UTF-8 nor the bytes this tab converted.
    bool save(QString* error);
    /// Replaces the buffer (e.g. the file changed on disk) without marking it modified.
    void reloadText(const QString& text);

    /// The file is not UTF-8 and the user has not converted it: the editor is read-only, the
    /// banner says why and save() refuses.
    bool isEncodingLocked() const { return m_locked; }
    /// What the file was found to be when it was opened.
    const kf::EncodingCheck& encoding() const { return m_encoding; }
    /// "naive.cu is saved as UTF-16 LE, not UTF-8" (the engine's words); empty for UTF-8.
    QString encodingProblem() const;
    /// True when the banner offers a lossless conversion (UTF-16/32 with a byte-order mark that
    /// decode cleanly; other bytes read as Latin-1). A NUL byte has none.
    bool canConvert() const { return m_canConvert; }
    /// The banner's button: puts the losslessly decoded text in the editor and unlocks it. The
    /// tab then counts as modified until save() writes it as UTF-8. False when locked is false
    /// or there is no lossless conversion.
    bool convertToUtf8();
    /// A buffer from crash recovery, as an unsaved edit. It was typed after a conversion, so a
    /// locked tab takes it as converted; the file is not touched.
    void restoreBuffer(const QString& text);
    /// What a build of this tab compiles: the file's bytes while it is locked (so the build says
    /// what NVRTC would make of them), else the editor's text.
    std::string compileSource() const;
    kf::ui::EncodingBanner* encodingBanner() const { return m_banner; }

    /// The last build delivered for this tab (of its text at `resultRevision()`), or null.
    std::shared_ptr<const kf::CompileResult> lastResult() const { return m_lastResult; }
    /// `revision`: the textRevision() the build was requested for.
    void setLastResult(std::shared_ptr<const kf::CompileResult> r, quint64 revision)
    {
        m_lastResult = std::move(r);
        m_resultRevision = revision;
    }
    /// Counts the buffer's edits: a build is of the text now when its revision equals this.
    quint64 textRevision() const { return m_textRevision; }
    /// The last build is of the text in the editor now (no edit since it was requested).
    bool resultIsCurrent() const { return m_lastResult && m_resultRevision == m_textRevision; }
    /// Asks for a compile now instead of after the debounce.
    void compileNow();

    /// Diagnostics of this candidate's last verification (compute-sanitizer's findings), made for
    /// `verifiedText`, the source the runner verified. They replace the previous verification's
    /// and are shown beside the compiler's; runDiagnostics() keeps those still valid for the text.
    void setRunDiagnostics(std::vector<kf::Diagnostic> diagnostics, const QString& verifiedText);
    /// The last verification's diagnostics that still hold for the editor's text now, at their
    /// lines there (kf::ui::followEdits).
    std::vector<kf::Diagnostic> runDiagnostics() const;
    bool hasRunDiagnostics() const { return !m_runDiagnostics.empty(); }

signals:
    /// The user stopped typing for the debounce interval (or compileNow()).
    void compileDue(kf::app::CandidateTab* tab);
    /// The buffer changed since the last snapshot and the snapshot interval passed.
    void snapshotDue(kf::app::CandidateTab* tab);
    void titleChanged(kf::app::CandidateTab* tab);

private:
    void lock();

    QString m_filePath;
    kf::ui::KernelEditor* m_editor = nullptr;
    kf::ui::EncodingBanner* m_banner = nullptr;
    QByteArray m_bytes;              ///< the file as opened (or as last saved)
    kf::EncodingCheck m_encoding;    ///< of m_bytes
    QString m_converted;             ///< the lossless decoding the banner offers (when m_canConvert)
    bool m_canConvert = false;
    bool m_locked = false;
    bool m_unsavedConversion = false; ///< converted, not saved yet: modified even with no edit
    QTimer m_debounce;
    QTimer m_snapshot;
    std::shared_ptr<const kf::CompileResult> m_lastResult;
    quint64 m_resultRevision = 0;
    quint64 m_textRevision = 1;
    std::vector<kf::Diagnostic> m_runDiagnostics;
    QString m_verifiedText;
};

} // namespace kf::app
