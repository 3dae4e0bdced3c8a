#include "widgets/cast/ModelRunView.h"

#include "engine/cast/CastPackage.h"
#include "engine/cast/ModelRuns.h"
#include "engine/core/JsonReader.h"
#include "widgets/common/StatusColors.h"

#include <QBarCategoryAxis>
#include <QBoxPlotSeries>
#include <QBoxSet>
#include <QChart>
#include <QChartView>
#include <QHeaderView>
#include <QLabel>
#include <QSplitter>
#include <QTableWidget>
#include <QValueAxis>
#include <QVBoxLayout>

#include <algorithm>

namespace kf::ui {

namespace {

using Json = nlohmann::json;

QString qs(const std::string& s) { return QString::fromStdString(s); }

QString str(const Json& j, const char* key) { return j.contains(key) && j[key].is_string() ? qs(j[key].get<std::string>()) : QString(); }

QString error(const Json& o, const char* key)
{
    if (!o.contains(key))
        return QStringLiteral("–");
    const Json& e = o[key];
    QString text = QStringLiteral("max %1, rms %2").arg(e["max_abs"].get<double>(), 0, 'g', 3).arg(e["rms"].get<double>(), 0, 'g', 3);
    if (!e["finite_alike"].get<bool>())
        text += QObject::tr(" — NON-FINITE DIFFERS");
    return text;
}

QTableWidgetItem* item(const QString& text)
{
    auto* i = new QTableWidgetItem(text);
    i->setFlags(i->flags() & ~Qt::ItemIsEditable);
    return i;
}

QTableWidget* table(const QStringList& headers, QWidget* parent)
{
    auto* t = new QTableWidget(0, int(headers.size()), parent);
    t->setHorizontalHeaderLabels(headers);
    t->verticalHeader()->hide();
    t->horizontalHeader()->setStretchLastSection(true);
    t->setSelectionBehavior(QAbstractItemView::SelectRows);
    t->setAlternatingRowColors(true);
    return t;
}

QBoxSet* boxOf(const Json& t, const QString& label)
{
    auto* b = new QBoxSet(label);
    b->setValue(QBoxSet::LowerExtreme, t["min"].get<double>());
    b->setValue(QBoxSet::LowerQuartile, t["p10"].get<double>());
    b->setValue(QBoxSet::Median, t["median"].get<double>());
    b->setValue(QBoxSet::UpperQuartile, t["p90"].get<double>());
    b->setValue(QBoxSet::UpperExtreme, t["max"].get<double>());
    return b;
}

} // namespace

ModelRunView::ModelRunView(QWidget* parent) : QWidget(parent)
{
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    m_summary = new QLabel(this);
    m_summary->setWordWrap(true);
    m_summary->setTextFormat(Qt::RichText);
    m_summary->setTextInteractionFlags(Qt::TextSelectableByMouse);
    layout->addWidget(m_summary);

    auto* split = new QSplitter(Qt::Horizontal, this);
    m_sites = table({tr("Op"), tr("Node"), tr("Status"), tr("Kernel / why not")}, split);
    auto* c = new QChart;
    c->setMargins(QMargins(4, 4, 4, 4));
    c->setBackgroundRoundness(0);
    c->setTitle(tr("Time per pass (box p10–p90, whiskers min–max)"));
    c->legend()->hide();
    m_boxes = new QBoxPlotSeries(c);
    c->addSeries(m_boxes);
    auto* x = new QBarCategoryAxis(c);
    m_y = new QValueAxis(c);
    m_y->setTitleText(tr("ms per pass, end to end"));
    m_y->setLabelFormat(QStringLiteral("%.3f"));
    c->addAxis(x, Qt::AlignBottom);
    c->addAxis(m_y, Qt::AlignLeft);
    m_boxes->attachAxis(x);
    m_boxes->attachAxis(m_y);
    m_chart = new QChartView(c, split);
    m_chart->setRenderHint(QPainter::Antialiasing);
    m_chart->setMinimumSize(420, 240);
    split->addWidget(m_sites);
    split->addWidget(m_chart);
    split->setStretchFactor(0, 1);
    split->setStretchFactor(1, 1);
    layout->addWidget(split, 1);

    m_checkNote = new QLabel(this);
    m_checkNote->setWordWrap(true);
    layout->addWidget(m_checkNote);
    m_checks = table({tr("Output"), tr("dtype, shape"), tr("kernels vs original"), tr("kernels vs fp64"), tr("original vs fp64")}, this);
    m_checks->setMaximumHeight(140);
    layout->addWidget(m_checks);
    clear(tr("No model run yet: choose a package and a model, then Run."));
}

void ModelRunView::clear(const QString& text)
{
    m_summary->setText(text.toHtmlEscaped());
    m_sites->setRowCount(0);
    m_checks->setRowCount(0);
    m_checkNote->clear();
    m_boxes->clear();
}

bool ModelRunView::setEvidence(const Json& run)
{
    try {
        const bool named = run.is_object() && run.contains("model") && run["model"].is_string();
        kf::cast::checkModelRun(run, "", named ? run["model"].get<std::string>() : std::string());
    } catch (const kf::json::SchemaError& e) {
        clear(tr("Not a model run's evidence: %1 %2").arg(qs(e.pointer), qs(e.message)));
        return false;
    }
    clear({});
    showSummary(run);
    showSites(run);
    showTimes(run);
    showChecks(run);
    return true;
}

// The summary: what ran where, the end-to-end speedup, the substitution and the fallbacks.
void ModelRunView::showSummary(const Json& run)
{
    const QString gpu = str(run, "gpu").isEmpty() ? tr("CPU") : str(run, "gpu");
    const kf::cast::RunTally tally = kf::cast::tallyOf(run);
    QString fallbacks;
    for (const auto& [op, n] : run["fallbacks"].items())
        fallbacks += (fallbacks.isEmpty() ? QString() : QStringLiteral(", ")) +
                     tr("cast::%1 fell back %2 time(s)").arg(qs(op)).arg(n.get<std::int64_t>());
    QString speed = tr("not measured (run without kernels only)");
    if (run["speedup"].is_number())
        speed = QStringLiteral("<b>%1×</b>").arg(run["speedup"].get<double>(), 0, 'f', 3);
    if (tally.substituted == 0 && run["speedup"].is_number())
        speed += tr(" — no call site was substituted, so both runs are the same model: this is noise");
    const QString warn = warningColor(palette()).name();
    const QString fallbackText =
        fallbacks.isEmpty() ? tr("no fallback")
                            : QStringLiteral("<span style=\"color:%1\"><b>%2</b></span>").arg(warn, fallbacks.toHtmlEscaped());
    // One arg() call: a value from the file that contains "%1" must not pull in the next one.
    m_summary->setText(
        tr("<b>%1</b> from %2 %3 on %4 (%5), torch %6, %7 — recorded %8<br>"
           "End-to-end speedup %9 <i>(model-level, end to end: the whole model's time per pass; the kernels' own "
           "speedups in the registry are op-level microbenchmarks)</i><br>%10 of %11 candidate call sites run packaged "
           "kernels · %12 timed passes after %13 warm-up · %14")
            .arg(str(run, "model").toHtmlEscaped(), str(run["package"], "name").toHtmlEscaped(),
                 str(run["package"], "version").toHtmlEscaped(), gpu.toHtmlEscaped(), str(run, "device").toHtmlEscaped(),
                 str(run, "torch").toHtmlEscaped(), str(run, "runtime").toHtmlEscaped(), str(run, "created_at").toHtmlEscaped(),
                 speed, QString::number(tally.substituted), QString::number(tally.sites),
                 QString::number(run["runs"].get<int>()), QString::number(run["warmup"].get<int>()), fallbackText));
}

// One row per candidate call site: substituted by which op, or kept and why.
void ModelRunView::showSites(const Json& run)
{
    for (const Json& s : run["substitution"]) {
        const int row = m_sites->rowCount();
        m_sites->insertRow(row);
        const bool sub = s["status"] == "substituted";
        m_sites->setItem(row, 0, item(str(s, "op")));
        m_sites->setItem(row, 1, item(str(s, "node")));
        auto* status = item(sub ? tr("substituted") : tr("kept"));
        if (sub)
            status->setForeground(QColor(0x3f, 0xb9, 0x50));
        m_sites->setItem(row, 2, status);
        m_sites->setItem(row, 3, item(sub ? QStringLiteral("cast::") + str(s, "cast_op") : str(s, "reason")));
        m_sites->item(row, 3)->setToolTip(m_sites->item(row, 3)->text());
    }
    m_sites->resizeColumnsToContents();
}

// The box plot of the timed passes with and without the kernels.
void ModelRunView::showTimes(const Json& run)
{
    double top = 0, bottom = 0;
    QStringList categories;
    for (auto [key, label] : {std::pair{"with_kernels_ms", tr("with kernels")}, {"without_kernels_ms", tr("without kernels")}}) {
        if (!run.contains(key) || !run[key].is_object())
            continue;
        QBoxSet* box = boxOf(run[key], label);
        box->setBrush(key == std::string("with_kernels_ms") ? QColor(0x3f, 0xb9, 0x50) : QColor(0x8c, 0x8f, 0x94));
        m_boxes->append(box);
        categories << label;
        top = std::max(top, run[key]["max"].get<double>());
        bottom = categories.size() == 1 ? run[key]["min"].get<double>() : std::min(bottom, run[key]["min"].get<double>());
    }
    if (auto* x = qobject_cast<QBarCategoryAxis*>(m_boxes->attachedAxes().value(0)))
        x->setCategories(categories);
    // Zoomed to the data (the axis labels say where it starts): from zero, a 4 % difference is invisible.
    const double pad = std::max((top - bottom) * 0.25, top * 0.01);
    m_y->setRange(std::max(0.0, bottom - pad), top > 0 ? top + pad : 1.0);
}

// The outputs compared with the unsubstituted model and fp64, when the run checked them.
void ModelRunView::showChecks(const Json& run)
{
    if (run["check"].is_object()) {
        m_checkNote->setText(tr("Outputs compared with the unsubstituted model and an fp64 run (%1).").arg(str(run["check"], "fp64")));
        for (const Json& o : run["check"]["outputs"]) {
            const int row = m_checks->rowCount();
            m_checks->insertRow(row);
            m_checks->setItem(row, 0, item(QString::number(o["index"].get<int>())));
            m_checks->setItem(row, 1, item(str(o, "dtype") + QLatin1Char(' ') + qs(o["shape"].dump())));
            m_checks->setItem(row, 2, item(error(o, "kernels_vs_original")));
            m_checks->setItem(row, 3, item(error(o, "kernels_vs_fp64")));
            m_checks->setItem(row, 4, item(error(o, "original_vs_fp64")));
        }
        m_checks->resizeColumnsToContents();
    } else {
        m_checkNote->setText(tr("Outputs were not compared (run with Check)."));
    }
}

} // namespace kf::ui
