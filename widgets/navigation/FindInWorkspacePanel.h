#pragma once
// The Search Results panel (Ctrl+Shift+F): a query with Case sensitive, Whole words and Regular
// expression toggles, a search that runs off the GUI thread with Cancel and a summary line, and
// the matches as file -> line rows with the match in bold. Activating a row asks to open it.

#include "widgets/navigation/FindInFiles.h"

#include <QFutureWatcher>
#include <QHash>
#include <QWidget>

#include <atomic>
#include <functional>
#include <memory>

class QCheckBox;
class QLabel;
class QLineEdit;
class QPushButton;
class QTreeWidget;
class QTreeWidgetItem;

namespace kf::ui {

/// GUI thread only. The search itself (workspaceSearchFiles + findInFiles) runs in a
/// QtConcurrent worker; a newer search or cancel() drops the older one's result (generation).
class FindInWorkspacePanel : public QWidget {
    Q_OBJECT
public:
    /// What a search reads: the workspace root and the open editors' texts (path -> text).
    struct Scope {
        QString root;
        QHash<QString, QString> buffers;
    };
    /// Item data roles of a match row, for tests and the delegate.
    enum Role { PathRole = Qt::UserRole + 1, LineRole, ByteColumnRole, ColumnRole, LengthRole };

    explicit FindInWorkspacePanel(QWidget* parent = nullptr);
    ~FindInWorkspacePanel() override;

    /// Called on the GUI thread when a search starts, to take the scope at that moment.
    void setScopeProvider(std::function<Scope()> provider) { m_scope = std::move(provider); }

    /// Puts `text` in the query field (when not empty), selects it and focuses it.
    void focusQuery(const QString& text = {});
    FindOptions options() const;
    /// Starts a search with options() (a running one is cancelled first). A bad pattern shows
    /// its sentence in the summary line and searches nothing.
    void search();
    void cancel();
    bool isSearching() const { return m_running; }
    /// The last finished search.
    const FindResult& result() const { return m_result; }

    QLineEdit* queryEdit() const { return m_query; }
    QCheckBox* caseSensitiveBox() const { return m_case; }
    QCheckBox* wholeWordsBox() const { return m_words; }
    QCheckBox* regexBox() const { return m_regex; }
    QTreeWidget* resultTree() const { return m_tree; }
    QLabel* summaryLabel() const { return m_summary; }

signals:
    /// A match row was activated: open `path` at (line, byteColumn), both 1-based.
    void openRequested(const QString& path, int line, int byteColumn);
    /// A search ended (finished, cancelled or refused); result() holds it.
    void searchFinished();

private:
    void onFinished();
    void showResult(const FindResult& r);
    void activate(QTreeWidgetItem* item);

    QLineEdit* m_query = nullptr;
    QCheckBox* m_case = nullptr;
    QCheckBox* m_words = nullptr;
    QCheckBox* m_regex = nullptr;
    QPushButton* m_searchButton = nullptr;
    QPushButton* m_cancelButton = nullptr;
    QTreeWidget* m_tree = nullptr;
    QLabel* m_summary = nullptr;
    std::function<Scope()> m_scope;
    QString m_root;
    FindResult m_result;
    quint64 m_generation = 0;
    bool m_running = false;
    std::shared_ptr<std::atomic_bool> m_cancel;
    QFutureWatcher<FindResult>* m_watcher = nullptr;
};

} // namespace kf::ui
