#include "widgets/registry/DiffView.h"

#include "widgets/common/SelectableLabel.h"
#include "widgets/common/StatusColors.h"

#include <QEvent>
#include <QFontDatabase>
#include <QLabel>
#include <QPlainTextEdit>
#include <QTextCursor>
#include <QVBoxLayout>

#include <algorithm>

namespace kf::ui {

namespace {

struct DiffColors {
    QColor added;
    QColor removed;
    QColor header;
    QColor gutter;
};

DiffColors colorsFor(const QPalette& p)
{
    if (isDarkPalette(p))
        return {QColor(0x1f, 0x3d, 0x2a), QColor(0x4a, 0x22, 0x26), QColor(0x1e, 0x33, 0x4d), p.color(QPalette::PlaceholderText)};
    return {QColor(0xe6, 0xff, 0xec), QColor(0xff, 0xeb, 0xe9), QColor(0xdd, 0xf4, 0xff), p.color(QPalette::PlaceholderText)};
}

QString number(int line, int width)
{
    return line > 0 ? QString::number(line).rightJustified(width) : QString(width, QLatin1Char(' '));
}

} // namespace

DiffView::DiffView(QWidget* parent) : QWidget(parent)
{
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->setSpacing(4);
    m_summary = selectableLabel({}, this);
    m_text = new QPlainTextEdit(this);
    m_text->setReadOnly(true);
    m_text->setLineWrapMode(QPlainTextEdit::NoWrap);
    m_text->setFont(QFontDatabase::systemFont(QFontDatabase::FixedFont));
    m_text->setTextInteractionFlags(Qt::TextSelectableByMouse | Qt::TextSelectableByKeyboard);
    layout->addWidget(m_summary);
    layout->addWidget(m_text, 1);
    showMessage(tr("Select a kernel and another version of it to compare the sources."));
}

void DiffView::showDiff(const QString& oldName, const QString& oldText, const QString& newName, const QString& newText)
{
    m_oldName = oldName;
    m_newName = newName;
    m_message.clear();
    m_diff = SourceDiff::compute(oldText, newText);
    render();
}

void DiffView::showMessage(const QString& sentence)
{
    m_message = sentence;
    m_diff = {};
    render();
}

QString DiffView::summaryText() const
{
    return m_summary->text();
}

void DiffView::changeEvent(QEvent* event)
{
    QWidget::changeEvent(event);
    if (event->type() == QEvent::PaletteChange)
        render();
}

void DiffView::render()
{
    m_text->clear();
    if (!m_message.isEmpty()) {
        m_summary->setText(m_message);
        return;
    }
    QString summary = QStringLiteral("%1 → %2: %3").arg(m_oldName, m_newName, m_diff.summary());
    if (m_diff.lineEndingsDiffer)
        summary += tr(" (line endings differ: one uses CRLF, the other LF)");
    m_summary->setText(summary);
    if (m_diff.identical())
        return;

    const DiffColors colors = colorsFor(palette());
    int maxLine = 1;
    for (const DiffHunk& h : m_diff.hunks)
        maxLine = std::max({maxLine, h.oldStart + h.oldCount, h.newStart + h.newCount});
    const int width = static_cast<int>(QString::number(maxLine).size());

    QTextCharFormat gutter;
    gutter.setForeground(colors.gutter);
    QTextCharFormat plain;
    plain.setForeground(palette().color(QPalette::Text));
    QTextCursor cursor(m_text->document());
    cursor.beginEditBlock();
    bool first = true;
    const auto line = [&](const QColor& background, const QString& numbers, const QString& text) {
        if (!first)
            cursor.insertBlock();
        first = false;
        QTextBlockFormat block;
        if (background.isValid())
            block.setBackground(background);
        cursor.setBlockFormat(block);
        cursor.insertText(numbers, gutter);
        cursor.insertText(text, plain);
    };
    for (const DiffHunk& h : m_diff.hunks) {
        line(colors.header, QString(2 * width + 2, QLatin1Char(' ')), h.header());
        for (const DiffLine& l : h.lines) {
            const QString numbers = number(l.oldLine, width) + QLatin1Char(' ') + number(l.newLine, width) + QLatin1Char(' ');
            switch (l.kind) {
            case DiffLine::Kind::Added:
                line(colors.added, numbers, QStringLiteral("+ ") + l.text);
                break;
            case DiffLine::Kind::Removed:
                line(colors.removed, numbers, QStringLiteral("- ") + l.text);
                break;
            case DiffLine::Kind::Context:
                line({}, numbers, QStringLiteral("  ") + l.text);
                break;
            }
        }
    }
    cursor.endEditBlock();
    m_text->moveCursor(QTextCursor::Start);
}

} // namespace kf::ui
