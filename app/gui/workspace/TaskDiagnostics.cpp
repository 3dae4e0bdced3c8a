#include "app/gui/workspace/TaskDiagnostics.h"

#include "app/gui/workspace/JsonPointerPlace.h"
#include "engine/core/Files.h"
#include "engine/core/Text.h"

#include <QDir>
#include <QFileInfo>
#include <QRegularExpression>

#include <string>
#include <tuple>

namespace kf::app {

namespace {

/// What the Problems panel echoes of an error: enough to act on, never a megabyte of a name.
constexpr std::size_t kMaxMessageBytes = 1000;

} // namespace

kf::Diagnostic taskDiagnostic(const TaskEntry& entry)
{
    kf::Diagnostic d;
    d.severity = kf::Diagnostic::Severity::Error;
    d.source = "task";
    if (!entry.error) {
        d.file = entry.jsonPath.toStdString();
        d.message = "the task did not load";
        return d;
    }
    const kf::Error& e = *entry.error;
    QString file = e.file.empty() ? entry.jsonPath : QString::fromStdString(e.file);
    if (QFileInfo(file).isRelative())
        file = QDir(entry.dir).filePath(file);
    d.file = QDir::cleanPath(file).toStdString();
    std::string message = (e.pointer.empty() ? std::string() : "at " + e.pointer + ": ") + (e.why.empty() ? e.what + " failed" : e.why);
    if (!e.hint.empty())
        message += " (" + e.hint + ")";
    d.message = kf::text::clipUtf8(message, kMaxMessageBytes);
    if (d.message.size() < message.size())
        d.message += "…";
    // The JSON reader names the place of a syntax error itself; a schema error names a pointer.
    static const QRegularExpression place(QStringLiteral("^line (\\d+), column (\\d+)"));
    if (const auto m = place.match(QString::fromStdString(e.why.substr(0, 64))); m.hasMatch()) {
        d.line = m.captured(1).toInt();
        d.column = m.captured(2).toInt();
    } else if (!e.pointer.empty()) {
        if (auto text = kf::readFileBytes(d.file))
            std::tie(d.line, d.column) = locateJsonPointer(*text, e.pointer);
    }
    return d;
}

std::vector<kf::Diagnostic> taskDiagnostics(const Workspace& workspace)
{
    std::vector<kf::Diagnostic> out;
    for (const TaskEntry& e : workspace.tasks())
        if (e.error)
            out.push_back(taskDiagnostic(e));
    return out;
}

} // namespace kf::app
