// The locator's view (widgets/navigation/LocatorPopup.h).
#include "widgets/navigation/LocatorPopup.h"

#include <QApplication>
#include <QFutureWatcher>
#include <QHeaderView>
#include <QKeyEvent>
#include <QLabel>
#include <QLineEdit>
#include <QTreeWidget>
#include <QVBoxLayout>
#include <QtConcurrent/QtConcurrentRun>

#include <algorithm>

namespace kf::ui {

LocatorPopup::LocatorPopup(QWidget* host, QWidget* parent)
    : QFrame(parent)
    , m_host(host)
{
    setObjectName("locatorPopup");
    setFrameShape(QFrame::StyledPanel);
    setAutoFillBackground(true);
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(4, 4, 4, 4);
    layout->setSpacing(2);
    m_edit = new QLineEdit(this);
    m_edit->setObjectName("locatorEdit");
    m_edit->setPlaceholderText(tr("Type to locate a file or kernel (k <name>: kernels, f <name>: files)"));
    m_edit->setClearButtonEnabled(true);
    m_list = new QTreeWidget(this);
    m_list->setObjectName("locatorList");
    m_list->setColumnCount(2);
    m_list->setHeaderHidden(true);
    m_list->setRootIsDecorated(false);
    m_list->setUniformRowHeights(true);
    m_list->setFocusPolicy(Qt::NoFocus);   // the keys stay in the line edit
    m_list->header()->setSectionResizeMode(0, QHeaderView::ResizeToContents);
    m_list->header()->setStretchLastSection(true);
    m_status = new QLabel(this);
    m_status->setEnabled(false);   // dimmed
    m_status->hide();
    layout->addWidget(m_edit);
    layout->addWidget(m_list);
    layout->addWidget(m_status);

    m_edit->installEventFilter(this);
    if (m_host)
        m_host->installEventFilter(this);   // follow its resizes
    connect(m_edit, &QLineEdit::textChanged, this, &LocatorPopup::refilter);
    connect(m_list, &QTreeWidget::itemClicked, this, [this](QTreeWidgetItem* item) {
        activateRow(m_list->indexOfTopLevelItem(item));
    });
    hide();
}

void LocatorPopup::setItems(std::vector<LocatorItem> items)
{
    m_items = std::move(items);
    refilter();
}

void LocatorPopup::scan(const QStringList& files, const QString& root, const QHash<QString, QString>& buffers)
{
    const quint64 generation = ++m_scanGeneration;
    m_scanning = true;
    if (m_items.empty())
        setStatus(tr("Scanning the workspace for kernels…"));
    auto* watcher = new QFutureWatcher<std::vector<LocatorItem>>(this);
    connect(watcher, &QFutureWatcherBase::finished, this, [this, watcher, generation] {
        watcher->deleteLater();
        if (generation != m_scanGeneration)
            return;   // a newer scan is on its way
        m_scanning = false;
        setItems(watcher->result());
        const auto kernels = std::count_if(m_items.begin(), m_items.end(),
                                           [](const LocatorItem& i) { return i.kind == LocatorItem::Kind::Kernel; });
        setStatus(tr("%1 files, %2 kernels · k <name>: kernels only, f <name>: files only")
                      .arg(qsizetype(m_items.size()) - kernels)
                      .arg(kernels));
        emit scanFinished();
    });
    watcher->setFuture(QtConcurrent::run(collectLocatorItems, files, root, buffers));
}

void LocatorPopup::setStatus(const QString& text)
{
    m_status->setText(text);
    m_status->setVisible(!text.isEmpty());
}

void LocatorPopup::popup(const QString& text)
{
    if (!text.isEmpty())
        m_edit->setText(text);
    if (!isVisible())
        m_returnFocus = QApplication::focusWidget();
    place();
    show();
    raise();
    m_edit->setFocus(Qt::ShortcutFocusReason);
    if (text.isEmpty())
        m_edit->selectAll();
}

void LocatorPopup::place()
{
    QWidget* over = m_host ? m_host : parentWidget();
    if (!over || !parentWidget())
        return;
    const QRect area(over->mapTo(parentWidget(), QPoint(0, 0)), over->size());
    const int w = std::clamp(area.width() - 40, std::min(area.width(), 320), 720);
    const int h = std::min(std::max(area.height() - 40, 160), 380);
    setGeometry(area.x() + (area.width() - w) / 2, area.y() + 8, w, h);
}

void LocatorPopup::refilter()
{
    m_shown = locate(m_items, m_edit->text());
    m_list->clear();
    QList<QTreeWidgetItem*> rows;
    rows.reserve(qsizetype(m_shown.size()));
    const QColor dim = palette().color(QPalette::Disabled, QPalette::Text);
    for (const LocatorItem& item : m_shown) {
        auto* row = new QTreeWidgetItem({item.name, item.detail});
        row->setForeground(1, dim);
        row->setToolTip(0, item.path);
        if (item.kind == LocatorItem::Kind::Kernel) {
            QFont f = row->font(0);
            f.setItalic(true);   // kernels read apart from file names
            row->setFont(0, f);
        }
        rows.append(row);
    }
    m_list->addTopLevelItems(rows);
    if (!rows.isEmpty())
        m_list->setCurrentItem(rows.front());
}

void LocatorPopup::activateRow(int row)
{
    if (row < 0 || row >= int(m_shown.size()))
        return;
    const LocatorItem item = m_shown[size_t(row)];
    hide();
    emit activated(item);
}

bool LocatorPopup::eventFilter(QObject* watched, QEvent* event)
{
    if (watched == m_host && event->type() == QEvent::Resize && isVisible())
        place();
    if (watched != m_edit)
        return QFrame::eventFilter(watched, event);
    if (event->type() == QEvent::FocusOut) {
        // Clicking elsewhere closes it, as Qt Creator's does; its own list takes no focus.
        if (!isAncestorOf(QApplication::focusWidget()))
            hide();
        return false;
    }
    if (event->type() != QEvent::KeyPress)
        return false;
    auto* key = static_cast<QKeyEvent*>(event);
    const int count = m_list->topLevelItemCount();
    const int current = m_list->indexOfTopLevelItem(m_list->currentItem());
    auto moveTo = [&](int row) {
        if (count > 0)
            m_list->setCurrentItem(m_list->topLevelItem(std::clamp(row, 0, count - 1)));
        return true;
    };
    const int page = std::max(1, m_list->viewport()->height() / std::max(1, m_list->sizeHintForRow(0)) - 1);
    switch (key->key()) {
    case Qt::Key_Down:
        return moveTo(current + 1);
    case Qt::Key_Up:
        return moveTo(current - 1);
    case Qt::Key_PageDown:
        return moveTo(current + page);
    case Qt::Key_PageUp:
        return moveTo(current - page);
    case Qt::Key_Return:
    case Qt::Key_Enter:
        activateRow(current);
        return true;
    case Qt::Key_Escape:
        hide();
        if (m_returnFocus)   // back where Ctrl+K was pressed
            m_returnFocus->setFocus(Qt::OtherFocusReason);
        return true;
    default:
        return false;
    }
}

} // namespace kf::ui
