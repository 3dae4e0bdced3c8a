#include "widgets/inspect/TensorCanvas.h"

#include "widgets/inspect/CaseData.h"
#include "widgets/inspect/Colormaps.h"
#include "widgets/inspect/ElementCode.h"
#include "widgets/inspect/TensorViewport.h"
#include "widgets/inspect/TileRenderer.h"

#include <QHelpEvent>
#include <QMouseEvent>
#include <QPainter>
#include <QToolTip>
#include <QWheelEvent>

#include <algorithm>
#include <cmath>

namespace kf::ui {

namespace ec = elementcode;

TensorCanvas::TensorCanvas(TensorViewport* view, TileRenderer* renderer, int owner, QWidget* parent)
    : QWidget(parent), m_view(view), m_renderer(renderer), m_owner(owner)
{
    setMouseTracking(true);
    setAttribute(Qt::WA_OpaquePaintEvent);
    setMinimumSize(120, 120);
    setCursor(Qt::CrossCursor);
    setFocusPolicy(Qt::ClickFocus);  // F8 / Shift+F8 reach the inspector from a clicked pane
    auto refresh = [this] { update(); };
    connect(view, &TensorViewport::viewChanged, this, refresh);
    connect(view, &TensorViewport::hoverChanged, this, refresh);
    connect(view, &TensorViewport::focusChanged, this, refresh);
    connect(view, &TensorViewport::sliceChanged, this, refresh);
    connect(renderer, &TileRenderer::tileReady, this, [this](quint64 id) {
        if (m_source && m_source->id == id)
            update();
    });
}

void TensorCanvas::setSource(std::shared_ptr<const TileSource> source)
{
    m_source = std::move(source);
    update();
}

void TensorCanvas::setPlaceholder(const QString& text)
{
    m_placeholder = text;
    update();
}

void TensorCanvas::setStripsEnabled(bool on)
{
    m_strips = on;
    update();
}

void TensorCanvas::setSummary(std::shared_ptr<const SliceSummary> summary)
{
    m_summary = std::move(summary);
    update();
}

QRect TensorCanvas::imageRect() const
{
    const int inset = m_strips ? kStripWidth + kStripGap : 0;
    return rect().adjusted(0, 0, -inset, -inset);
}

QRect TensorCanvas::rowStripRect() const
{
    const QRect r = imageRect();
    return m_strips ? QRect(r.right() + 1 + kStripGap, r.top(), kStripWidth, r.height()) : QRect();
}

QRect TensorCanvas::columnStripRect() const
{
    const QRect r = imageRect();
    return m_strips ? QRect(r.left(), r.bottom() + 1 + kStripGap, r.width(), kStripWidth) : QRect();
}

QPointF TensorCanvas::origin() const
{
    const QRect r = imageRect();
    const double s = m_view->scale();
    // Rounded so that cell edges land on whole pixels whenever the scale is whole.
    return {std::round(r.left() + r.width() / 2.0 - m_view->centre().x() * s),
            std::round(r.top() + r.height() / 2.0 - m_view->centre().y() * s)};
}

QPoint TensorCanvas::cellCentre(std::int64_t row, std::int64_t col) const
{
    const QPointF o = origin();
    const double s = m_view->scale();
    return QPointF(o.x() + (static_cast<double>(col) + 0.5) * s, o.y() + (static_cast<double>(row) + 0.5) * s).toPoint();
}

QRectF TensorCanvas::cellRect(std::int64_t row, std::int64_t col) const
{
    const QPointF o = origin();
    const double s = m_view->scale();
    return {o.x() + static_cast<double>(col) * s, o.y() + static_cast<double>(row) * s, s, s};
}

bool TensorCanvas::cellAt(QPointF pos, std::int64_t* row, std::int64_t* col) const
{
    if (!imageRect().contains(pos.toPoint()))
        return false;
    const QPointF o = origin();
    const double s = m_view->scale();
    const double c = std::floor((pos.x() - o.x()) / s), r = std::floor((pos.y() - o.y()) / s);
    const SliceSpec& sl = m_view->slice();
    if (r < 0 || c < 0 || r >= static_cast<double>(sl.rows()) || c >= static_cast<double>(sl.cols()))
        return false;
    *row = static_cast<std::int64_t>(r);
    *col = static_cast<std::int64_t>(c);
    return sl.flat(*row, *col) >= 0;
}

void TensorCanvas::resizeEvent(QResizeEvent* event)
{
    QWidget::resizeEvent(event);
    emit resized();
}

void TensorCanvas::paintEvent(QPaintEvent*)
{
    QPainter p(this);
    p.fillRect(rect(), palette().color(QPalette::Window));
    p.fillRect(imageRect(), palette().color(QPalette::Base));
    if (!m_source || !m_source->valid()) {
        m_complete = false;
        p.setPen(palette().color(QPalette::PlaceholderText));
        p.drawText(imageRect().adjusted(8, 8, -8, -8), Qt::AlignCenter | Qt::TextWordWrap, m_placeholder);
        return;
    }
    p.save();
    p.setClipRect(imageRect());
    paintTiles(p);
    paintCrosshair(p);
    p.restore();
    if (m_strips)
        paintStrips(p);
}

void TensorCanvas::paintTiles(QPainter& p)
{
    const SliceSpec& sl = m_view->slice();
    const double s = m_view->scale();
    const QPointF o = origin();
    const QRect area = imageRect();
    const int T = TileSource::kTileSize;
    const std::int64_t rows = sl.rows(), cols = sl.cols();
    // The finest level not sharper than the screen: tiles are only ever enlarged (by < 2×), so
    // nearest-neighbour scaling never drops the one bad pixel of a block.
    const int level = std::max(TileSource::kMinLevel, -static_cast<int>(std::floor(m_view->zoomStep() / 2.0)));
    const double tileElems = level >= 0 ? double(T) * std::exp2(level) : double(T) / std::exp2(-level);
    const double tilePx = tileElems * s;
    const auto firstTile = [&](double px0, double o0) { return std::max<std::int64_t>(0, static_cast<std::int64_t>(std::floor((px0 - o0) / tilePx))); };
    const auto lastTile = [&](double px1, double o0, std::int64_t n) {
        const std::int64_t maxTile = (n + static_cast<std::int64_t>(tileElems) - 1) / std::max<std::int64_t>(static_cast<std::int64_t>(tileElems), 1);
        return std::min<std::int64_t>(std::max<std::int64_t>(maxTile, 1) - 1, static_cast<std::int64_t>(std::floor((px1 - o0) / tilePx)));
    };
    const std::int64_t tx0 = firstTile(area.left(), o.x()), tx1 = lastTile(area.right() + 1, o.x(), cols);
    const std::int64_t ty0 = firstTile(area.top(), o.y()), ty1 = lastTile(area.bottom() + 1, o.y(), rows);

    struct Want {
        double dist;
        TileJob job;
    };
    std::vector<Want> wants;
    // The whole slice in one coarse tile first: whatever is missing later is drawn from it.
    const double longest = static_cast<double>(std::max<std::int64_t>({rows, cols, 1}));
    const int overview = std::max(0, static_cast<int>(std::ceil(std::log2(longest / T))));
    if (overview > level)
        wants.push_back({-1, TileJob{m_source, overview, 0, 0}});

    p.setRenderHint(QPainter::SmoothPixmapTransform, false);
    TileCache& cache = m_renderer->cache();
    bool complete = true;
    const QPointF mid = area.center();
    for (std::int64_t ty = ty0; ty <= ty1; ++ty) {
        for (std::int64_t tx = tx0; tx <= tx1; ++tx) {
            const QRectF target(o.x() + static_cast<double>(tx) * tilePx, o.y() + static_cast<double>(ty) * tilePx, tilePx, tilePx);
            const TileKey key{m_source->id, level, tx, ty};
            if (const QImage* img = cache.find(key)) {
                p.drawImage(target, *img);
                continue;
            }
            complete = false;
            QRect part;
            if (const QImage* coarse = cache.coarser(key, 12, &part))
                p.drawImage(target, *coarse, part);
            const QPointF d = target.center() - mid;
            wants.push_back({d.x() * d.x() + d.y() * d.y(), TileJob{m_source, level, tx, ty}});
        }
    }
    std::stable_sort(wants.begin(), wants.end(), [](const Want& a, const Want& b) { return a.dist < b.dist; });
    std::vector<TileJob> jobs;
    jobs.reserve(wants.size());
    for (auto& w : wants)
        jobs.push_back(std::move(w.job));
    m_renderer->want(m_owner, std::move(jobs));
    m_complete = complete;
}

void TensorCanvas::paintCrosshair(QPainter& p)
{
    const double s = m_view->scale();
    const QPointF o = origin();
    std::int64_t fr, fc;
    if (m_view->focus() >= 0 && m_view->slice().locate(m_view->focus(), &fr, &fc)) {
        // The element F8 went to: a ring in the highlight colour, outside the cell so its own
        // marking stays visible.
        const QRectF cell(o.x() + static_cast<double>(fc) * s, o.y() + static_cast<double>(fr) * s, s, s);
        p.setRenderHint(QPainter::Antialiasing, false);
        p.setBrush(Qt::NoBrush);
        p.setPen(QPen(QColor(0, 0, 0, 200), 4));
        p.drawRect(cell.adjusted(-3, -3, 3, 3));
        p.setPen(QPen(palette().color(QPalette::Highlight).lighter(150), 2));
        p.drawRect(cell.adjusted(-3, -3, 3, 3));
    }
    if (!m_view->hasHover())
        return;
    const QRectF cell(o.x() + static_cast<double>(m_view->hoverCol()) * s, o.y() + static_cast<double>(m_view->hoverRow()) * s, s, s);
    const QRect area = imageRect();
    p.setRenderHint(QPainter::Antialiasing, false);
    const QPointF c = cell.center();
    // Dark under light: visible on pale and on dark cells alike.
    for (const auto& [color, width] : {std::pair{QColor(0, 0, 0, 150), 3}, std::pair{QColor(255, 255, 255, 220), 1}}) {
        p.setPen(QPen(color, width));
        p.drawLine(QPointF(area.left(), c.y()), QPointF(cell.left() - 2, c.y()));
        p.drawLine(QPointF(cell.right() + 2, c.y()), QPointF(area.right(), c.y()));
        p.drawLine(QPointF(c.x(), area.top()), QPointF(c.x(), cell.top() - 2));
        p.drawLine(QPointF(c.x(), cell.bottom() + 2), QPointF(c.x(), area.bottom()));
        p.setBrush(Qt::NoBrush);
        p.drawRect(cell.adjusted(-1, -1, 1, 1));
    }
}

void TensorCanvas::paintStrips(QPainter& p)
{
    const QRect rs = rowStripRect(), cs = columnStripRect();
    p.fillRect(rs, palette().color(QPalette::Base));
    p.fillRect(cs, palette().color(QPalette::Base));
    if (!m_summary || m_summary->sliceKey != m_view->slice().key())
        return;
    const double s = m_view->scale();
    const QPointF o = origin();
    auto paint = [&](bool rows, const QRect& strip) {
        const auto& maxima = rows ? m_summary->rowMax : m_summary->colMax;
        const auto n = static_cast<std::int64_t>(maxima.size());
        const int from = rows ? strip.top() : strip.left(), to = rows ? strip.bottom() : strip.right();
        const double o0 = rows ? o.y() : o.x();
        for (int px = from; px <= to; ++px) {
            const auto first = std::max<std::int64_t>(0, static_cast<std::int64_t>(std::floor((px - o0) / s)));
            const auto last = std::min<std::int64_t>(n - 1, static_cast<std::int64_t>(std::ceil((px + 1 - o0) / s)) - 1);
            if (first > last)
                continue;
            std::uint8_t worst = 0;
            for (auto i = first; i <= last; ++i)
                worst = std::max(worst, maxima[static_cast<size_t>(i)]);
            if (worst != ec::kUnwritten) {
                p.fillRect(rows ? QRect(strip.left(), px, kStripWidth, 1) : QRect(px, strip.top(), 1, kStripWidth),
                           QColor(colormaps::ratioCode(worst)));
                continue;
            }
            for (int k = 0; k < kStripWidth; ++k) {
                const QPoint at = rows ? QPoint(strip.left() + k, px) : QPoint(px, strip.top() + k);
                p.setPen(QColor(colormaps::hazard(at.x(), at.y())));
                p.drawPoint(at);
            }
        }
    };
    paint(true, rs);
    paint(false, cs);
}

QString TensorCanvas::stripText(bool rows, std::int64_t first, std::int64_t last) const
{
    const auto& maxima = rows ? m_summary->rowMax : m_summary->colMax;
    const auto& args = rows ? m_summary->rowArg : m_summary->colArg;
    std::int64_t best = first;
    for (auto i = first; i <= last; ++i)
        if (maxima[static_cast<size_t>(i)] > maxima[static_cast<size_t>(best)])
            best = i;
    const std::int64_t flat = args[static_cast<size_t>(best)];
    const QString what = rows ? tr("row") : tr("column");
    const QString range = first == last ? QStringLiteral("%1 %2").arg(what).arg(first)
                                        : QStringLiteral("%1s %2–%3").arg(what).arg(first).arg(last);
    if (flat < 0 || !m_source)
        return range;
    const ElementVerdict v = m_source->data->verdict(m_source->output, flat);
    const QString where = [&] {
        QStringList parts;
        for (auto i : m_view->slice().index(flat))
            parts << QString::number(i);
        return QLatin1Char('[') + parts.join(QStringLiteral(", ")) + QLatin1Char(']');
    }();
    return tr("%1: max ratio %2 (%3) at %4")
        .arg(range, std::isnan(v.ratio) ? QStringLiteral("n/a") : QString::number(v.ratio, 'g', 4),
             QString::fromUtf8(elementClassName(v.cls).data()).replace(QLatin1Char('_'), QLatin1Char(' ')), where);
}

QString TensorCanvas::stripToolTip(QPoint pos) const
{
    if (!m_strips || !m_summary || m_summary->sliceKey != m_view->slice().key())
        return {};
    const bool rows = rowStripRect().contains(pos);
    if (!rows && !columnStripRect().contains(pos))
        return {};
    const double s = m_view->scale();
    const QPointF o = origin();
    const double px = rows ? pos.y() : pos.x(), o0 = rows ? o.y() : o.x();
    const auto n = static_cast<std::int64_t>(rows ? m_summary->rowMax.size() : m_summary->colMax.size());
    const auto first = std::max<std::int64_t>(0, static_cast<std::int64_t>(std::floor((px - o0) / s)));
    const auto last = std::min<std::int64_t>(n - 1, static_cast<std::int64_t>(std::ceil((px + 1 - o0) / s)) - 1);
    if (first > last)
        return {};
    return stripText(rows, first, last);
}

bool TensorCanvas::event(QEvent* e)
{
    if (e->type() == QEvent::ToolTip) {
        auto* he = static_cast<QHelpEvent*>(e);
        const QString text = stripToolTip(he->pos());
        if (text.isEmpty())
            QToolTip::hideText();
        else
            QToolTip::showText(he->globalPos(), text, this);
        return true;
    }
    return QWidget::event(e);
}

void TensorCanvas::wheelEvent(QWheelEvent* e)
{
    m_wheelAccum += e->angleDelta().y();
    const int steps = m_wheelAccum / 120;
    if (steps != 0) {
        m_wheelAccum -= steps * 120;
        m_view->zoomAt(steps, e->position() - QRectF(imageRect()).center());
    }
    e->accept();
}

void TensorCanvas::mousePressEvent(QMouseEvent* e)
{
    if (e->button() == Qt::LeftButton) {
        m_dragging = true;
        m_lastDrag = e->position();
        setCursor(Qt::ClosedHandCursor);
    }
}

void TensorCanvas::mouseMoveEvent(QMouseEvent* e)
{
    if (m_dragging) {
        m_view->panBy(e->position() - m_lastDrag);
        m_lastDrag = e->position();
    }
    std::int64_t r, c;
    if (cellAt(e->position(), &r, &c))
        m_view->setHover(r, c);
    else
        m_view->clearHover();
}

void TensorCanvas::mouseReleaseEvent(QMouseEvent* e)
{
    if (e->button() == Qt::LeftButton) {
        m_dragging = false;
        setCursor(Qt::CrossCursor);
    }
}

void TensorCanvas::leaveEvent(QEvent*)
{
    m_view->clearHover();
}

} // namespace kf::ui
