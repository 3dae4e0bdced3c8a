#include "app/gui/window/StatusBar.h"

#include <QLabel>

namespace kf::app {

StatusBar::StatusBar(QWidget* parent)
    : QStatusBar(parent)
    , m_runner(new QLabel(this))
    , m_compile(new QLabel(this))
    , m_cursor(new QLabel(this))
{
    m_runner->setObjectName("runnerState");
    m_compile->setObjectName("compileState");
    addWidget(m_runner, 1);
    addPermanentWidget(m_compile);
    addPermanentWidget(m_cursor);
    // A label whose size follows its text asks the whole window to lay out again (QMainWindow's
    // relayout costs 20-50 ms): the cursor position changes on every key, so it gets a fixed size,
    // wide enough for "Ln 99999, Col 9999".
    m_cursor->setFixedSize(m_cursor->fontMetrics().horizontalAdvance(tr("Ln 99999, Col 9999")) + 8,
                           m_cursor->sizeHint().height());
    setCursor(1, 1);
}

void StatusBar::setRunner(const QString& text, const QString& kind, const QString& detail)
{
    const QString dot = kind == "ok" ? "#2e9d4a" : kind == "warn" ? "#c98a00" : kind == "error" ? "#d03030" : "#808080";
    m_runner->setText(QString("<span style='color:%1'>●</span> %2").arg(dot, text.toHtmlEscaped()));
    m_runner->setToolTip(detail.isEmpty() ? text : detail);
    m_runner->setProperty("plainText", text);
}

void StatusBar::setCompile(const QString& text) { m_compile->setText(text); }

void StatusBar::setCursor(int line, int column) { m_cursor->setText(tr("Ln %1, Col %2").arg(line).arg(column)); }

QString StatusBar::runnerText() const { return m_runner->property("plainText").toString(); }
QString StatusBar::compileText() const { return m_compile->text(); }

} // namespace kf::app
