#pragma once
// Help ▸ Keyboard Shortcuts: every menu action that has a shortcut, grouped by menu, with a
// filter box. Built by walking the menu bar at run time, so a new action shows up by itself.

#include <QDialog>
#include <QString>

#include <vector>

class QAction;
class QLineEdit;
class QMenuBar;
class QTreeWidget;

namespace kf::ui {

struct ShortcutEntry {
    QString menu;       ///< "Run", "File ▸ Recent Workspaces"
    QString action;     ///< the action's text without its mnemonic: "Verify"
    QString shortcut;   ///< every key sequence of the action, as the platform writes them, ", "-joined
    QAction* source = nullptr;
};

/// The actions of `bar`'s menus and their submenus that have at least one shortcut, in menu order.
std::vector<ShortcutEntry> menuShortcuts(const QMenuBar* bar);

/// GUI thread only. Reads the menu bar once, when built.
class ShortcutsDialog : public QDialog {
    Q_OBJECT
public:
    ShortcutsDialog(const QMenuBar* bar, QWidget* parent = nullptr);

    QLineEdit* filterEdit() const { return m_filter; }
    /// One top-level row per menu, one child per action: column 0 the action, column 1 its keys.
    QTreeWidget* tree() const { return m_tree; }

private:
    void applyFilter(const QString& text);

    QLineEdit* m_filter = nullptr;
    QTreeWidget* m_tree = nullptr;
};

} // namespace kf::ui
