#pragma once
// Helpers shared by the inspector's widget tests: open a case and wait for the data pass, wait
// for every visible tile, read a pane's pixels, and recognise the class markings by colour.
#include "widgets/inspect/TensorCanvas.h"
#include "widgets/inspect/TensorInspector.h"

#include <QApplication>
#include <QImage>
#include <QMouseEvent>
#include <QTest>

namespace inspecttest {

using kf::ui::TensorCanvas;
using kf::ui::TensorInspector;
using Pane = kf::ui::TensorInspector::Pane;

inline bool isRed(QRgb c) { return qRed(c) > 140 && qRed(c) > qGreen(c) + 70 && qRed(c) > qBlue(c) + 70; }
inline bool isMagenta(QRgb c) { return qRed(c) > 230 && qGreen(c) < 40 && qBlue(c) > 230; }
inline bool isHazard(QRgb c) { return (c & 0xffffff) == 0xffcd00 || (c & 0xffffff) == 0x000000; }
inline bool isMarked(QRgb c) { return isRed(c) || isMagenta(c) || isHazard(c); }

/// Shows `w`, opens `dir` and waits for the data pass.
inline bool open(TensorInspector& w, const QString& dir, QSize size = {1500, 950})
{
    w.resize(size);
    w.show();
    if (!QTest::qWaitForWindowExposed(&w))
        return false;
    if (!w.openCase(dir))
        return false;
    return QTest::qWaitFor([&] { return w.isAnalysed(); }, 20000);
}

/// Waits until every shown pane painted all its visible tiles at their exact level.
inline bool settled(TensorInspector& w, int timeoutMs = 20000)
{
    return QTest::qWaitFor([&] {
        bool all = true;
        for (Pane p : {Pane::Reference, Pane::Candidate, Pane::Difference}) {
            TensorCanvas* c = w.pane(p);
            if (!c->isVisible())
                continue;
            c->repaint();
            all = all && c->isComplete();
        }
        return all;
    }, timeoutMs);
}

/// A mouse move without buttons, delivered straight to the pane (no window-system round trip).
inline void hoverAt(QWidget* w, QPoint pos)
{
    QMouseEvent move(QEvent::MouseMove, QPointF(pos), QPointF(w->mapToGlobal(pos)), Qt::NoButton, Qt::NoButton, Qt::NoModifier);
    QApplication::sendEvent(w, &move);
}

inline QImage grabPane(TensorInspector& w, Pane p)
{
    return w.pane(p)->grab().toImage().convertToFormat(QImage::Format_RGB32);
}

} // namespace inspecttest
