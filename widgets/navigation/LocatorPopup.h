#pragma once
// The locator's view (Ctrl+K), as in Qt Creator: a line edit with the best matches under it,
// floating over the editor area. Up/Down/PageUp/PageDown move, Enter or a click opens, Escape
// or leaving it closes. "k " lists kernels only, "f " files only (widgets/navigation/Locator.h).

#include "widgets/navigation/Locator.h"

#include <QFrame>
#include <QPointer>

#include <vector>

class QLabel;
class QLineEdit;
class QTreeWidget;

namespace kf::ui {

/// GUI thread only. A child of the window it floats in; `host` is the widget it covers the top
/// of (the editor tabs), which must outlive it or be its sibling.
class LocatorPopup : public QFrame {
    Q_OBJECT
public:
    LocatorPopup(QWidget* host, QWidget* parent);

    /// Replaces what can be found (files, kernels) and filters again; the popup stays as it is.
    void setItems(std::vector<LocatorItem> items);
    const std::vector<LocatorItem>& items() const { return m_items; }
    /// Collects the items of `files` in a worker (collectLocatorItems: reads the CUDA sources
    /// for their kernels, `buffers` before the disk) and shows them when done, with a count in
    /// the status line; a newer scan drops an older one's result.
    void scan(const QStringList& files, const QString& root, const QHash<QString, QString>& buffers);
    bool isScanning() const { return m_scanning; }
    /// A line under the list ("Scanning kernels…", "42 files, 17 kernels"); empty hides it.
    void setStatus(const QString& text);

    /// Shows the popup over the host with `text` typed (empty: keeps the last query, selected),
    /// with the keyboard focus in its line edit.
    void popup(const QString& text = {});

    QLineEdit* lineEdit() const { return m_edit; }
    QTreeWidget* resultList() const { return m_list; }
    /// The items listed now, in the list's order.
    const std::vector<LocatorItem>& shown() const { return m_shown; }

signals:
    /// A scan() delivered its items.
    void scanFinished();
    /// The user chose an item (Enter or a click); the popup has closed.
    void activated(const kf::ui::LocatorItem& item);

protected:
    bool eventFilter(QObject* watched, QEvent* event) override;

private:
    void refilter();
    void activateRow(int row);
    void place();

    QWidget* m_host = nullptr;
    QLineEdit* m_edit = nullptr;
    QTreeWidget* m_list = nullptr;
    QLabel* m_status = nullptr;
    QPointer<QWidget> m_returnFocus;
    quint64 m_scanGeneration = 0;
    bool m_scanning = false;
    std::vector<LocatorItem> m_items;
    std::vector<LocatorItem> m_shown;
};

} // namespace kf::ui
