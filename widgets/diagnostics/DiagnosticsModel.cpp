#include "widgets/diagnostics/DiagnosticsModel.h"

#include <QApplication>
#include <QDir>
#include <QFileInfo>
#include <QIcon>
#include <QStyle>

namespace kf::ui {

namespace {

QString text(const std::string& s)
{
    return QString::fromStdString(s);
}

QString severityText(kf::Diagnostic::Severity s)
{
    const auto name = kf::severityName(s);
    return QString::fromUtf8(name.data(), qsizetype(name.size()));
}

QIcon severityIcon(kf::Diagnostic::Severity s)
{
    // Icons need a widget application; a model used headless just shows text.
    if (!qobject_cast<QApplication*>(QCoreApplication::instance()))
        return {};
    switch (s) {
    case kf::Diagnostic::Severity::Error:
        return QApplication::style()->standardIcon(QStyle::SP_MessageBoxCritical);
    case kf::Diagnostic::Severity::Warning:
        return QApplication::style()->standardIcon(QStyle::SP_MessageBoxWarning);
    case kf::Diagnostic::Severity::Remark:
    case kf::Diagnostic::Severity::Note: break;
    }
    return QApplication::style()->standardIcon(QStyle::SP_MessageBoxInformation);
}

// The compiler's own diagnostics carry no source: NVRTC (or ptxas, which NVRTC runs) said them.
QString sourceText(const kf::Diagnostic& d)
{
    return d.source.empty() ? QStringLiteral("NVRTC") : text(d.source);
}

// Rich text so the echoed source line and its caret line up in a fixed-width font.
QString toolTip(const kf::Diagnostic& d)
{
    QString html = QStringLiteral("<p><b>%1</b>").arg(severityText(d.severity));
    if (!d.code.empty())
        html += QStringLiteral(" #") + text(d.code).toHtmlEscaped();
    html += QStringLiteral(": ") + text(d.message).toHtmlEscaped().replace(u'\n', QStringLiteral("<br>"));
    html += QStringLiteral("</p>");
    if (!d.source.empty())
        html += QStringLiteral("<p>Reported by %1.</p>").arg(text(d.source).toHtmlEscaped());
    if (!d.sourceLine.empty()) {
        QString source = text(d.sourceLine);
        QString caret;
        if (d.column > 0) {
            for (int i = 0; i + 1 < d.column; ++i)
                caret += i < source.size() && source[i] == u'\t' ? u'\t' : u' ';
            caret += u'^';
        }
        html += QStringLiteral("<pre>") + source.toHtmlEscaped();
        if (!caret.isEmpty())
            html += u'\n' + caret;
        html += QStringLiteral("</pre>");
    }
    return html;
}

} // namespace

DiagnosticsModel::DiagnosticsModel(QObject* parent)
    : QAbstractTableModel(parent)
{
}

void DiagnosticsModel::setDiagnostics(const std::vector<kf::Diagnostic>& diagnostics)
{
    beginResetModel();
    m_diagnostics = diagnostics;
    endResetModel();
}

void DiagnosticsModel::setBaseDirectory(const QString& dir)
{
    beginResetModel();
    m_base = dir.isEmpty() ? QString() : QDir::cleanPath(QFileInfo(dir).absoluteFilePath());
    endResetModel();
}

QString DiagnosticsModel::displayPath(const QString& path) const
{
    if (path.isEmpty() || m_base.isEmpty() || QFileInfo(path).isRelative())
        return QFileInfo(path).fileName().isEmpty() ? path : QFileInfo(path).fileName();
    const QString relative = QDir(m_base).relativeFilePath(QDir::cleanPath(path));
    // Outside the workspace (a CUDA header, an include elsewhere): the name; the tooltip has the rest.
    if (relative.startsWith(QStringLiteral("../")) || relative == QStringLiteral(".."))
        return QFileInfo(path).fileName();
    return relative;
}

const kf::Diagnostic& DiagnosticsModel::diagnosticAt(int row) const
{
    return m_diagnostics.at(static_cast<size_t>(row));
}

int DiagnosticsModel::count(kf::Diagnostic::Severity s) const
{
    int n = 0;
    for (const auto& d : m_diagnostics)
        n += d.severity == s ? 1 : 0;
    return n;
}

int DiagnosticsModel::rowCount(const QModelIndex& parent) const
{
    return parent.isValid() ? 0 : static_cast<int>(m_diagnostics.size());
}

int DiagnosticsModel::columnCount(const QModelIndex& parent) const
{
    return parent.isValid() ? 0 : ColumnCount;
}

QVariant DiagnosticsModel::data(const QModelIndex& index, int role) const
{
    if (!checkIndex(index, CheckIndexOption::IndexIsValid | CheckIndexOption::ParentIsInvalid))
        return {};
    const kf::Diagnostic& d = diagnosticAt(index.row());
    const int column = index.column();
    switch (role) {
    case Qt::DisplayRole:
        switch (column) {
        case Severity: return severityText(d.severity);
        case Source: return sourceText(d);
        // Relative to the workspace; the full path is in the tooltip (it would push the message out of view).
        case File: return displayPath(text(d.file));
        // 0 means "no position" (ptxas messages, no caret): show nothing rather than 0.
        case Line: return d.line > 0 ? QVariant(d.line) : QVariant(QString());
        case ColumnNumber: return d.column > 0 ? QVariant(d.column) : QVariant(QString());
        case Code: return text(d.code);
        // All of it: the panel wraps the column, so a long message never needs a sideways scroll.
        case Message: return text(d.message);
        default: return {};
        }
    case Qt::DecorationRole:
        return column == Severity ? QVariant(severityIcon(d.severity)) : QVariant();
    case Qt::ToolTipRole:
        return column == File ? QVariant(QDir::toNativeSeparators(text(d.file))) : QVariant(toolTip(d));
    case Qt::TextAlignmentRole:
        if (column == Line || column == ColumnNumber)
            return QVariant::fromValue(Qt::AlignRight | Qt::AlignVCenter);
        if (column == Code) // keeps it clear of the right-aligned column number beside it
            return QVariant::fromValue(Qt::AlignHCenter | Qt::AlignVCenter);
        return QVariant::fromValue(Qt::AlignLeft | Qt::AlignVCenter);
    case SortRole:
        switch (column) {
        case Severity: return static_cast<int>(d.severity);
        case Line: return d.line;
        case ColumnNumber: return d.column;
        default: return data(index, Qt::DisplayRole);
        }
    case SeverityRole:
        return severityText(d.severity);
    default:
        return {};
    }
}

QVariant DiagnosticsModel::headerData(int section, Qt::Orientation orientation, int role) const
{
    if (orientation != Qt::Horizontal || role != Qt::DisplayRole)
        return QAbstractTableModel::headerData(section, orientation, role);
    switch (section) {
    case Severity: return tr("Severity");
    case Source: return tr("Source");
    case File: return tr("File");
    case Line: return tr("Ln");
    case ColumnNumber: return tr("Col");
    case Code: return tr("Code");
    case Message: return tr("Message");
    default: return {};
    }
}

} // namespace kf::ui
