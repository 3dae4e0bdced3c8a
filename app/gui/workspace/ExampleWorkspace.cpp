#include "app/gui/workspace/ExampleWorkspace.h"

#include "engine/core/InstallLayout.h"

#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QObject>
#include <QStandardPaths>

namespace kf::app {

bool copyFolder(const QString& from, const QString& to, QString* error)
{
    const QDir src(from);
    if (!src.exists()) {
        if (error)
            *error = QObject::tr("%1 does not exist").arg(from);
        return false;
    }
    if (!QDir().mkpath(to)) {
        if (error)
            *error = QObject::tr("cannot create %1").arg(to);
        return false;
    }
    for (const QFileInfo& f : src.entryInfoList(QDir::Files | QDir::Dirs | QDir::NoDotAndDotDot)) {
        const QString target = to + "/" + f.fileName();
        if (f.isDir()) {
            if (!copyFolder(f.absoluteFilePath(), target, error))
                return false;
        } else if (!QFile::copy(f.absoluteFilePath(), target)) {
            if (error)
                *error = QObject::tr("cannot copy %1 to %2").arg(f.absoluteFilePath(), target);
            return false;
        } else {
            // Installed files may be read-only; the user's copy is theirs to edit.
            QFile::setPermissions(target, QFile::permissions(target) | QFileDevice::WriteOwner);
        }
    }
    return true;
}

QString userExampleWorkspace(QString* warning)
{
    const QString bundled = QString::fromStdString(installedPath(InstallDir::Data, "examples", KF_EXAMPLES_DIR).string());
    const QString base = QStandardPaths::writableLocation(QStandardPaths::AppLocalDataLocation);
    if (base.isEmpty())
        return bundled;
    const QString mine = base + "/examples";
    if (QFileInfo(mine).isDir())
        return mine;
    // Copy next to the destination, then rename: a half-finished copy never looks like a workspace.
    const QString partial = mine + ".partial";
    QDir(partial).removeRecursively();
    QString error;
    if (!copyFolder(bundled, partial, &error) || !QDir().rename(partial, mine)) {
        QDir(partial).removeRecursively();
        if (warning)
            *warning = QObject::tr("Could not copy the examples to %1 (%2); opened the bundled folder instead.")
                           .arg(mine, error.isEmpty() ? QObject::tr("rename failed") : error);
        return bundled;
    }
    return mine;
}

} // namespace kf::app
