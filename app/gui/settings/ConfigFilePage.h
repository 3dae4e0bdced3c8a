#pragma once
// What Settings ▸ Models and Settings ▸ Runners share: each edits one configuration file through
// the engine's reader and writer. A file that does not read is shown with the reader's sentence
// and never overwritten from the page; an edit marks the page modified and shows its first
// problem; save() writes only a modified page whose configuration the reader accepts.

#include "engine/core/Result.h"

#include <QString>
#include <QWidget>

class QLabel;

namespace kf::app {

/// GUI thread.
class ConfigFilePage : public QWidget {
    Q_OBJECT
public:
    QString file() const { return m_file; }
    QString loadError() const { return m_loadError; }
    bool isModified() const { return m_modified; }
    /// The first problem of the edited configuration as the engine's reader states it; empty when
    /// it can be saved, and when the file did not read (nothing is saved then).
    QString validationError() const;
    /// Writes the configuration when it changed since the file was read. False with the reason in
    /// `error` (an invalid configuration, a write that failed).
    bool save(QString* error);

signals:
    /// The table or a picker changed (the dialog validates again).
    void changed();

protected:
    ConfigFilePage(const QString& file, QWidget* parent);

    /// The first problem of the edited configuration; empty when there is none.
    virtual QString firstProblem() const = 0;
    /// Writes the edited configuration to file().
    virtual kf::Result<void> write() const = 0;

    /// The line under the page where its problem shows.
    QLabel* makeProblemLabel(const QString& objectName);
    /// Reading the file: edits made while it loads do not count.
    void beginLoad();
    /// The file did not read: the page says why and leaves the file as it is.
    void fileDoesNotRead(const kf::Error& why);
    /// The end of reading the file: unmodified, showing why the file did not read (if it did not).
    /// True when it read.
    bool endLoad();
    /// An edit by the user: the page is modified and shows its first problem.
    void edited();

    QString m_file;
    QString m_loadError;
    bool m_modified = false;
    bool m_loading = false;
    QLabel* m_problem = nullptr;
};

} // namespace kf::app
