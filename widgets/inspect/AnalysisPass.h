#pragma once
// Runs the data pass (analyseTensor) and the slice summaries on a worker pool and hands the
// results back on the GUI thread, tagged with a generation: starting a newer pass stops the
// older one and its result is never delivered (hotspot's stale-result rule).

#include "widgets/inspect/OutputAnalysis.h"

#include <QObject>

#include <atomic>
#include <memory>

class QThreadPool;

namespace kf::ui {

class CaseData;

/// GUI thread only. `pool` must outlive this object's jobs: its owner waits for it before
/// destroying this object.
class AnalysisPass : public QObject {
    Q_OBJECT

public:
    explicit AnalysisPass(QThreadPool* pool, QObject* parent = nullptr);

    /// Starts the pass over output `output` (or input tensor `tensor` when output is -1).
    /// Returns its generation; progress() and finished() carry it.
    quint64 start(std::shared_ptr<const CaseData> data, int output, int tensor);
    /// Computes the row and column maxima of `slice`; summaryReady() carries the generation.
    quint64 summarise(std::shared_ptr<const TensorAnalysis> analysis, const SliceSpec& slice);
    /// Stops the running pass; nothing more is delivered for it.
    void cancel();
    quint64 generation() const { return m_generation->load(); }
    bool isRunning() const { return m_running; }

signals:
    void progress(quint64 generation, int permille);
    void finished(quint64 generation, std::shared_ptr<const kf::ui::TensorAnalysis> analysis);
    void summaryReady(quint64 generation, std::shared_ptr<const kf::ui::SliceSummary> summary);

private:
    QThreadPool* m_pool;
    std::shared_ptr<std::atomic<std::uint64_t>> m_generation = std::make_shared<std::atomic<std::uint64_t>>(0);
    std::shared_ptr<std::atomic<std::uint64_t>> m_summaryGeneration = std::make_shared<std::atomic<std::uint64_t>>(0);
    bool m_running = false;
};

} // namespace kf::ui
