#include "widgets/inspect/TileSource.h"

#include "widgets/inspect/CaseData.h"
#include "widgets/inspect/Colormaps.h"
#include "widgets/inspect/ElementCode.h"
#include "widgets/inspect/OutputAnalysis.h"

#include <QPainter>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <vector>

namespace kf::ui {

namespace ec = elementcode;
namespace cm = colormaps;

void TileSource::seal(std::uint64_t caseGeneration)
{
    std::uint64_t h = 1469598103934665603ull;
    auto mix = [&h](std::uint64_t v) {
        for (int i = 0; i < 8; ++i) {
            h ^= (v >> (8 * i)) & 0xff;
            h *= 1099511628211ull;
        }
    };
    auto bits = [](double d) {
        std::uint64_t u;
        std::memcpy(&u, &d, sizeof u);
        return u;
    };
    mix(caseGeneration);
    mix(static_cast<std::uint64_t>(kind));
    mix(static_cast<std::uint64_t>(tensor + 1));
    mix(static_cast<std::uint64_t>(output + 1));
    mix(markUnwritten);
    mix(slice.key());
    mix(static_cast<std::uint64_t>(mode));
    mix(bits(lo));
    mix(bits(hi));
    mix(reinterpret_cast<std::uintptr_t>(analysis.get()));
    id = h;
}

namespace {

enum class Mark : std::uint8_t { None, Empty, Hazard, Outside, NonFinite };

struct Painter {
    const TileSource& s;
    const CaseData& d;
    const std::uint8_t* codes;  // null for inputs
    std::int64_t rows, cols, elements, base, rowStride, colStride;

    explicit Painter(const TileSource& src)
        : s(src), d(*src.data), codes(src.analysis->codes.empty() ? nullptr : src.analysis->codes.data()),
          rows(src.slice.rows()), cols(src.slice.cols()), elements(src.slice.elements())
    {
        s.slice.linear(&base, &rowStride, &colStride);
    }

    std::int64_t flat(std::int64_t r, std::int64_t c) const
    {
        const std::int64_t f = base + r * rowStride + c * colStride;
        return f < elements ? f : -1;
    }

    QRgb valueColor(double v) const
    {
        if (std::isnan(v))
            return cm::kNaNValue;
        if (std::isinf(v))
            return v > 0 ? cm::kPosInfValue : cm::kNegInfValue;
        return cm::value(s.hi > s.lo ? (v - s.lo) / (s.hi - s.lo) : 0.5);
    }

    QRgb absColor(std::int64_t f) const
    {
        const double e = d.verdict(s.output, f).absError;
        if (!(e > 0))
            return cm::absError(0);
        return cm::absError(s.hi > s.lo ? (std::log10(e) - s.lo) / (s.hi - s.lo) : 1.0);
    }

    /// The colour of an element (or of a block whose worst element is `f` with `code`).
    QRgb color(std::int64_t f, std::uint8_t code, Mark* mark) const
    {
        *mark = Mark::None;
        if (s.kind == TileSource::Kind::Value) {
            if (s.markUnwritten && codes && code == ec::kUnwritten) {
                *mark = Mark::Hazard;
                return 0;
            }
            return valueColor(d.value(s.tensor, f));
        }
        switch (ec::classOf(code)) {
        case ElementClass::Unwritten: *mark = Mark::Hazard; return 0;
        case ElementClass::NonFinite: *mark = Mark::NonFinite; return cm::kNonFinite;
        case ElementClass::OutsideTolerance:
            *mark = Mark::Outside;
            return s.mode == DiffMode::Ratio ? cm::ratioCode(code) : cm::kOutside;
        case ElementClass::Ok: break;
        }
        return s.mode == DiffMode::Ratio ? cm::ratioCode(code) : absColor(f);
    }

