#include "app/gui/workspace/WorkspaceModel.h"

#include "app/gui/workspace/Workspace.h"

#include <QApplication>
#include <QDir>
#include <QFileInfo>
#include <QIcon>
#include <QStyle>

#include <algorithm>

namespace kf::app {

namespace {

// Style icons need a QApplication; a model used from a QCoreApplication shows none.
QIcon styleIcon(QStyle::StandardPixmap which)
{
    if (!qobject_cast<QApplication*>(QCoreApplication::instance()))
        return {};
    return QApplication::style()->standardIcon(which);
}

} // namespace

WorkspaceModel::WorkspaceModel(Workspace* workspace, QObject* parent)
    : QAbstractItemModel(parent)
    , m_workspace(workspace)
{
    connect(workspace, &Workspace::opened, this, &WorkspaceModel::resetFromWorkspace);
    connect(workspace, &Workspace::taskAdded, this, &WorkspaceModel::onTaskAdded);
    connect(workspace, &Workspace::taskRemoved, this, &WorkspaceModel::onTaskRemoved);
    connect(workspace, &Workspace::taskReloaded, this, &WorkspaceModel::onTaskReloaded);
    connect(workspace, &QObject::destroyed, this, [this] {
        beginResetModel();
        m_tasks.clear();
        endResetModel();
    });
    resetFromWorkspace();
}

WorkspaceModel::~WorkspaceModel() = default;

std::unique_ptr<WorkspaceModel::TaskNode> WorkspaceModel::snapshot(int workspaceIndex) const
{
    const TaskEntry& e = m_workspace->taskAt(workspaceIndex);
    auto node = std::make_unique<TaskNode>();
    node->dir = e.dir;
    node->children.push_back({Kind::TaskJson, QStringLiteral("task.json"), e.jsonPath, tr("The task definition")});
    if (e.task) {
        node->name = QString::fromStdString(e.task->name);
        node->toolTip = QString::fromStdString(e.task->description);
        for (const kf::Candidate& c : e.task->candidates) {
            const QString file = QString::fromStdString(c.file);
            node->children.push_back({Kind::Candidate, file, QDir::cleanPath(e.dir + QLatin1Char('/') + file),
                                      QString::fromStdString(c.description)});
        }
    } else {
        // Without a valid task.json the folder name is all we can show; the tooltip says why.
        node->name = QFileInfo(e.dir).fileName();
        node->error = e.error ? QString::fromStdString(e.error->message()) : tr("The task did not load.");
        node->toolTip = node->error;
    }
    return node;
}

int WorkspaceModel::rowOf(const TaskNode* node) const
{
    for (size_t i = 0; i < m_tasks.size(); ++i)
        if (m_tasks[i].get() == node)
            return static_cast<int>(i);
    return -1;
}

void WorkspaceModel::resetFromWorkspace()
{
    beginResetModel();
    m_tasks.clear();
    if (m_workspace)
        for (int i = 0; i < m_workspace->taskCount(); ++i)
            m_tasks.push_back(snapshot(i));
    endResetModel();
}

void WorkspaceModel::onTaskAdded(const QString& dir, int index)
{
    Q_UNUSED(dir);
    beginInsertRows({}, index, index);
    m_tasks.insert(m_tasks.begin() + index, snapshot(index));
    endInsertRows();
}

void WorkspaceModel::onTaskRemoved(const QString& dir, int index)
{
    if (index < 0 || index >= static_cast<int>(m_tasks.size()) || m_tasks[static_cast<size_t>(index)]->dir != dir) {
        resetFromWorkspace(); // out of step: should not happen, but never show a wrong tree
        return;
    }
    beginRemoveRows({}, index, index);
    m_tasks.erase(m_tasks.begin() + index);
    endRemoveRows();
}

void WorkspaceModel::onTaskReloaded(const QString& dir)
{
    const int wsIndex = m_workspace->indexOfDir(dir);
    const QModelIndex taskIndex = indexForTaskDir(dir);
    if (wsIndex < 0 || !taskIndex.isValid()) {
        resetFromWorkspace();
        return;
    }
    TaskNode* node = m_tasks[static_cast<size_t>(taskIndex.row())].get();
    auto fresh = snapshot(wsIndex);

    // Keep the children both lists share at the front and at the back; remove and insert only
    // the middle, so an appended candidate is one inserted row.
    auto& oldKids = node->children;
    const auto& newKids = fresh->children;
    auto same = [](const Child& a, const Child& b) { return a.kind == b.kind && a.path == b.path; };
    const int oldN = static_cast<int>(oldKids.size());
    const int newN = static_cast<int>(newKids.size());
    int prefix = 0;
    while (prefix < std::min(oldN, newN) && same(oldKids[prefix], newKids[prefix]))
        ++prefix;
    int suffix = 0;
    while (suffix < std::min(oldN, newN) - prefix && same(oldKids[oldN - 1 - suffix], newKids[newN - 1 - suffix]))
        ++suffix;
    if (oldN - suffix > prefix) {
        beginRemoveRows(taskIndex, prefix, oldN - suffix - 1);
        oldKids.erase(oldKids.begin() + prefix, oldKids.begin() + (oldN - suffix));
        endRemoveRows();
    }
    if (newN - suffix > prefix) {
        beginInsertRows(taskIndex, prefix, newN - suffix - 1);
        oldKids.insert(oldKids.begin() + prefix, newKids.begin() + prefix, newKids.begin() + (newN - suffix));
        endInsertRows();
    }
    node->name = fresh->name;
    node->toolTip = fresh->toolTip;
    node->error = fresh->error;
    oldKids = newKids; // same rows now; descriptions may have changed
    emit dataChanged(taskIndex, taskIndex);
    if (newN > 0)
        emit dataChanged(index(0, 0, taskIndex), index(newN - 1, 0, taskIndex));
}

QModelIndex WorkspaceModel::index(int row, int column, const QModelIndex& parent) const
{
    if (column != 0 || row < 0)
        return {};
    if (!parent.isValid())
        return row < static_cast<int>(m_tasks.size()) ? createIndex(row, 0, nullptr) : QModelIndex();
    if (parent.internalPointer() || parent.row() >= static_cast<int>(m_tasks.size()))
        return {};
    TaskNode* node = m_tasks[static_cast<size_t>(parent.row())].get();
    return row < static_cast<int>(node->children.size()) ? createIndex(row, 0, node) : QModelIndex();
}

QModelIndex WorkspaceModel::parent(const QModelIndex& child) const
{
    const auto* node = static_cast<const TaskNode*>(child.internalPointer());
    if (!child.isValid() || !node)
        return {};
    const int row = rowOf(node);
    return row < 0 ? QModelIndex() : createIndex(row, 0, nullptr);
}

int WorkspaceModel::rowCount(const QModelIndex& parent) const
{
    if (!parent.isValid())
        return static_cast<int>(m_tasks.size());
    if (parent.column() != 0 || parent.internalPointer() || parent.row() >= static_cast<int>(m_tasks.size()))
        return 0;
    return static_cast<int>(m_tasks[static_cast<size_t>(parent.row())]->children.size());
}

int WorkspaceModel::columnCount(const QModelIndex&) const
{
    return 1;
}

Qt::ItemFlags WorkspaceModel::flags(const QModelIndex& index) const
{
    if (!index.isValid())
        return Qt::NoItemFlags;
    Qt::ItemFlags f = Qt::ItemIsEnabled | Qt::ItemIsSelectable;
    if (index.internalPointer())
        f |= Qt::ItemNeverHasChildren;
    return f;
}

QVariant WorkspaceModel::data(const QModelIndex& index, int role) const
{
    if (!index.isValid())
        return {};
    if (const auto* node = static_cast<const TaskNode*>(index.internalPointer())) {
        if (index.row() >= static_cast<int>(node->children.size()))
            return {};
        const Child& c = node->children[static_cast<size_t>(index.row())];
        switch (role) {
        case Qt::DisplayRole: return c.display;
        case Qt::ToolTipRole: return c.toolTip.isEmpty() ? QVariant() : QVariant(c.toolTip);
        case Qt::DecorationRole:
            return styleIcon(c.kind == Kind::TaskJson ? QStyle::SP_FileDialogDetailedView : QStyle::SP_FileIcon);
        case PathRole: return c.path;
        case KindRole: return static_cast<int>(c.kind);
        case TaskDirRole: return node->dir;
        case ErrorRole: return QString();
        default: return {};
        }
    }
    if (index.row() >= static_cast<int>(m_tasks.size()))
        return {};
    const TaskNode& t = *m_tasks[static_cast<size_t>(index.row())];
    switch (role) {
    case Qt::DisplayRole: return t.name;
    case Qt::ToolTipRole: return t.toolTip.isEmpty() ? QVariant() : QVariant(t.toolTip);
    case Qt::DecorationRole:
        return styleIcon(t.error.isEmpty() ? QStyle::SP_DirIcon : QStyle::SP_MessageBoxCritical);
    case PathRole: return t.dir;
    case KindRole: return static_cast<int>(Kind::Task);
    case TaskDirRole: return t.dir;
    case ErrorRole: return t.error;
    default: return {};
    }
}

QModelIndex WorkspaceModel::indexForTaskDir(const QString& taskDir) const
{
    const QString dir = QDir::cleanPath(QFileInfo(taskDir).absoluteFilePath());
    for (size_t i = 0; i < m_tasks.size(); ++i)
        if (m_tasks[i]->dir == dir)
            return createIndex(static_cast<int>(i), 0, nullptr);
    return {};
}

QModelIndex WorkspaceModel::indexForPath(const QString& filePath) const
{
    const QString path = QDir::cleanPath(QFileInfo(filePath).absoluteFilePath());
    for (const auto& node : m_tasks)
        for (size_t r = 0; r < node->children.size(); ++r)
            if (node->children[r].path == path)
                return createIndex(static_cast<int>(r), 0, node.get());
    return {};
}

} // namespace kf::app
