// Help ▸ Keyboard Shortcuts (widgets/navigation/ShortcutsDialog.h).
#include "widgets/navigation/ShortcutsDialog.h"

#include <QAction>
#include <QDialogButtonBox>
#include <QHash>
#include <QHeaderView>
#include <QLineEdit>
#include <QMenu>
#include <QMenuBar>
#include <QTreeWidget>
#include <QVBoxLayout>

namespace kf::ui {

namespace {

QString plainText(const QAction* a)
{
    QString t = a->text();
    t.replace(QLatin1String("&&"), QLatin1String("\x01"));
    t.remove(QLatin1Char('&'));
    t.replace(QLatin1Char('\x01'), QLatin1Char('&'));
    if (t.endsWith(QStringLiteral("…")))
        t.chop(1);
    return t;
}

void walk(const QMenu* menu, const QString& path, std::vector<ShortcutEntry>& out)
{
    for (QAction* a : menu->actions()) {
        if (a->isSeparator())
            continue;
        if (const QMenu* sub = a->menu()) {
            walk(sub, path + QStringLiteral(" ▸ ") + plainText(a), out);
            continue;
        }
        QStringList keys;
        for (const QKeySequence& k : a->shortcuts())
            if (!k.isEmpty())
                keys << k.toString(QKeySequence::NativeText);
        if (!keys.isEmpty())
            out.push_back({path, plainText(a), keys.join(QStringLiteral(", ")), a});
    }
}

} // namespace

std::vector<ShortcutEntry> menuShortcuts(const QMenuBar* bar)
{
    std::vector<ShortcutEntry> out;
    if (!bar)
        return out;
    for (QAction* a : bar->actions())
        if (const QMenu* menu = a->menu())
            walk(menu, plainText(a), out);
    return out;
}

ShortcutsDialog::ShortcutsDialog(const QMenuBar* bar, QWidget* parent)
    : QDialog(parent)
{
    setObjectName("shortcutsDialog");
    setWindowTitle(tr("Keyboard Shortcuts"));
    m_filter = new QLineEdit(this);
    m_filter->setPlaceholderText(tr("Filter by action, menu or key"));
    m_filter->setClearButtonEnabled(true);
    m_tree = new QTreeWidget(this);
    m_tree->setColumnCount(2);
    m_tree->setHeaderLabels({tr("Action"), tr("Shortcut")});
    m_tree->setRootIsDecorated(false);
    m_tree->setUniformRowHeights(true);
    m_tree->header()->setSectionResizeMode(0, QHeaderView::Stretch);
    m_tree->header()->setSectionResizeMode(1, QHeaderView::ResizeToContents);
    m_tree->header()->setStretchLastSection(false);
    QHash<QString, QTreeWidgetItem*> groups;
    for (const ShortcutEntry& e : menuShortcuts(bar)) {
        QTreeWidgetItem*& group = groups[e.menu];
        if (!group) {
            group = new QTreeWidgetItem(m_tree, {e.menu});
            QFont bold = group->font(0);
            bold.setBold(true);
            group->setFont(0, bold);
            group->setFirstColumnSpanned(true);
        }
        auto* row = new QTreeWidgetItem(group, {e.action, e.shortcut});
        row->setToolTip(0, e.source->statusTip());
    }
    m_tree->expandAll();
    auto* buttons = new QDialogButtonBox(QDialogButtonBox::Close, this);
    auto* layout = new QVBoxLayout(this);
    layout->addWidget(m_filter);
    layout->addWidget(m_tree);
    layout->addWidget(buttons);
    connect(buttons, &QDialogButtonBox::rejected, this, &QDialog::reject);
    connect(m_filter, &QLineEdit::textChanged, this, &ShortcutsDialog::applyFilter);
    resize(520, 560);
}

void ShortcutsDialog::applyFilter(const QString& text)
{
    const QString needle = text.trimmed();
    for (int g = 0; g < m_tree->topLevelItemCount(); ++g) {
        QTreeWidgetItem* group = m_tree->topLevelItem(g);
        const bool groupMatches = group->text(0).contains(needle, Qt::CaseInsensitive);
        int visible = 0;
        for (int i = 0; i < group->childCount(); ++i) {
            QTreeWidgetItem* row = group->child(i);
            const bool show = needle.isEmpty() || groupMatches || row->text(0).contains(needle, Qt::CaseInsensitive) ||
                              row->text(1).contains(needle, Qt::CaseInsensitive);
            row->setHidden(!show);
            visible += show ? 1 : 0;
        }
        group->setHidden(visible == 0);
    }
}

} // namespace kf::ui
