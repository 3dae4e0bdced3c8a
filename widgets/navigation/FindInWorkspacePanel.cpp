// The Search Results panel (widgets/navigation/FindInWorkspacePanel.h).
#include "widgets/navigation/FindInWorkspacePanel.h"

#include <QApplication>
#include <QCheckBox>
#include <QDir>
#include <QHBoxLayout>
#include <QLabel>
#include <QLineEdit>
#include <QPainter>
#include <QPromise>
#include <QPushButton>
#include <QStyledItemDelegate>
#include <QTreeWidget>
#include <QVBoxLayout>
#include <QtConcurrent/QtConcurrentRun>

#include <algorithm>

namespace kf::ui {

namespace {

// A match row: the line number dimmed in a gutter, then the line with the match in bold.
class MatchDelegate : public QStyledItemDelegate {
public:
    using QStyledItemDelegate::QStyledItemDelegate;

    void paint(QPainter* painter, const QStyleOptionViewItem& option, const QModelIndex& index) const override
    {
        if (!index.parent().isValid()) {
            QStyledItemDelegate::paint(painter, option, index);
            return;
        }
        QStyleOptionViewItem opt(option);
        initStyleOption(&opt, index);
        const QString text = opt.text;
        opt.text.clear();
        const QWidget* w = opt.widget;
        QStyle* style = w ? w->style() : QApplication::style();
        style->drawControl(QStyle::CE_ItemViewItem, &opt, painter, w);

        const int start = index.data(FindInWorkspacePanel::ColumnRole).toInt() - 1;
        const int length = index.data(FindInWorkspacePanel::LengthRole).toInt();
        const bool selected = opt.state & QStyle::State_Selected;
        const QColor ink = opt.palette.color(selected ? QPalette::HighlightedText : QPalette::Text);
        QRect r = style->subElementRect(QStyle::SE_ItemViewItemText, &opt, w);
        painter->save();
        painter->setClipRect(r);
        QFont plain = opt.font;
        QFont bold = plain;
        bold.setBold(true);
        const QFontMetrics fm(plain), bm(bold);
        const QString number = QString::number(index.data(FindInWorkspacePanel::LineRole).toInt());
        const int gutter = fm.horizontalAdvance(QStringLiteral("00000 "));
        painter->setFont(plain);
        painter->setPen(selected ? ink : opt.palette.color(QPalette::Disabled, QPalette::Text));
        painter->drawText(r.adjusted(0, 0, -(r.width() - gutter + fm.horizontalAdvance(u' ')), 0),
                          Qt::AlignRight | Qt::AlignVCenter, number);
        int x = r.left() + gutter;
        auto draw = [&](const QString& part, const QFont& f, const QFontMetrics& m) {
            painter->setFont(f);
            painter->drawText(QRect(x, r.top(), r.right() - x, r.height()), Qt::AlignLeft | Qt::AlignVCenter, part);
            x += m.horizontalAdvance(part);
        };
        painter->setPen(ink);
        draw(text.left(start), plain, fm);
        draw(text.mid(start, length), bold, bm);
        draw(text.mid(start + length), plain, fm);
        painter->restore();
    }
};

// The line as shown: leading blanks dropped, a long line cut around the match.
std::pair<QString, int> shownLine(const FindMatch& m)
{
    QString text = m.lineText;
    int start = m.column - 1;
    int lead = 0;
    while (lead < start && lead < text.size() && text.at(lead).isSpace())
        ++lead;
    text = text.mid(lead);
    start -= lead;
    if (text.size() > 300) {
        const int from = std::max(0, start - 80);
        text = (from > 0 ? QStringLiteral("…") : QString()) + text.mid(from, 300);
        start = start - from + (from > 0 ? 1 : 0);
    }
    return {text, start + 1};
}

} // namespace

FindInWorkspacePanel::FindInWorkspacePanel(QWidget* parent)
    : QWidget(parent)
{
    setObjectName("findInWorkspacePanel");
    m_query = new QLineEdit(this);
    m_query->setObjectName("findQuery");
    m_query->setPlaceholderText(tr("Find in the workspace's files"));
    m_query->setClearButtonEnabled(true);
    m_case = new QCheckBox(tr("&Case sensitive"), this);
    m_words = new QCheckBox(tr("&Whole words"), this);
    m_regex = new QCheckBox(tr("Regular e&xpression"), this);
    m_searchButton = new QPushButton(tr("&Search"), this);
    m_cancelButton = new QPushButton(tr("Cancel"), this);
    m_cancelButton->setEnabled(false);
    m_tree = new QTreeWidget(this);
    m_tree->setObjectName("findResults");
    m_tree->setHeaderHidden(true);
    m_tree->setUniformRowHeights(true);
    m_tree->setItemDelegate(new MatchDelegate(m_tree));
    m_summary = new QLabel(this);
    m_summary->setObjectName("findSummary");
    m_summary->setTextInteractionFlags(Qt::TextSelectableByMouse);

    auto* top = new QHBoxLayout;
    top->addWidget(m_query, 1);
    top->addWidget(m_case);
    top->addWidget(m_words);
    top->addWidget(m_regex);
    top->addWidget(m_searchButton);
    top->addWidget(m_cancelButton);
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(4, 4, 4, 4);
    layout->addLayout(top);
    layout->addWidget(m_summary);
    layout->addWidget(m_tree, 1);

    connect(m_query, &QLineEdit::returnPressed, this, &FindInWorkspacePanel::search);
    connect(m_searchButton, &QPushButton::clicked, this, &FindInWorkspacePanel::search);
    connect(m_cancelButton, &QPushButton::clicked, this, &FindInWorkspacePanel::cancel);
    connect(m_tree, &QTreeWidget::itemActivated, this, &FindInWorkspacePanel::activate);
}

FindInWorkspacePanel::~FindInWorkspacePanel()
{
    if (m_cancel)
        m_cancel->store(true);   // the worker holds its own copies; it just stops early
}

void FindInWorkspacePanel::focusQuery(const QString& text)
{
    if (!text.isEmpty())
        m_query->setText(text);
    m_query->selectAll();
    m_query->setFocus(Qt::ShortcutFocusReason);
}

FindOptions FindInWorkspacePanel::options() const
{
    return {m_query->text(), m_case->isChecked(), m_words->isChecked(), m_regex->isChecked()};
}

void FindInWorkspacePanel::search()
{
    if (m_cancel)
        m_cancel->store(true);
    const quint64 generation = ++m_generation;
    const FindOptions o = options();
    const Scope scope = m_scope ? m_scope() : Scope{};
    FindResult refused;
    if (compileFind(o, &refused.error) && scope.root.isEmpty() && scope.buffers.isEmpty())
        refused.error = tr("Open a workspace to search in (File ▸ Open Workspace…).");
    if (!refused.error.isEmpty()) {
        m_running = false;
        m_cancelButton->setEnabled(false);
        m_result = refused;
        showResult(m_result);
        emit searchFinished();
        return;
    }
    m_root = scope.root;
    auto flag = std::make_shared<std::atomic_bool>(false);
    m_cancel = flag;
    auto* watcher = new QFutureWatcher<FindResult>(this);
    connect(watcher, &QFutureWatcherBase::finished, this, [this, watcher, generation] {
        watcher->deleteLater();
        if (generation != m_generation)
            return;   // a newer search replaced this one
        m_result = watcher->future().resultCount() > 0 ? watcher->result() : FindResult{};
        onFinished();
    });
    connect(watcher, &QFutureWatcherBase::progressValueChanged, this, [this, watcher, generation](int done) {
        if (generation == m_generation)
            m_summary->setText(tr("Searching… %1 of %2 files").arg(done).arg(watcher->progressMaximum()));
    });
    const QString root = scope.root;
    const QHash<QString, QString> buffers = scope.buffers;
    watcher->setFuture(QtConcurrent::run([root, buffers, o, flag](QPromise<FindResult>& promise) {
        QStringList files = workspaceSearchFiles(root);
        for (auto it = buffers.constBegin(); it != buffers.constEnd(); ++it)
            if (!files.contains(it.key()))
                files.append(it.key());   // an open file outside the workspace folder
        promise.setProgressRange(0, int(files.size()));
        promise.addResult(findInFiles(files, o, buffers, flag.get(), [&promise](int done, int) {
            promise.setProgressValue(done);
        }));
    }));
    m_running = true;
    m_cancelButton->setEnabled(true);
    m_tree->clear();
    m_summary->setStyleSheet(QString());
    m_summary->setText(tr("Searching…"));
}

void FindInWorkspacePanel::cancel()
{
    if (m_running && m_cancel)
        m_cancel->store(true);   // the worker stops before its next file and reports what it found
}

void FindInWorkspacePanel::onFinished()
{
    m_running = false;
    m_cancelButton->setEnabled(false);
    showResult(m_result);
    emit searchFinished();
}

void FindInWorkspacePanel::showResult(const FindResult& r)
{
    m_tree->clear();
    m_summary->setText(r.summary());
    m_summary->setStyleSheet(r.error.isEmpty() ? QString() : QStringLiteral("color: #d9534f;"));
    const QDir root(m_root);
    QList<QTreeWidgetItem*> files;
    for (const FileMatches& f : r.files) {
        auto* file = new QTreeWidgetItem(
            {tr("%1 (%2)%3")
                 .arg(m_root.isEmpty() ? f.path : root.relativeFilePath(f.path))
                 .arg(f.matches.size())
                 .arg(f.fromBuffer ? tr(", unsaved editor") : QString())});
        file->setData(0, PathRole, f.path);
        file->setData(0, LineRole, 0);
        file->setToolTip(0, f.path);
        QFont bold = file->font(0);
        bold.setBold(true);
        file->setFont(0, bold);
        for (const FindMatch& m : f.matches) {
            const auto [text, column] = shownLine(m);
            auto* row = new QTreeWidgetItem(file, {text});
            row->setData(0, PathRole, f.path);
            row->setData(0, LineRole, m.line);
            row->setData(0, ByteColumnRole, m.byteColumn);
            row->setData(0, ColumnRole, column);
            row->setData(0, LengthRole, m.length);
            row->setToolTip(0, m.lineText);
        }
        files.append(file);
    }
    m_tree->addTopLevelItems(files);
    if (r.matchCount <= 2000)
        m_tree->expandAll();
}

void FindInWorkspacePanel::activate(QTreeWidgetItem* item)
{
    if (!item)
        return;
    emit openRequested(item->data(0, PathRole).toString(), item->data(0, LineRole).toInt(),
                       item->data(0, ByteColumnRole).toInt());
}

} // namespace kf::ui
