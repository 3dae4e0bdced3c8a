#include "widgets/runs/RunLogView.h"

#include "widgets/common/VerdictStyle.h"

#include <QFontDatabase>
#include <QScrollBar>
#include <QTextCharFormat>
#include <QTextCursor>
#include <QTime>

namespace kf::ui {

RunLogView::RunLogView(QWidget* parent, int maxLines) : QPlainTextEdit(parent)
{
    setReadOnly(true);
    setMaximumBlockCount(maxLines);
    setLineWrapMode(QPlainTextEdit::NoWrap);
    setFont(QFontDatabase::systemFont(QFontDatabase::FixedFont));
    setPlaceholderText(tr("The run log appears here."));
}

QString RunLogView::levelName(Level level)
{
    switch (level) {
    case Level::Info:
        return QStringLiteral("info");
    case Level::Warning:
        return QStringLiteral("warning");
    case Level::Error:
        return QStringLiteral("error");
    }
    return {};
}

void RunLogView::appendLine(Level level, const QString& text)
{
    QString message = text;
    message.replace(QLatin1Char('\n'), QLatin1Char(' '));
    m_lastMessage = message;
    m_lastLevel = level;

    QScrollBar* bar = verticalScrollBar();
    const bool follow = bar->value() == bar->maximum();

    QTextCharFormat stamp;
    // Half-way between text and background: readable, yet quieter than the message, in any theme.
    const QColor fg = palette().color(QPalette::Text), base = palette().color(QPalette::Base);
    stamp.setForeground(QColor((fg.red() + base.red()) / 2, (fg.green() + base.green()) / 2, (fg.blue() + base.blue()) / 2));
    QTextCharFormat body;
    const Tone tone = level == Level::Error ? Tone::Bad : level == Level::Warning ? Tone::Warning : Tone::Neutral;
    body.setForeground(verdictstyle::color(tone, palette()));

    QTextCursor cursor(document());
    cursor.movePosition(QTextCursor::End);
    if (!document()->isEmpty())
        cursor.insertBlock();
    cursor.insertText(QTime::currentTime().toString(QStringLiteral("HH:mm:ss.zzz")) + QStringLiteral("  "), stamp);
    cursor.insertText(levelName(level).leftJustified(8), body);
    cursor.insertText(message, body);

    if (follow)
        bar->setValue(bar->maximum());
}

} // namespace kf::ui
