#include "widgets/registry/ExportCastDialog.h"

#include "engine/cast/CastExport.h"

#include <QCheckBox>
#include <QComboBox>
#include <QDialogButtonBox>
#include <QDir>
#include <QFileDialog>
#include <QFileInfo>
#include <QFormLayout>
#include <QHeaderView>
#include <QHBoxLayout>
#include <QLabel>
#include <QLineEdit>
#include <QListWidget>
#include <QPushButton>
#include <QSignalBlocker>
#include <QTableWidget>
#include <QVBoxLayout>

namespace kf::ui {

namespace {
QString qs(const std::string& s) { return QString::fromStdString(s); }
// The default targets of `kforge cast export`, then newer ones a user may add.
const char* const kArchitectures[] = {"sm_80", "sm_86", "sm_89", "sm_90", "sm_100", "sm_120"};
const char* const kDefaultOn[] = {"sm_80", "sm_86", "sm_89", "sm_90"};
} // namespace

ExportCastDialog::ExportCastDialog(const kf::RegistryIndex& index, const QString& current, const QString& folder,
                                   QWidget* parent)
    : QDialog(parent)
{
    setWindowTitle(tr("Export .cast package"));
    auto* layout = new QVBoxLayout(this);
    auto* intro = new QLabel(tr("Compiles the checked versions for every chosen architecture with NVRTC (no GPU needed) "
                                "and packs them with their sources and evidence. PyTorch programs load the package "
                                "with <code>kernelforge_cast.load()</code>; LibTorch programs with <code>kf_cast::load()</code>."),
                             this);
    intro->setWordWrap(true);
    layout->addWidget(intro);

    const std::string firstOp = buildVersions(index, current);
    auto* form = new QFormLayout;
    form->addRow(tr("Versions"), m_versions);
    buildTargets(form);
    buildOutput(form, QDir(folder).filePath(qs(firstOp.empty() ? "kernels" : firstOp) + ".cast"));
    buildModels(form);
    layout->addLayout(form);

    m_problem = new QLabel(this);
    m_problem->setWordWrap(true);
    m_problem->setStyleSheet(QStringLiteral("color: #d9822b"));
    layout->addWidget(m_problem);
    m_buttons = new QDialogButtonBox(QDialogButtonBox::Ok | QDialogButtonBox::Cancel, this);
    m_buttons->button(QDialogButtonBox::Ok)->setText(tr("Export"));
    layout->addWidget(m_buttons);

    connect(m_buttons, &QDialogButtonBox::accepted, this, &QDialog::accept);
    connect(m_buttons, &QDialogButtonBox::rejected, this, &QDialog::reject);
    connect(m_versions, &QListWidget::itemChanged, this, &ExportCastDialog::update);
    connect(m_output, &QLineEdit::textChanged, this, &ExportCastDialog::update);
    connect(m_ptx, &QComboBox::currentIndexChanged, this, &ExportCastDialog::update);
    connect(m_models, &QTableWidget::itemChanged, this, &ExportCastDialog::update);
    connect(m_models, &QTableWidget::itemSelectionChanged, this, &ExportCastDialog::update);
    resize(760, 560);
    update();
}

// The registry's active versions (and `current`, even deprecated), `current` checked. Returns the
// task name of `current`, for the default file name.
std::string ExportCastDialog::buildVersions(const kf::RegistryIndex& index, const QString& current)
{
    m_versions = new QListWidget(this);
    const kf::RegistryEntry* currentEntry = index.find(current.toStdString());
    std::string firstOp;
    for (const kf::RegistryEntry& e : index.kernels) {
        if (e.deprecated() && !(currentEntry && currentEntry->id == e.id))
            continue;
        auto* item = new QListWidgetItem(QStringLiteral("%1   (%2, %3×)").arg(qs(e.id), qs(e.gpu)).arg(e.geomeanSpeedup, 0, 'f', 2),
                                         m_versions);
        item->setData(Qt::UserRole, qs(e.id));
        item->setFlags(item->flags() | Qt::ItemIsUserCheckable);
        const bool on = qs(e.id) == current;
        item->setCheckState(on ? Qt::Checked : Qt::Unchecked);
        if (on)
            firstOp = e.taskName;
    }
    return firstOp;
}

// The cubin architectures (the export's defaults checked) and the PTX choice.
void ExportCastDialog::buildTargets(QFormLayout* form)
{
    auto* archRow = new QHBoxLayout;
    for (const char* a : kArchitectures) {
        auto* box = new QCheckBox(QString::fromLatin1(a), this);
        box->setChecked(std::find_if(std::begin(kDefaultOn), std::end(kDefaultOn),
                                     [&](const char* d) { return std::string(d) == a; }) != std::end(kDefaultOn));
        m_archs.append(box);
        archRow->addWidget(box);
        connect(box, &QCheckBox::toggled, this, &ExportCastDialog::update);
    }
    archRow->addStretch();
    form->addRow(tr("Cubins for"), archRow);

    m_ptx = new QComboBox(this);
    m_ptx->addItem(tr("PTX of the lowest architecture (reaches later GPUs)"), QString());
    m_ptx->addItem(tr("No PTX"), QStringLiteral("none"));
    for (const char* a : kArchitectures)
        m_ptx->addItem(tr("PTX of %1").arg(QString::fromLatin1(a).replace("sm_", "compute_")),
                       QString::fromLatin1(a).replace("sm_", "compute_"));
    form->addRow(tr("PTX"), m_ptx);
}

// The package file (with Browse…) and its version.
void ExportCastDialog::buildOutput(QFormLayout* form, const QString& file)
{
    auto* outRow = new QHBoxLayout;
    m_output = new QLineEdit(file, this);
    auto* browse = new QPushButton(tr("Browse…"), this);
    outRow->addWidget(m_output, 1);
    outRow->addWidget(browse);
    form->addRow(tr("File"), outRow);
    m_version = new QLineEdit(QStringLiteral("1.0.0"), this);
    form->addRow(tr("Package version"), m_version);
    connect(browse, &QPushButton::clicked, this, [this] {
        const QString f = QFileDialog::getSaveFileName(this, tr("Export .cast package"), m_output->text(),
                                                       tr("KernelForge packages (*.cast)"));
        if (!f.isEmpty())
            m_output->setText(f.endsWith(QLatin1String(".cast")) ? f : f + QLatin1String(".cast"));
    });
}

// Models: a torch.export program or TorchScript module the package carries, run with these
// kernels substituted (`kforge cast run`, Run ▸ Run Model from .cast Package…).
void ExportCastDialog::buildModels(QFormLayout* form)
{
    auto* modelBox = new QVBoxLayout;
    m_models = new QTableWidget(0, 3, this);
    m_models->setHorizontalHeaderLabels({tr("Name"), tr("Model file"), tr("Inputs (empty: the .pt2's own)")});
    m_models->horizontalHeader()->setSectionResizeMode(0, QHeaderView::ResizeToContents);
    m_models->horizontalHeader()->setSectionResizeMode(1, QHeaderView::Stretch);
    m_models->horizontalHeader()->setSectionResizeMode(2, QHeaderView::Stretch);
    m_models->setTextElideMode(Qt::ElideLeft);   // the file name matters more than its folder
    m_models->setWordWrap(false);
    m_models->verticalHeader()->hide();
    m_models->setSelectionBehavior(QAbstractItemView::SelectRows);
    m_models->setSelectionMode(QAbstractItemView::SingleSelection);
    m_models->setMaximumHeight(110);
    auto* modelButtons = new QHBoxLayout;
    auto* addModelButton = new QPushButton(tr("Add Model…"), this);
    m_inputsButton = new QPushButton(tr("Inputs…"), this);
    m_removeModel = new QPushButton(tr("Remove"), this);
    modelButtons->addWidget(addModelButton);
    modelButtons->addWidget(m_inputsButton);
    modelButtons->addWidget(m_removeModel);
    modelButtons->addStretch();
    modelBox->addWidget(m_models);
    modelBox->addLayout(modelButtons);
    form->addRow(tr("Models"), modelBox);

    connect(addModelButton, &QPushButton::clicked, this, [this] {
        const QString f = QFileDialog::getOpenFileName(this, tr("Add a model"), m_output->text(),
                                                       tr("Models (*.pt2 *.pt *.ts);;All files (*)"));
        if (!f.isEmpty())
            m_models->selectRow(addModel(f));
    });
    connect(m_inputsButton, &QPushButton::clicked, this, [this] {
        const int row = m_models->currentRow();
        if (row < 0)
            return;
        const QString f = QFileDialog::getOpenFileName(this, tr("The model's inputs"), m_models->item(row, 1)->text(),
                                                       tr("Input shapes or tensors (*.json *.pt);;All files (*)"));
        if (!f.isEmpty())
            m_models->item(row, 2)->setText(f);
    });
    connect(m_removeModel, &QPushButton::clicked, this, [this] {
        if (m_models->currentRow() >= 0)
            m_models->removeRow(m_models->currentRow());
        update();
    });
}

int ExportCastDialog::addModel(const QString& file, const QString& inputs)
{
    const QSignalBlocker quiet(m_models);   // one update() for the whole row, below
    const int row = m_models->rowCount();
    m_models->insertRow(row);
    m_models->setItem(row, 0, new QTableWidgetItem(qs(kf::cast::defaultOpName(QFileInfo(file).completeBaseName().toStdString()))));
    m_models->setItem(row, 1, new QTableWidgetItem(file));
    m_models->setItem(row, 2, new QTableWidgetItem(inputs));
    update();
    return row;
}

CastExportChoice ExportCastDialog::choice() const
{
    CastExportChoice c;
    for (int i = 0; i < m_versions->count(); ++i)
        if (m_versions->item(i)->checkState() == Qt::Checked)
            c.ids << m_versions->item(i)->data(Qt::UserRole).toString();
    for (QCheckBox* b : m_archs)
        if (b->isChecked())
            c.architectures << b->text();
    c.ptx = m_ptx->currentData().toString();
    c.output = m_output->text().trimmed();
    c.packageVersion = m_version->text().trimmed();
    auto text = [this](int r, int col) { return m_models->item(r, col) ? m_models->item(r, col)->text().trimmed() : QString(); };
    for (int r = 0; r < m_models->rowCount(); ++r)
        c.models.append({text(r, 0), text(r, 1), text(r, 2)});
    return c;
}

QString ExportCastDialog::problem() const
{
    const CastExportChoice c = choice();
    if (c.ids.isEmpty())
        return tr("Check at least one version.");
    if (c.architectures.isEmpty())
        return tr("Choose at least one architecture.");
    if (c.ptx.startsWith(QLatin1String("compute_")) && !c.architectures.contains(QString(c.ptx).replace("compute_", "sm_")))
        return tr("PTX of %1 needs %2 among the architectures.").arg(c.ptx, QString(c.ptx).replace("compute_", "sm_"));
    if (c.output.isEmpty())
        return tr("Choose the file to write.");
    QStringList names;
    for (const CastModelChoice& m : c.models) {
        if (!kf::cast::isOpName(m.name.toStdString()))
            return tr("“%1” cannot name a model: letters, digits and _, not starting with a digit.").arg(m.name);
        if (names.contains(m.name))
            return tr("Two models are named %1.").arg(m.name);
        names << m.name;
        if (!QFileInfo(m.file).isFile())
            return tr("The model file %1 does not exist.").arg(m.file);
        if (!m.inputs.isEmpty() && !QFileInfo(m.inputs).isFile())
            return tr("The inputs file %1 does not exist.").arg(m.inputs);
    }
    return {};
}

void ExportCastDialog::update()
{
    if (m_inputsButton) {
        m_inputsButton->setEnabled(m_models->currentRow() >= 0);
        m_removeModel->setEnabled(m_models->currentRow() >= 0);
    }
    const QString p = problem();
    m_problem->setText(p);
    m_buttons->button(QDialogButtonBox::Ok)->setEnabled(p.isEmpty());
}

} // namespace kf::ui