    std::uint8_t code(std::int64_t f) const { return codes ? codes[f] : 0; }
};

struct CellMark {
    int x, y;
    Mark mark;
};

void drawMarks(QImage& img, const std::vector<CellMark>& marks, int n)
{
    if (marks.empty())
        return;
    QPainter p(&img);
    const int w = n >= 32 ? 2 : 1;
    for (const CellMark& m : marks) {
        if (m.mark == Mark::Outside) {
            p.setRenderHint(QPainter::Antialiasing, false);
            p.setPen(Qt::NoPen);
            p.setBrush(QColor(cm::kOutline));
            // A frame of width w inside the cell, drawn as four bars: exact pixels at any size.
            p.drawRect(m.x, m.y, n, w);
            p.drawRect(m.x, m.y + n - w, n, w);
            p.drawRect(m.x, m.y, w, n);
            p.drawRect(m.x + n - w, m.y, w, n);
        } else if (m.mark == Mark::NonFinite) {
            p.setRenderHint(QPainter::Antialiasing, true);
            p.setPen(QPen(QColor(cm::kCross), std::max(1.5, n / 8.0), Qt::SolidLine, Qt::RoundCap));
            const double in = n * 0.22;
            p.drawLine(QPointF(m.x + in, m.y + in), QPointF(m.x + n - in, m.y + n - in));
            p.drawLine(QPointF(m.x + n - in, m.y + in), QPointF(m.x + in, m.y + n - in));
        }
    }
}

QImage magnified(const Painter& pt, int level, std::int64_t tx, std::int64_t ty)
{
    const int T = TileSource::kTileSize;
    const int n = 1 << -level;
    const int per = T / n;
    QImage img(T, T, QImage::Format_ARGB32_Premultiplied);
    img.fill(Qt::transparent);
    const std::int64_t r0 = ty * per, c0 = tx * per;
    const int nr = static_cast<int>(std::clamp<std::int64_t>(pt.rows - r0, 0, per));
    const int nc = static_cast<int>(std::clamp<std::int64_t>(pt.cols - c0, 0, per));
    std::vector<QRgb> colors(static_cast<size_t>(nc));
    std::vector<Mark> kinds(static_cast<size_t>(nc));
    std::vector<CellMark> marks;
    for (int i = 0; i < nr; ++i) {
        for (int j = 0; j < nc; ++j) {
            const std::int64_t f = pt.flat(r0 + i, c0 + j);
            if (f < 0) {
                kinds[static_cast<size_t>(j)] = Mark::Empty;
                continue;
            }
            colors[static_cast<size_t>(j)] = pt.color(f, pt.code(f), &kinds[static_cast<size_t>(j)]);
            const Mark m = kinds[static_cast<size_t>(j)];
            if (n >= 8 && (m == Mark::Outside || m == Mark::NonFinite))
                marks.push_back({j * n, i * n, m});
        }
        for (int py = i * n; py < (i + 1) * n; ++py) {
            auto* line = reinterpret_cast<QRgb*>(img.scanLine(py));
            const std::int64_t Y = ty * T + py;
            for (int j = 0; j < nc; ++j) {
                const Mark m = kinds[static_cast<size_t>(j)];
                if (m == Mark::Empty)
                    continue;
                for (int px = j * n; px < (j + 1) * n; ++px)
                    line[px] = m == Mark::Hazard ? cm::hazard(tx * T + px, Y) : colors[static_cast<size_t>(j)];
            }
        }
    }
    drawMarks(img, marks, n);
    return img;
}

// Zoomed out: one pixel per 2^level × 2^level block. The difference pane keeps the worst
// element of the block (codes are ordered so max() is "worst class, then largest ratio"); value
// panes sample the block's middle element.
QImage aggregated(const Painter& pt, int level, std::int64_t tx, std::int64_t ty)
{
    const int T = TileSource::kTileSize;
    const std::int64_t B = std::int64_t(1) << level;
    QImage img(T, T, QImage::Format_ARGB32_Premultiplied);
    img.fill(Qt::transparent);
    const std::int64_t r0 = ty * T * B, c0 = tx * T * B;
    const bool diff = pt.s.kind == TileSource::Kind::Difference;
    for (int py = 0; py < T; ++py) {
        const std::int64_t rs = r0 + py * B;
        if (rs >= pt.rows)
            break;
        const std::int64_t re = std::min(pt.rows, rs + B);
        auto* line = reinterpret_cast<QRgb*>(img.scanLine(py));
        for (int px = 0; px < T; ++px) {
            const std::int64_t cs = c0 + px * B;
            if (cs >= pt.cols)
                break;
            const std::int64_t ce = std::min(pt.cols, cs + B);
            std::int64_t best = -1;
            std::uint8_t bestCode = 0;
            if (diff) {
                for (std::int64_t r = rs; r < re; ++r) {
                    const std::int64_t f0 = pt.flat(r, cs);
                    if (f0 < 0)
                        break;
                    std::int64_t len = ce - cs;
                    if (pt.colStride == 1) {
                        len = std::min(len, pt.elements - f0);
                        const std::uint8_t* p = pt.codes + f0;
                        const std::uint8_t* m = std::max_element(p, p + len);
                        if (best < 0 || *m > bestCode) {
                            bestCode = *m;
                            best = f0 + (m - p);
                        }
                    } else {
                        for (std::int64_t k = 0; k < len; ++k) {
                            const std::int64_t f = f0 + k * pt.colStride;
                            if (best < 0 || pt.codes[f] > bestCode) {
                                bestCode = pt.codes[f];
                                best = f;
                            }
                        }
                    }
                }
            } else {
                best = pt.flat(rs + (re - rs) / 2, cs + (ce - cs) / 2);
                if (best < 0)
                    best = pt.flat(rs, cs);
                if (best >= 0)
                    bestCode = pt.code(best);
            }
            if (best < 0)
                continue;
            Mark mark;
            const QRgb c = pt.color(best, bestCode, &mark);
            line[px] = mark == Mark::Hazard ? cm::hazard(tx * T + px, ty * T + py) : c;
        }
    }
    return img;
}

} // namespace

QImage renderTile(const TileSource& s, int level, std::int64_t tx, std::int64_t ty)
{
    if (!s.valid())
        return {};
    const Painter pt(s);
    return level <= 0 ? magnified(pt, level, tx, ty) : aggregated(pt, level, tx, ty);
}

} // namespace kf::ui
