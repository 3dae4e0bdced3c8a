#include "widgets/task/TaskForm.h"

#include "engine/task/DType.h"
#include "engine/task/OpCatalog.h"
#include "widgets/task/FieldBinder.h"
#include "widgets/task/FormSection.h"
#include "widgets/task/JsonTable.h"
#include "widgets/task/JsonTableModel.h"

#include <QCheckBox>
#include <QComboBox>
#include <QFormLayout>
#include <QItemSelectionModel>
#include <QLabel>
#include <QLineEdit>
#include <QPlainTextEdit>
#include <QScrollArea>
#include <QTableView>
#include <QVBoxLayout>

#include <regex>

namespace kf::ui {

using Json = nlohmann::json;

namespace {

bool hasPathPrefix(const std::string& pointer, const std::string& prefix)
{
    return pointer.compare(0, prefix.size(), prefix) == 0 &&
           (prefix.empty() || pointer.size() == prefix.size() || pointer[prefix.size()] == '/');
}

QStringList dtypeChoices()
{
    QStringList names;
    for (int i = static_cast<int>(DType::F64); i <= static_cast<int>(DType::Bool); ++i)
        names << QString::fromUtf8(dtypeName(static_cast<DType>(i)).data(),
                                   static_cast<qsizetype>(dtypeName(static_cast<DType>(i)).size()));
    return names;
}

QStringList opChoices()
{
    QStringList names;
    for (const OpInfo& op : opCatalog())
        names << QString::fromUtf8(op.name.data(), static_cast<qsizetype>(op.name.size()));
    return names;
}

QLineEdit* lineEdit(const QString& objectName, const QString& placeholder, QWidget* parent)
{
    auto* e = new QLineEdit(parent);
    e->setObjectName(objectName);
    e->setPlaceholderText(placeholder);
    return e;
}

} // namespace

TaskForm::TaskForm(TaskDocument* doc, QWidget* parent)
    : QWidget(parent), m_doc(doc), m_fields(new FieldBinder(doc, this)), m_scroll(new QScrollArea(this)),
      m_content(new QWidget)
{
    auto* contentLayout = new QVBoxLayout(m_content);
    Q_UNUSED(contentLayout);
    buildGeneral();
    buildSymbols();
    buildTensors();
    buildShapes();
    buildReference();
    buildCandidates();
    buildCompile();
    static_cast<QVBoxLayout*>(m_content->layout())->addStretch();

    m_scroll->setWidget(m_content);
    m_scroll->setWidgetResizable(true);
    m_scroll->setFrameShape(QFrame::NoFrame);
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->addWidget(m_scroll);

    connect(m_doc, &TaskDocument::changed, this, &TaskForm::refresh);
    refresh();
}

FormSection* TaskForm::addSection(const QString& title, const QString& objectName)
{
    auto* section = new FormSection(title, m_content);
    section->setObjectName(objectName);
    m_content->layout()->addWidget(section);
    return section;
}

void TaskForm::addFields(FormSection* section, std::initializer_list<Field> fields)
{
    auto* form = new QFormLayout;
    for (const Field& f : fields) {
        form->addRow(f.label, f.widget);
        m_fields->bind(f.widget, f.pointer, f.kind);
    }
    section->body()->addLayout(form);
}

void TaskForm::buildGeneral()
{
    FormSection* s = addSection(tr("General"), QStringLiteral("generalSection"));
    auto* name = lineEdit(QStringLiteral("nameEdit"), tr("letters, digits, _ and -"), s);
    auto* description = new QPlainTextEdit(s);
    description->setObjectName(QStringLiteral("descriptionEdit"));
    description->setFixedHeight(description->fontMetrics().lineSpacing() * 4 + 10);
    auto* archs = lineEdit(QStringLiteral("architecturesEdit"), QStringLiteral("sm_90, sm_80"), s);
    auto* bytes = lineEdit(QStringLiteral("costBytesEdit"), tr("bytes moved per shape, e.g. 3 * N * 4"), s);
    auto* flops = lineEdit(QStringLiteral("costFlopsEdit"), tr("useful flops per shape, e.g. N"), s);
    addFields(s, {{tr("Name"), name, "/name", CellKind::Text},
                  {tr("Description"), description, "/description", CellKind::Text},
                  {tr("Architectures"), archs, "/architectures", CellKind::List},
                  {tr("Cost: bytes"), bytes, "/cost/bytes", CellKind::Expr},
                  {tr("Cost: flops"), flops, "/cost/flops", CellKind::Expr}});
    // The root is every pointer's ancestor: errors in keys the form does not show land here.
    m_anchors.push_back({"", s, nullptr});
}

void TaskForm::buildSymbols()
{
    FormSection* s = addSection(tr("Symbols"), QStringLiteral("symbolsSection"));
    auto* table = new JsonTable(m_doc, QStringLiteral("symbolsTable"), s);
    table->model()->setColumns({{tr("Name"), "", CellKind::Text, {}},
                                {tr("min"), "/min", CellKind::Integer, {}},
                                {tr("max"), "/max", CellKind::Integer, {}},
                                {tr("multiple_of"), "/multiple_of", CellKind::Integer, {}}});
    table->model()->setNewRow(Json{{"min", 1}, {"max", 65536}}, QStringLiteral("S"));
    table->model()->setRows("/symbols", JsonTableModel::Mode::Members);
    s->body()->addWidget(table);
    auto* constraints = lineEdit(QStringLiteral("constraintsEdit"), QStringLiteral("D % 8 == 0, B * D <= 536870912"), s);
    addFields(s, {{tr("Constraints"), constraints, "/constraints", CellKind::List}});
    m_anchors.push_back({"/symbols", s, table});
    m_anchors.push_back({"/constraints", s, nullptr});
}

void TaskForm::buildTensors()
{
    const QStringList dtypes = dtypeChoices();
    FormSection* in = addSection(tr("Inputs"), QStringLiteral("inputsSection"));
    auto* inputs = new JsonTable(m_doc, QStringLiteral("inputsTable"), in);
    inputs->model()->setColumns({{tr("Name"), "/name", CellKind::Text, {}},
                                 {tr("dtype"), "/dtype", CellKind::Text, dtypes},
                                 {tr("Shape"), "/shape", CellKind::List, {}},
                                 {tr("Distributions"), "/distributions", CellKind::Json, {}}});
    inputs->model()->setNewRow(Json{{"name", "in"}, {"dtype", "fp32"}, {"shape", Json::array()}});
    inputs->model()->setRows("/inputs", JsonTableModel::Mode::Elements);
    in->body()->addWidget(inputs);
    m_anchors.push_back({"/inputs", in, inputs});

    FormSection* out = addSection(tr("Outputs"), QStringLiteral("outputsSection"));
    auto* outputs = new JsonTable(m_doc, QStringLiteral("outputsTable"), out);
    outputs->model()->setColumns({{tr("Name"), "/name", CellKind::Text, {}},
                                  {tr("dtype"), "/dtype", CellKind::Text, dtypes},
                                  {tr("Shape"), "/shape", CellKind::List, {}},
                                  {tr("rtol"), "/tolerance/rtol", CellKind::Number, {}},
                                  {tr("atol"), "/tolerance/atol", CellKind::Number, {}},
                                  {tr("atol_mode"), "/tolerance/atol_mode", CellKind::Text, {QStringLiteral("rms"), QStringLiteral("absolute")}}});
    outputs->model()->setNewRow(Json{{"name", "out"}, {"dtype", "fp32"}, {"shape", Json::array()}});
    outputs->model()->setRows("/outputs", JsonTableModel::Mode::Elements);
    out->body()->addWidget(outputs);
    m_anchors.push_back({"/outputs", out, outputs});
}

void TaskForm::buildShapes()
{
    FormSection* tests = addSection(tr("Test shapes"), QStringLiteral("testShapesSection"));
    m_testShapes = new JsonTable(m_doc, QStringLiteral("testShapesTable"), tests);
    m_testShapes->model()->setRows("/shapes/tests", JsonTableModel::Mode::Elements);
    tests->body()->addWidget(m_testShapes);
    FormSection* bench = addSection(tr("Benchmark shapes"), QStringLiteral("benchmarkShapesSection"));
    m_benchShapes = new JsonTable(m_doc, QStringLiteral("benchmarkShapesTable"), bench);
    m_benchShapes->model()->setRows("/shapes/benchmarks", JsonTableModel::Mode::Elements);
    bench->body()->addWidget(m_benchShapes);
    m_anchors.push_back({"/shapes", tests, nullptr});
    m_anchors.push_back({"/shapes/tests", tests, m_testShapes});
    m_anchors.push_back({"/shapes/benchmarks", bench, m_benchShapes});
}

void TaskForm::buildReference()
{
    FormSection* s = addSection(tr("Reference"), QStringLiteral("referenceSection"));
    m_reference = new JsonTable(m_doc, QStringLiteral("referenceTable"), s);
    s->body()->addWidget(m_reference);
    m_anchors.push_back({"/reference", s, m_reference});
}

void TaskForm::buildCandidates()
{
    FormSection* s = addSection(tr("Candidates"), QStringLiteral("candidatesSection"));
    m_candidates = new JsonTable(m_doc, QStringLiteral("candidatesTable"), s);
    m_candidates->model()->setColumns({{tr("File"), "/file", CellKind::Text, {}},
                                       {tr("Description"), "/description", CellKind::Text, {}},
                                       {tr("Defines"), "/defines", CellKind::Json, {}},
                                       {tr("Scratch"), "/scratch", CellKind::Json, {}}});
    m_candidates->model()->setNewRow(Json{{"file", "kernel.cu"}, {"launches", Json::array()}});
    m_candidates->model()->setRows("/candidates", JsonTableModel::Mode::Elements);
    s->body()->addWidget(m_candidates);
    m_anchors.push_back({"/candidates", s, m_candidates});

    m_launchSection = addSection(tr("Launch plan"), QStringLiteral("launchSection"));
    m_launches = new JsonTable(m_doc, QStringLiteral("launchesTable"), m_launchSection);
    m_launches->model()->setColumns({{tr("Kernel"), "/kernel", CellKind::Text, {}},
                                     {tr("Grid"), "/grid", CellKind::Expr, {}},
                                     {tr("Block"), "/block", CellKind::Expr, {}},
                                     {tr("Shared bytes"), "/shared_bytes", CellKind::Expr, {}},
                                     {tr("Args"), "/args", CellKind::Json, {}}});
    m_launches->model()->setNewRow(Json{{"kernel", ""}, {"grid", 1}, {"block", 256}, {"args", Json::array()}});
    m_launchSection->body()->addWidget(m_launches);

    QTableView* view = m_candidates->view();
    connect(view->selectionModel(), &QItemSelectionModel::currentRowChanged, this,
            [this](const QModelIndex& current) {
                if (current.isValid())
                    selectCandidate(current.row());
            });
}

void TaskForm::buildCompile()
{
    FormSection* s = addSection(tr("Compile settings"), QStringLiteral("compileSection"));
    auto* std = new QComboBox(s);
    std->setObjectName(QStringLiteral("stdCombo"));
    std->setEditable(true);
    std->lineEdit()->setPlaceholderText(tr("c++17 when left empty"));
    std->addItems({QString(), QStringLiteral("c++11"), QStringLiteral("c++14"), QStringLiteral("c++17"), QStringLiteral("c++20")});
    auto* fastMath = new QCheckBox(tr("--use_fast_math"), s);
    fastMath->setObjectName(QStringLiteral("fastMathCheck"));
    auto* defines = lineEdit(QStringLiteral("definesEdit"), QStringLiteral("{\"TILE\": \"32\"}"), s);
    auto* includes = lineEdit(QStringLiteral("includeDirsEdit"), QStringLiteral("include"), s);
    auto* options = lineEdit(QStringLiteral("optionsEdit"), QStringLiteral("-maxrregcount=64"), s);
    addFields(s, {{tr("C++ standard"), std, "/compile/std", CellKind::Text},
                  {tr("Fast math"), fastMath, "/compile/fast_math", CellKind::Bool},
                  {tr("Defines"), defines, "/compile/defines", CellKind::Json},
                  {tr("Include folders"), includes, "/compile/include_dirs", CellKind::List},
                  {tr("Options"), options, "/compile/options", CellKind::List}});
    m_anchors.push_back({"/compile", s, nullptr});
}

void TaskForm::refresh()
{
    updateShapeColumns();
    updateReferenceRows();
    selectCandidate(m_candidateRow);
}

void TaskForm::updateShapeColumns()
{
    std::vector<JsonColumn> columns{{tr("Label"), "/label", CellKind::Text, {}}};
    Json newRow = Json::object();
    if (const Json* symbols = m_doc->find("/symbols"); symbols && symbols->is_object()) {
        for (auto it = symbols->begin(); it != symbols->end(); ++it) {
            columns.push_back({QString::fromStdString(it.key()), "/" + it.key(), CellKind::Integer, {}});
            const Json* min = it->is_object() && it->contains("min") ? &(*it)["min"] : nullptr;
            newRow[it.key()] = min && min->is_number_integer() ? std::max<std::int64_t>(1, min->get<std::int64_t>()) : 1;
        }
    }
    for (JsonTable* t : {m_testShapes, m_benchShapes}) {
        t->model()->setColumns(columns);
        t->model()->setNewRow(newRow);
    }
}

void TaskForm::updateReferenceRows()
{
    const Json* ref = m_doc->find("/reference");
    JsonTableModel* model = m_reference->model();
    if (ref && ref->is_object() && ref->contains("tape")) {
        model->setColumns({{tr("Op"), "/op", CellKind::Text, opChoices()},
                           {tr("Inputs"), "/inputs", CellKind::List, {}},
                           {tr("Attrs"), "/attrs", CellKind::Json, {}},
                           {tr("Output"), "/output", CellKind::Text, {}}});
        model->setNewRow(Json{{"op", "add"}, {"inputs", Json::array()}, {"output", "t"}});
        model->setRows("/reference/tape", JsonTableModel::Mode::Elements);
    } else if (ref && ref->is_object() && ref->contains("torchscript")) {
        model->setColumns({{tr("TorchScript file"), "/torchscript", CellKind::Text, {}},
                           {tr("Inputs"), "/inputs", CellKind::List, {}}});
        model->setRows("/reference", JsonTableModel::Mode::Single);
    } else {
        model->setColumns({{tr("Op"), "/op", CellKind::Text, opChoices()},
                           {tr("Inputs"), "/inputs", CellKind::List, {}},
                           {tr("Attrs"), "/attrs", CellKind::Json, {}}});
        model->setNewRow(Json{{"op", "add"}, {"inputs", Json::array()}});
        model->setRows("/reference", JsonTableModel::Mode::Single);
    }
}

void TaskForm::selectCandidate(int row)
{
    const int count = m_candidates->model()->rowCount();
    m_candidateRow = count == 0 ? 0 : std::clamp(row, 0, count - 1);
    if (count == 0) {
        m_launches->model()->setRows({}, JsonTableModel::Mode::Elements);
        m_launchSection->setTitle(tr("Launch plan"));
        return;
    }
    const std::string candidate = m_candidates->model()->rowPointer(m_candidateRow);
    m_launches->model()->setRows(candidate + "/launches", JsonTableModel::Mode::Elements);
    const Json* file = m_doc->find(candidate + "/file");
    const QString name = file && file->is_string() ? QString::fromStdString(file->get<std::string>())
                                                   : tr("candidate %1").arg(m_candidateRow + 1);
    m_launchSection->setTitle(tr("Launch plan of %1").arg(name));
    QTableView* view = m_candidates->view();
    if (view->currentIndex().row() != m_candidateRow)
        view->setCurrentIndex(m_candidates->model()->index(m_candidateRow, 0));
}

const TaskForm::Anchor* TaskForm::anchorFor(const std::string& pointer) const
{
    const Anchor* best = nullptr;
    for (const Anchor& a : m_anchors)
        if (hasPathPrefix(pointer, a.prefix) && (!best || a.prefix.size() > best->prefix.size()))
            best = &a;
    return best;
}

FormSection* TaskForm::sectionFor(const std::string& pointer) const
{
    static const std::regex launches("^/candidates/[0-9]+/launches(/.*)?$");
    if (std::regex_match(pointer, launches))
        return m_launchSection;
    const Anchor* a = anchorFor(pointer);
    return a ? a->section : nullptr;
}

JsonTable* TaskForm::tableFor(const std::string& pointer) const
{
    static const std::regex launches("^/candidates/[0-9]+/launches(/.*)?$");
    if (std::regex_match(pointer, launches))
        return m_launches;
    const Anchor* a = anchorFor(pointer);
    return a ? a->table : nullptr;
}

void TaskForm::showError(const std::string& pointer, const QString& message)
{
    clearError();
    static const std::regex launches("^/candidates/([0-9]+)/launches(/.*)?$");
    std::smatch m;
    if (std::regex_match(pointer, m, launches))
        selectCandidate(std::stoi(m[1].str()));
    m_errorSection = sectionFor(pointer);
    if (m_errorSection)
        m_errorSection->setMessage(message);
    m_fields->highlight(pointer, message);
    if (JsonTable* table = tableFor(pointer)) {
        int column = -1;
        const QModelIndex index = table->model()->indexForPointer(pointer, &column);
        if (index.isValid())
            table->showError(index.row(), column, message);
    }
}

void TaskForm::clearError()
{
    for (const Anchor& a : m_anchors) {
        a.section->setMessage({});
        if (a.table)
            a.table->clearError();
    }
    m_launchSection->setMessage({});
    m_launches->clearError();
    m_fields->clearHighlight();
    m_errorSection = nullptr;
}

void TaskForm::revealError()
{
    if (m_errorSection)
        m_scroll->ensureWidgetVisible(m_errorSection);
}

} // namespace kf::ui
