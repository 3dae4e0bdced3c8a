#include "widgets/inspect/AnalysisPass.h"

#include "widgets/inspect/CaseData.h"

#include <QElapsedTimer>
#include <QMetaObject>
#include <QThreadPool>

namespace kf::ui {

AnalysisPass::AnalysisPass(QThreadPool* pool, QObject* parent) : QObject(parent), m_pool(pool) {}

quint64 AnalysisPass::start(std::shared_ptr<const CaseData> data, int output, int tensor)
{
    const quint64 gen = ++*m_generation;
    m_running = true;
    auto genState = m_generation;
    m_pool->start([this, data = std::move(data), output, tensor, gen, genState] {
        QElapsedTimer throttle;
        throttle.start();
        auto report = [&](int permille) {
            // At most ~20 updates a second: the bar is for people, not a log.
            if (permille < 1000 && throttle.elapsed() < 50)
                return;
            throttle.restart();
            QMetaObject::invokeMethod(this, [this, gen, permille, genState] {
                if (genState->load() == gen)
                    emit progress(gen, permille);
            }, Qt::QueuedConnection);
        };
        auto result = analyseTensor(*data, output, tensor, *genState, gen, report);
        if (!result)
            return;
        QMetaObject::invokeMethod(this, [this, gen, genState, result] {
            if (genState->load() != gen)
                return;
            m_running = false;
            emit finished(gen, result);
        }, Qt::QueuedConnection);
    });
    return gen;
}

quint64 AnalysisPass::summarise(std::shared_ptr<const TensorAnalysis> analysis, const SliceSpec& slice)
{
    const quint64 gen = ++*m_summaryGeneration;
    auto genState = m_summaryGeneration;
    m_pool->start([this, analysis = std::move(analysis), slice, gen, genState] {
        if (genState->load() != gen)
            return;
        auto summary = summariseSlice(*analysis, slice);
        QMetaObject::invokeMethod(this, [this, gen, genState, summary] {
            if (genState->load() == gen)
                emit summaryReady(gen, summary);
        }, Qt::QueuedConnection);
    });
    return gen;
}

void AnalysisPass::cancel()
{
    ++*m_generation;
    ++*m_summaryGeneration;
    m_running = false;
}

} // namespace kf::ui
