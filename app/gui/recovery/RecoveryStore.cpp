#include "app/gui/recovery/RecoveryStore.h"

#include "engine/core/Files.h"
#include "engine/core/Hash.h"

#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QJsonDocument>
#include <QJsonObject>
#include <QLoggingCategory>
#include <QStandardPaths>

#include <algorithm>
#include <filesystem>
#include <optional>

namespace kf::app {

namespace {

Q_LOGGING_CATEGORY(lcRecovery, "kf.recovery")

constexpr int kSchemaVersion = 1;

std::filesystem::path fsPath(const QString& p) { return std::filesystem::path(p.toStdString()); }

QString hashOf(const QByteArray& bytes)
{
    return QString::fromStdString(kf::hashHex(std::string_view(bytes.constData(), bytes.size())));
}

/// The file's bytes, or nullopt when it cannot be read (deleted, say).
std::optional<QByteArray> diskBytes(const QString& path)
{
    QFile f(path);
    if (!f.open(QIODevice::ReadOnly))
        return std::nullopt;
    return f.readAll();
}

QString diskHash(const QString& path)
{
    const auto bytes = diskBytes(path);
    return bytes ? hashOf(*bytes) : QString();
}

std::optional<QJsonObject> readSnapshot(const QString& file)
{
    QFile f(file);
    if (!f.open(QIODevice::ReadOnly))
        return std::nullopt;
    QJsonParseError err;
    const QJsonDocument doc = QJsonDocument::fromJson(f.readAll(), &err);
    if (err.error != QJsonParseError::NoError || !doc.isObject()) {
        qCWarning(lcRecovery) << "skipping corrupt recovery file" << file << err.errorString();
        return std::nullopt;
    }
    const QJsonObject o = doc.object();
    if (!o.value(QLatin1String("path")).isString() || !o.value(QLatin1String("text")).isString()) {
        qCWarning(lcRecovery) << "skipping recovery file without path or text" << file;
        return std::nullopt;
    }
    return o;
}

} // namespace

RecoveryStore::RecoveryStore(QString dir)
    : m_dir(dir.isEmpty()
                ? QStandardPaths::writableLocation(QStandardPaths::AppLocalDataLocation) + QStringLiteral("/recovery")
                : std::move(dir))
{
}

QString RecoveryStore::normalized(const QString& filePath)
{
    return QDir::cleanPath(QFileInfo(filePath).absoluteFilePath());
}

QString RecoveryStore::snapshotPath(const QString& filePath) const
{
    return m_dir + QLatin1Char('/') + hashOf(normalized(filePath).toUtf8()) + QStringLiteral(".json");
}

bool RecoveryStore::save(const QString& filePath, const QString& text)
{
    const QString path = normalized(filePath);
    const QString snapshot = snapshotPath(path);
    // Keep the base of the edit in progress: re-hashing the disk on every snapshot would hide
    // a change made on disk while the user was typing.
    QString base;
    if (const auto old = readSnapshot(snapshot); old && old->value(QLatin1String("path")).toString() == path)
        base = old->value(QLatin1String("base_hash")).toString();
    else
        base = diskHash(path);

    QJsonObject o;
    o.insert(QLatin1String("schema_version"), kSchemaVersion);
    o.insert(QLatin1String("path"), path);
    o.insert(QLatin1String("text"), text);
    o.insert(QLatin1String("saved_at"), QDateTime::currentDateTimeUtc().toString(Qt::ISODateWithMs));
    o.insert(QLatin1String("base_hash"), base);
    const QByteArray bytes = QJsonDocument(o).toJson(QJsonDocument::Compact);
    if (auto w = kf::writeFileAtomic(fsPath(snapshot), std::string_view(bytes.constData(), bytes.size())); !w) {
        qCWarning(lcRecovery) << "could not write recovery file:" << QString::fromStdString(w.error().message());
        return false;
    }
    return true;
}

void RecoveryStore::remove(const QString& filePath)
{
    QFile::remove(snapshotPath(filePath));
}

QList<RecoveryStore::Entry> RecoveryStore::pending() const
{
    QList<Entry> out;
    const QDir dir(m_dir);
    const QStringList files = dir.entryList({QStringLiteral("*.json")}, QDir::Files, QDir::Name);
    for (const QString& name : files) {
        const QString file = dir.filePath(name);
        const auto o = readSnapshot(file);
        if (!o)
            continue;
        Entry e;
        e.filePath = o->value(QLatin1String("path")).toString();
        e.text = o->value(QLatin1String("text")).toString();
        e.savedAt = QDateTime::fromString(o->value(QLatin1String("saved_at")).toString(), Qt::ISODateWithMs);
        const auto bytes = diskBytes(e.filePath);
        if (bytes && QString::fromUtf8(*bytes) == e.text) {
            QFile::remove(file); // nothing to recover: the disk already has this text
            continue;
        }
        const QString base = o->value(QLatin1String("base_hash")).toString();
        e.fileChangedSinceEdit = (bytes ? hashOf(*bytes) : QString()) != base;
        out.append(e);
    }
    std::sort(out.begin(), out.end(), [](const Entry& a, const Entry& b) { return a.savedAt > b.savedAt; });
    return out;
}

} // namespace kf::app
