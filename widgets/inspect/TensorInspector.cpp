#include "widgets/inspect/TensorInspector.h"

#include "widgets/inspect/AnalysisPass.h"
#include "widgets/inspect/CaseData.h"
#include "widgets/inspect/CaseTensorsModel.h"
#include "widgets/inspect/ColorLegend.h"
#include "widgets/inspect/ElementCode.h"
#include "widgets/inspect/ElementText.h"
#include "widgets/inspect/ErrorHistogramView.h"
#include "widgets/inspect/MismatchListModel.h"
#include "widgets/inspect/SliceControls.h"
#include "widgets/inspect/TensorCanvas.h"
#include "widgets/inspect/TensorViewport.h"
#include "widgets/inspect/TileRenderer.h"

#include <QComboBox>
#include <QDir>
#include <QLabel>
#include <QProgressBar>
#include <QPushButton>
#include <QStackedWidget>
#include <QTableView>
#include <QThread>
#include <QThreadPool>

#include <cmath>

namespace kf::ui {

namespace et = elementtext;

TensorInspector::TensorInspector(QWidget* parent) : QWidget(parent)
{
    m_tilePool = new QThreadPool(this);
    m_tilePool->setMaxThreadCount(std::max(1, QThread::idealThreadCount()));
    m_analysisPool = new QThreadPool(this);
    m_analysisPool->setMaxThreadCount(1);
    m_view = new TensorViewport(this);
    m_renderer = new TileRenderer(m_tilePool, this);
    m_pass = new AnalysisPass(m_analysisPool, this);
    m_mismatches = new MismatchListModel(this);
    m_tensors = new CaseTensorsModel(this);
    m_histogram = new ErrorHistogramView(this);
    buildUi();

    connect(m_pass, &AnalysisPass::progress, this, [this](quint64 gen, int permille) {
        if (gen == m_passGeneration)
            m_progress->setValue(permille);
    });
    connect(m_pass, &AnalysisPass::finished, this, &TensorInspector::onAnalysed);
    connect(m_pass, &AnalysisPass::summaryReady, this, [this](quint64, std::shared_ptr<const SliceSummary> s) {
        m_canvases[2]->setSummary(std::move(s));
    });
    connect(m_view, &TensorViewport::sliceChanged, this, [this] {
        m_slice->setSlice(m_view->slice());
        updateSources();
    });
    connect(m_view, &TensorViewport::modeChanged, this, [this] {
        m_modeBox->setCurrentIndex(m_modeBox->findData(static_cast<int>(m_view->mode())));
        updateSources();
    });
    connect(m_view, &TensorViewport::hoverChanged, this, &TensorInspector::updateHover);
    connect(m_canvases[0], &TensorCanvas::resized, this, [this] {
        if (m_fitPending)
            fitView();
    });
    showError(tr("No failing case is open.\n\nDouble-click a failing shape with saved tensors in the results table."));
}

TensorInspector::~TensorInspector()
{
    // Workers hold pointers to the renderer and the pass: stop them before those die.
    m_pass->cancel();
    m_renderer->invalidate();
    m_tilePool->waitForDone();
    m_analysisPool->waitForDone();
}

QString TensorInspector::caseDir() const
{
    return m_data ? m_data->dir() : QString();
}

void TensorInspector::showError(const QString& message)
{
    m_error = message;
    m_errorLabel->setText(message);
    m_pages->setCurrentIndex(0);
}

bool TensorInspector::openCase(const QString& caseDir, const QString& output)
{
    m_pass->cancel();
    m_renderer->invalidate();
    m_data.reset();
    m_analysis.reset();
    m_mismatches->setSource(nullptr, nullptr);
    m_tensors->setCase(nullptr);
    for (TensorCanvas* c : m_canvases)
        c->setSource(nullptr);
    auto loaded = CaseData::load(caseDir);
    if (!loaded) {
        showError(tr("Cannot open the failing case in %1.\n\n%2")
                      .arg(QDir::toNativeSeparators(caseDir), QString::fromStdString(loaded.error().message())));
        return false;
    }
    auto data = std::move(loaded).value();
    if (data->outputs().empty()) {
        showError(tr("The case in %1 lists no outputs to inspect (case.json has an empty \"outputs\"). "
                     "Re-run the failing shape with tensors saved.").arg(QDir::toNativeSeparators(caseDir)));
        return false;
    }
    const int o = output.isEmpty() ? 0 : data->outputIndex(output);
    if (o < 0) {
        QStringList names;
        for (const auto& out : data->outputs())
            names << out.name;
        showError(tr("The case in %1 has no output named '%2'; it has %3.")
                      .arg(QDir::toNativeSeparators(caseDir), output, names.join(QStringLiteral(", "))));
        return false;
    }
    m_data = std::move(data);
    ++m_caseGeneration;
    m_error.clear();
    m_pages->setCurrentIndex(1);

    const CaseInfo& info = m_data->info();
    m_title->setText(tr("%1 · %2 · shape %3 · %4 · trial %5 · seed %6")
                         .arg(QString::fromStdString(info.taskName), QString::fromStdString(info.candidateFile),
                              QString::fromStdString(info.shape.label.empty() ? info.shape.describe()
                                                                              : info.shape.label + " (" + info.shape.describe() + ")"),
                              QString::fromStdString(info.set))
                         .arg(info.trial)
                         .arg(QString::fromStdString(info.seed)));
    m_failure->setText(QString::fromStdString(info.failure));
    m_failure->setVisible(!info.failure.empty());
    m_tensors->setCase(m_data);
    m_tensorBox->clear();
    for (const auto& out : m_data->outputs())
        m_tensorBox->addItem(tr("%1 — output %2").arg(out.name, et::index(out.extents)), out.name);
    for (const auto& t : m_data->tensors())
        if (t.role == CaseTensor::Role::Input)
            m_tensorBox->addItem(tr("%1 — input %2").arg(t.name, et::index(t.extents)), t.name);
    selectTensor(o, -1);
    return true;
}

bool TensorInspector::showTensor(const QString& name)
{
    if (!m_data)
        return false;
    if (const int o = m_data->outputIndex(name); o >= 0) {
        selectTensor(o, -1);
        return true;
    }
    for (size_t i = 0; i < m_data->tensors().size(); ++i)
        if (m_data->tensors()[i].role == CaseTensor::Role::Input && m_data->tensors()[i].name == name) {
            selectTensor(-1, static_cast<int>(i));
            return true;
        }
    return false;
}

void TensorInspector::selectTensor(int output, int input)
{
    m_output = output;
    m_input = input;
    m_analysis.reset();
    m_cursor = -1;
    m_view->setFocus(-1);
    m_mismatches->setSource(nullptr, nullptr);
    m_histogram->clear();
    m_warning->hide();
    const QString name = output >= 0 ? m_data->outputs()[static_cast<size_t>(output)].name
                                     : m_data->tensors()[static_cast<size_t>(input)].name;
    m_tensorBox->setCurrentIndex(m_tensorBox->findData(name));
    const bool isOutput = output >= 0;
    m_paneBoxes[1]->setVisible(isOutput);
    m_paneBoxes[2]->setVisible(isOutput);
    m_diffLegend->setVisible(isOutput);
    m_modeBox->setEnabled(isOutput);
    m_prev->setEnabled(isOutput);
    m_next->setEnabled(isOutput);
    // Beside LibTorch's own result the expected tensor is the float64 golden result.
    const bool golden = isOutput && m_data->outputs()[static_cast<size_t>(output)].libtorch >= 0;
    m_paneTitles[0]->setText(!isOutput ? tr("Input %1").arg(name)
                             : golden  ? tr("Golden (float64 reference)")
                                       : tr("Reference (expected)"));
    const auto& extents = isOutput ? m_data->outputs()[static_cast<size_t>(output)].extents
                                   : m_data->tensors()[static_cast<size_t>(input)].extents;
    const std::int64_t wrap = m_view->slice().rank() == 1 ? m_view->slice().wrap : 1024;
    m_view->setSlice(SliceSpec::defaultFor(extents, wrap));
    m_fitPending = true;
    fitView();
    for (TensorCanvas* c : m_canvases) {
        c->setSource(nullptr);
        c->setSummary(nullptr);
        c->setPlaceholder(tr("Judging every element…"));
    }
    m_progress->setValue(0);
    m_progress->show();
    setStatus(tr("Reading %1…").arg(name));
    m_passGeneration = m_pass->start(m_data, output, input);
}

void TensorInspector::onAnalysed(quint64 generation, std::shared_ptr<const TensorAnalysis> analysis)
{
    if (generation != m_passGeneration)
        return;
    m_analysis = std::move(analysis);
    m_progress->hide();
    if (m_output >= 0) {
        const TensorAnalysis& a = *m_analysis;
        m_histogram->setHistogram(a.histogram);
        m_mismatches->setSource(m_data, m_analysis);
        m_warning->setVisible(!a.disagreement.isEmpty());
        m_warning->setText(tr("The saved tensors and the report disagree (%1). The files may have been edited or come "
                              "from another run; the panes show what the files hold.").arg(a.disagreement));
        const auto& out = m_data->outputs()[static_cast<size_t>(m_output)];
        setStatus(tr("%1 of %2 elements fail: %3 outside tolerance, %4 NaN/Inf mismatches, %5 never written · "
                     "atol %6, rtol %7")
                      .arg(a.mismatches())
                      .arg(out.elements)
                      .arg(a.outside)
                      .arg(a.nonFinite)
                      .arg(a.unwritten)
                      .arg(et::shortNumber(out.atol), et::shortNumber(out.rtol)));
    } else {
        setStatus(tr("Input: values from %1 to %2").arg(et::number(m_analysis->valueMin), et::number(m_analysis->valueMax)));
    }
    updateSources();
    emit analysisFinished();
}

void TensorInspector::updateSources()
{
    if (!m_analysis || !m_data)
        return;
    const TensorAnalysis& a = *m_analysis;
    auto make = [&](TileSource::Kind kind, int tensor, bool stripes) {
        auto s = std::make_shared<TileSource>();
        s->kind = kind;
        s->data = m_data;
        s->analysis = m_analysis;
        s->tensor = tensor;
        s->output = m_output;
        s->markUnwritten = stripes;
        s->slice = m_view->slice();
        s->mode = m_view->mode();
        if (kind == TileSource::Kind::Value) {
            s->lo = a.valueMin;
            s->hi = a.valueMax;
        } else if (s->mode == DiffMode::AbsError) {
            s->lo = a.absMin > 0 ? std::log10(a.absMin) : 0;
            s->hi = a.absMax > 0 ? std::log10(a.absMax) : 0;
        }
        s->seal(m_caseGeneration);
        return std::shared_ptr<const TileSource>(std::move(s));
    };
    if (m_output < 0) {
        m_canvases[0]->setSource(make(TileSource::Kind::Value, m_input, false));
    } else {
        const auto& out = m_data->outputs()[static_cast<size_t>(m_output)];
        m_canvases[0]->setSource(make(TileSource::Kind::Value, out.expected, false));
        m_canvases[1]->setSource(make(TileSource::Kind::Value, out.actual, true));
        m_canvases[2]->setSource(make(TileSource::Kind::Difference, -1, false));
        m_pass->summarise(m_analysis, m_view->slice());
    }
    updateLegends();
    updateHover();
}

void TensorInspector::updateLegends()
{
    if (!m_analysis)
        return;
    m_valueLegend->setSpec(LegendSpec::values(m_analysis->valueMin, m_analysis->valueMax, m_output >= 0));
    if (m_view->mode() == DiffMode::Ratio) {
        m_diffLegend->setSpec(LegendSpec::ratio());
    } else {
        const TileSource* s = m_canvases[2]->source();
        m_diffLegend->setSpec(LegendSpec::absError(s ? s->lo : 0, s ? s->hi : 0));
    }
}

void TensorInspector::setDiffMode(DiffMode mode)
{
    m_view->setMode(mode);
}

QString TensorInspector::hoverText() const
{
    return m_hover->text();
}

void TensorInspector::updateHover()
{
    if (!m_data || !m_view->hasHover()) {
        m_hover->setText(tr("Hover over a cell for its values · wheel zooms · drag pans · F8 / Shift+F8: next / previous mismatch"));
        return;
    }
    const SliceSpec& sl = m_view->slice();
    const std::int64_t flat = sl.flat(m_view->hoverRow(), m_view->hoverCol());
    if (flat < 0) {
        m_hover->clear();
        return;
    }
    const QString where = et::index(sl.index(flat));
    if (m_output < 0) {
        m_hover->setText(tr("%1  value %2").arg(where, et::number(m_data->value(m_input, flat))));
        return;
    }
    const double e = m_data->expected(m_output, flat);
    const ElementVerdict v = m_data->verdict(m_output, flat);
    const bool unwritten = v.cls == ElementClass::Unwritten;
    m_hover->setText(tr("%1  ref %2  cand %3  abs %4  rel %5  ratio %6  %7")
                         .arg(where, et::number(e), unwritten ? tr("never written") : et::number(v.actual),
                              unwritten ? QStringLiteral("—") : et::shortNumber(v.absError),
                              unwritten ? QStringLiteral("—") : et::shortNumber(et::relError(e, v)),
                              unwritten ? QStringLiteral("—") : et::shortNumber(v.ratio), et::className(v.cls)));
}

void TensorInspector::next()
{
    step(true);
}

void TensorInspector::previous()
{
    step(false);
}

void TensorInspector::step(bool forward)
{
    if (!m_analysis || m_output < 0)
        return;
    const auto& codes = m_analysis->codes;
    const auto n = static_cast<std::int64_t>(codes.size());
    if (m_analysis->mismatches() == 0) {
        setStatus(tr("No mismatches in this output."));
        return;
    }
    auto bad = [&](std::int64_t i) { return elementcode::isMismatch(codes[static_cast<size_t>(i)]); };
    std::int64_t found = -1;
    if (forward) {
        for (std::int64_t i = m_cursor + 1; i < n && found < 0; ++i)
            if (bad(i))
                found = i;
    } else {
        for (std::int64_t i = (m_cursor < 0 ? n : m_cursor) - 1; i >= 0 && found < 0; --i)
            if (bad(i))
                found = i;
    }
    bool wrapped = false;
    if (found < 0) {
        wrapped = true;
        if (forward) {
            for (std::int64_t i = 0; i < n && found < 0; ++i)
                if (bad(i))
                    found = i;
        } else {
            for (std::int64_t i = n - 1; i >= 0 && found < 0; --i)
                if (bad(i))
                    found = i;
        }
    }
    goTo(found);
    if (wrapped && m_cursor >= 0)
        setStatus((forward ? tr("Wrapped to the first mismatch: ") : tr("Wrapped to the last mismatch: ")) + statusText());
}

void TensorInspector::goTo(std::int64_t flat)
{
    if (!m_data || flat < 0 || flat >= m_view->slice().elements())
        return;
    SliceSpec s = m_view->slice();
    std::int64_t row = 0, col = 0;
    s.moveTo(flat, &row, &col);
    m_view->setSlice(s);
    m_view->centreOn(row, col, 8.0);
    m_view->setFocus(flat);
    m_cursor = flat;
    const int listRow = m_output >= 0 ? m_mismatches->rowOf(flat) : -1;
    if (listRow >= 0) {
        m_mismatchView->selectRow(listRow);
        m_mismatchView->scrollTo(m_mismatches->index(listRow, 0));
    }
    const QString where = et::index(s.index(flat));
    if (listRow >= 0 && m_analysis)
        setStatus(tr("Mismatch %1 of %2 at %3 (%4)")
                      .arg(listRow + 1)
                      .arg(m_analysis->mismatches())
                      .arg(where, et::className(m_data->verdict(m_output, flat).cls)));
    else
        setStatus(tr("Element %1").arg(where));
}

void TensorInspector::fitView()
{
    const QSize size = m_canvases[0]->imageRect().size();
    if (!m_canvases[0]->isVisible() || size.width() < 16 || size.height() < 16)
        return;
    m_fitPending = false;
    m_view->fit(QSizeF(size));
}

void TensorInspector::setStatus(const QString& text)
{
    m_status->setText(text);
}

QString TensorInspector::statusText() const
{
    return m_status->text();
}

QString TensorInspector::warningText() const
{
    return m_warning->isHidden() ? QString() : m_warning->text();
}

TensorCanvas* TensorInspector::pane(Pane p) const
{
    return m_canvases[static_cast<int>(p)];
}

} // namespace kf::ui
