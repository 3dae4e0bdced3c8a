#pragma once
// The workspace as a two-level tree for the task browser: tasks, and under each its task.json
// and its candidates. Follows the Workspace's signals with row inserts and removals, so the
// view keeps its selection and expansion when a task is edited on disk.

#include <QAbstractItemModel>
#include <QPointer>
#include <QString>
#include <QStringList>

#include <memory>
#include <vector>

namespace kf::app {

class Workspace;

/// Lives on the GUI thread with its Workspace, which must outlive it (or be destroyed first:
/// the model then empties). Rows mirror Workspace::tasks() in order.
class WorkspaceModel : public QAbstractItemModel {
    Q_OBJECT
public:
    enum class Kind { Task, TaskJson, Candidate };
    enum Role {
        PathRole = Qt::UserRole + 1, ///< QString: the file's absolute path (a task: its folder)
        KindRole,                    ///< int: Kind
        TaskDirRole,                 ///< QString: the task folder, on every node
        ErrorRole,                   ///< QString: the task's load error sentence; empty when it loads
    };

    explicit WorkspaceModel(Workspace* workspace, QObject* parent = nullptr);
    ~WorkspaceModel() override;

    QModelIndex index(int row, int column, const QModelIndex& parent = {}) const override;
    QModelIndex parent(const QModelIndex& child) const override;
    int rowCount(const QModelIndex& parent = {}) const override;
    int columnCount(const QModelIndex& parent = {}) const override;
    QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
    Qt::ItemFlags flags(const QModelIndex& index) const override;

    /// The node of a task folder, or invalid.
    QModelIndex indexForTaskDir(const QString& taskDir) const;
    /// The node of task.json or of a candidate file (absolute path), or invalid.
    QModelIndex indexForPath(const QString& filePath) const;

private:
    struct Child {
        Kind kind = Kind::Candidate;
        QString display;
        QString path;
        QString toolTip;
    };
    // A snapshot of one task, so data() never depends on the workspace mid-update.
    struct TaskNode {
        QString dir;
        QString name;
        QString toolTip;
        QString error;
        std::vector<Child> children;
    };

    std::unique_ptr<TaskNode> snapshot(int workspaceIndex) const;
    int rowOf(const TaskNode* node) const;
    void resetFromWorkspace();
    void onTaskAdded(const QString& dir, int index);
    void onTaskRemoved(const QString& dir, int index);
    void onTaskReloaded(const QString& dir);

    QPointer<Workspace> m_workspace;
    std::vector<std::unique_ptr<TaskNode>> m_tasks;
};

} // namespace kf::app
