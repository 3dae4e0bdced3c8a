#include "widgets/task/JsonTable.h"

#include "widgets/task/ChoiceDelegate.h"
#include "widgets/task/JsonTableModel.h"

#include <QHBoxLayout>
#include <QHeaderView>
#include <QPushButton>
#include <QScrollBar>
#include <QTableView>
#include <QVBoxLayout>

namespace kf::ui {

namespace {
constexpr int kMaxVisibleRows = 8;
}

JsonTable::JsonTable(TaskDocument* doc, const QString& objectName, QWidget* parent)
    : QWidget(parent), m_model(new JsonTableModel(doc, this)), m_view(new QTableView(this))
{
    setObjectName(objectName);
    m_view->setObjectName(objectName + QStringLiteral("View"));
    m_view->setModel(m_model);
    m_view->setItemDelegate(new ChoiceDelegate(m_view));
    m_view->setSelectionBehavior(QAbstractItemView::SelectRows);
    m_view->setEditTriggers(QAbstractItemView::DoubleClicked | QAbstractItemView::EditKeyPressed |
                            QAbstractItemView::AnyKeyPressed);
    m_view->horizontalHeader()->setStretchLastSection(true);
    m_view->horizontalHeader()->setSectionResizeMode(QHeaderView::Interactive);
    // Fixed row heights let sizeHint() know the table's height before it is shown.
    m_view->verticalHeader()->setSectionResizeMode(QHeaderView::Fixed);
    m_view->verticalHeader()->setDefaultSectionSize(m_view->fontMetrics().height() + 8);
    setSizePolicy(QSizePolicy::Preferred, QSizePolicy::Fixed);
    m_view->setVerticalScrollMode(QAbstractItemView::ScrollPerPixel);
    m_view->setSizeAdjustPolicy(QAbstractScrollArea::AdjustIgnored);

    auto* add = new QPushButton(tr("Add"), this);
    auto* remove = new QPushButton(tr("Remove"), this);
    add->setObjectName(QStringLiteral("addRow"));
    remove->setObjectName(QStringLiteral("removeRow"));
    connect(add, &QPushButton::clicked, this, [this] {
        const QModelIndex current = m_view->currentIndex();
        const int row = current.isValid() ? current.row() + 1 : m_model->rowCount();
        m_model->insertRows(row, 1);
    });
    connect(remove, &QPushButton::clicked, this, [this] {
        const QModelIndex current = m_view->currentIndex();
        if (current.isValid())
            m_model->removeRows(current.row(), 1);
    });

    auto* buttons = new QHBoxLayout;
    buttons->addWidget(add);
    buttons->addWidget(remove);
    buttons->addStretch();
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->addWidget(m_view);
    layout->addLayout(buttons);

    auto resize = [this] {
        m_view->resizeColumnsToContents();
        // A long description must not push the other columns out of sight.
        const int widest = m_view->fontMetrics().averageCharWidth() * 40;
        for (int c = 0; c < m_model->columnCount(); ++c)
            m_view->setColumnWidth(c, std::min(m_view->columnWidth(c), widest));
        updateHeight();
    };
    connect(m_view->horizontalScrollBar(), &QScrollBar::rangeChanged, this, &JsonTable::updateHeight);
    connect(m_model, &QAbstractItemModel::modelReset, this, resize);
    connect(m_model, &QAbstractItemModel::rowsInserted, this, resize);
    connect(m_model, &QAbstractItemModel::rowsRemoved, this, resize);
}

void JsonTable::showError(int row, int column, const QString& message)
{
    m_model->setErrorCell(row, column, message);
    const QModelIndex index = m_model->index(row, column < 0 ? 0 : column);
    if (index.isValid())
        m_view->scrollTo(index);
}

void JsonTable::clearError()
{
    m_model->clearError();
}

void JsonTable::updateHeight()
{
    updateGeometry();
}

QSize JsonTable::sizeHint() const
{
    const int rows = std::clamp(m_model->rowCount(), 1, kMaxVisibleRows);
    const int rowHeight = m_view->verticalHeader()->defaultSectionSize();
    const int header = m_view->horizontalHeader()->sizeHint().height();
    const int scroll = m_view->horizontalScrollBar()->maximum() > 0 ? m_view->horizontalScrollBar()->sizeHint().height() : 0;
    const int buttons = layout()->itemAt(1)->sizeHint().height() + layout()->spacing();
    const int frame = 2 * m_view->frameWidth();
    return {QWidget::sizeHint().width(), header + rows * rowHeight + scroll + frame + buttons};
}

QSize JsonTable::minimumSizeHint() const
{
    return {QWidget::minimumSizeHint().width(), sizeHint().height()};
}

} // namespace kf::ui
