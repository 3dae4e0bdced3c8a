#include "widgets/inspect/OutputAnalysis.h"

#include "engine/protocol/VerifyReport.h"

#include "widgets/inspect/CaseData.h"
#include "widgets/inspect/ElementCode.h"

#include <QStringList>

#include <algorithm>
#include <cmath>
#include <limits>

namespace kf::ui {

namespace {

constexpr std::int64_t kChunk = 1 << 16;

void widen(double v, double& lo, double& hi, bool& any)
{
    if (!std::isfinite(v))
        return;
    if (!any) {
        lo = hi = v;
        any = true;
    } else {
        lo = std::min(lo, v);
        hi = std::max(hi, v);
    }
}

QString compareWithCheck(const TensorAnalysis& a, const nlohmann::json& checkJson)
{
    // The runner's record of this output, read as any report is; an unreadable one compares nothing.
    auto check = kf::protocol::outputCheckFromJson(checkJson);
    if (!check)
        return {};
    QStringList diffs;
    auto compare = [&](const char* what, std::int64_t theirs, std::int64_t ours) {
        if (theirs != ours)
            diffs << QStringLiteral("%1: report %2, files %3").arg(QLatin1String(what)).arg(theirs).arg(ours);
    };
    compare("mismatches", check->mismatches, a.mismatches());
    compare("unwritten", check->unwritten, a.unwritten);
    compare("non-finite mismatches", check->nonFiniteMismatches, a.nonFinite);
    return diffs.join(QStringLiteral("; "));
}

} // namespace

std::shared_ptr<const TensorAnalysis> analyseTensor(const CaseData& data, int output, int tensor,
                                                    const std::atomic<std::uint64_t>& generation,
                                                    std::uint64_t myGeneration, const ProgressFn& progress)
{
    auto a = std::make_shared<TensorAnalysis>();
    a->output = output;
    a->tensor = output >= 0 ? data.outputs()[static_cast<size_t>(output)].expected : tensor;
    const CaseData::Tensor& t = data.tensors()[static_cast<size_t>(a->tensor)];
    const std::int64_t n = t.elements;
    bool anyValue = false, anyAbs = false;
    double absLo = 0, absHi = 0;
    std::vector<double> buf(static_cast<size_t>(std::min(n, kChunk)));
    if (output >= 0)
        a->codes.resize(static_cast<size_t>(n));
    int lastPermille = -1;
    for (std::int64_t start = 0; start < n; start += kChunk) {
        if (generation.load(std::memory_order_relaxed) != myGeneration)
            return nullptr;
        const std::int64_t end = std::min(n, start + kChunk);
        if (output < 0) {
            toDouble(t.dtype, t.npy.element(start), end - start, buf.data());
            for (std::int64_t i = 0; i < end - start; ++i)
                widen(buf[static_cast<size_t>(i)], a->valueMin, a->valueMax, anyValue);
        } else {
            for (std::int64_t i = start; i < end; ++i) {
                const double e = data.expected(output, i);
                widen(e, a->valueMin, a->valueMax, anyValue);
                const ElementVerdict v = data.verdict(output, i);
                a->histogram.add(v);
                a->codes[static_cast<size_t>(i)] = elementcode::encode(v);
                switch (v.cls) {
                case ElementClass::Ok: break;
                case ElementClass::OutsideTolerance: ++a->outside; break;
                case ElementClass::NonFinite: ++a->nonFinite; break;
                case ElementClass::Unwritten: ++a->unwritten; break;
                }
                // The |error| colours are for elements within tolerance; the others are marked.
                if (v.cls == ElementClass::Ok && v.absError > 0 && std::isfinite(v.absError))
                    widen(v.absError, absLo, absHi, anyAbs);
                if (std::isfinite(v.ratio))
                    a->ratioMax = std::max(a->ratioMax, v.ratio);
            }
        }
        const int permille = static_cast<int>(1000 * end / std::max<std::int64_t>(n, 1));
        if (progress && permille / 10 != lastPermille / 10) {
            lastPermille = permille;
            progress(permille);
        }
    }
    a->absMin = absLo;
    a->absMax = absHi;
    if (output >= 0)
        a->disagreement = compareWithCheck(*a, data.check(output));
    return a;
}

std::shared_ptr<const SliceSummary> summariseSlice(const TensorAnalysis& a, const SliceSpec& slice)
{
    auto s = std::make_shared<SliceSummary>();
    s->sliceKey = slice.key();
    const std::int64_t rows = slice.rows(), cols = slice.cols();
    s->rowMax.assign(static_cast<size_t>(rows), 0);
    s->colMax.assign(static_cast<size_t>(cols), 0);
    s->rowArg.assign(static_cast<size_t>(rows), -1);
    s->colArg.assign(static_cast<size_t>(cols), -1);
    if (a.codes.empty())
        return s;
    for (std::int64_t r = 0; r < rows; ++r) {
        for (std::int64_t c = 0; c < cols; ++c) {
            const std::int64_t f = slice.flat(r, c);
            if (f < 0)
                continue;
            const std::uint8_t code = a.codes[static_cast<size_t>(f)];
            auto& rm = s->rowMax[static_cast<size_t>(r)];
            auto& cm = s->colMax[static_cast<size_t>(c)];
            if (code > rm || s->rowArg[static_cast<size_t>(r)] < 0) {
                rm = code;
                s->rowArg[static_cast<size_t>(r)] = f;
            }
            if (code > cm || s->colArg[static_cast<size_t>(c)] < 0) {
                cm = code;
                s->colArg[static_cast<size_t>(c)] = f;
            }
        }
    }
    return s;
}

} // namespace kf::ui
