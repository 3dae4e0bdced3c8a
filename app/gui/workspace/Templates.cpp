#include "app/gui/workspace/Templates.h"

#include "engine/core/Files.h"
#include "engine/core/InstallLayout.h"
#include "engine/task/Task.h"
#include "engine/task/TaskEdit.h"

#include <QDir>
#include <QDirIterator>
#include <QFile>
#include <QFileInfo>
#include <QRegularExpression>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <filesystem>

namespace kf::app {

namespace {

// ordered_json keeps the user's key order when task.json is rewritten.
using OrderedJson = nlohmann::ordered_json;

std::filesystem::path fsPath(const QString& p) { return std::filesystem::path(p.toStdString()); }

Error fail(const char* what, const QString& why, const QString& file, const QString& hint = {})
{
    return Error::inFile(file.toStdString(), {}, what, why.toStdString(), hint.toStdString());
}

Result<OrderedJson> readOrderedJson(const QString& file)
{
    auto bytes = readFileBytes(fsPath(file));
    if (!bytes)
        return bytes.error();
    try {
        return OrderedJson::parse(*bytes);
    } catch (const nlohmann::json::exception& e) {
        return fail("read task", QString::fromUtf8(e.what()), file);
    }
}

QString identifierOr(const std::string& text, const QString& fallback)
{
    static const QRegularExpression re(QStringLiteral("^[A-Za-z_][A-Za-z0-9_]*$"));
    const QString s = QString::fromStdString(text);
    return re.match(s).hasMatch() ? s : fallback;
}

QString scalarCType(const std::string& type)
{
    if (type == "int64") return QStringLiteral("long long");
    if (type == "uint32") return QStringLiteral("unsigned int");
    if (type == "uint64") return QStringLiteral("unsigned long long");
    if (type == "fp32") return QStringLiteral("float");
    if (type == "fp64") return QStringLiteral("double");
    return QStringLiteral("int");
}

// The kernel's parameter list, in the order the launch plan passes its arguments.
QString parameterList(const Task& task, const Candidate& plan, const Launch& launch)
{
    QStringList params;
    for (size_t i = 0; i < launch.args.size(); ++i) {
        const LaunchArg& a = launch.args[i];
        if (a.kind == LaunchArg::Kind::Scalar) {
            params << scalarCType(a.scalarType) + QLatin1Char(' ')
                          + identifierOr(a.scalar.text(), QStringLiteral("s%1").arg(i));
            continue;
        }
        const QString name = QString::fromStdString(a.tensor);
        QString type = QStringLiteral("float");
        bool isInput = false;
        if (const TensorSpec* t = task.findTensor(a.tensor)) {
            type = QString::fromLatin1(dtypeCudaName(t->dtype));
            isInput = std::any_of(task.inputs.begin(), task.inputs.end(),
                                  [&](const TensorSpec& in) { return in.name == a.tensor; });
        } else {
            for (const Scratch& s : plan.scratch)
                if (s.name == a.tensor)
                    type = QString::fromLatin1(dtypeCudaName(s.dtype));
        }
        params << (isInput ? QStringLiteral("const ") : QString()) + type
                          + QStringLiteral("* __restrict__ ") + name;
    }
    return params.join(QStringLiteral(", "));
}

QString skeletonSource(const QString& templ, const Task& task, const Candidate& plan,
                       const QString& fileName)
{
    const Launch& launch = plan.launches.front();
    const QString kernel = QString::fromStdString(launch.kernel);
    QString name = kernel;
    QString prefix = QStringLiteral("extern \"C\" ");
    // A name expression such as "rows<256, 4>" needs a template; int parameters are the common
    // case, and the comment in the file says what the plan expects.
    if (const qsizetype lt = kernel.indexOf(QLatin1Char('<')); lt > 0) {
        name = kernel.left(lt).trimmed();
        int depth = 0, count = 1;
        for (qsizetype i = lt + 1; i < kernel.size(); ++i) {
            const QChar c = kernel[i];
            if (c == QLatin1Char('<') || c == QLatin1Char('(')) ++depth;
            else if (c == QLatin1Char('>') || c == QLatin1Char(')')) --depth;
            else if (c == QLatin1Char(',') && depth == 0) ++count;
        }
        QStringList tparams;
        for (int i = 0; i < count; ++i)
            tparams << QStringLiteral("int P%1").arg(i);
        prefix = QStringLiteral("template <%1> ").arg(tparams.join(QStringLiteral(", ")));
    }
    QString out = templ;
    out.replace(QStringLiteral("${FILE}"), fileName);
    out.replace(QStringLiteral("${TASK}"), QString::fromStdString(task.name));
    out.replace(QStringLiteral("${KERNEL}"), kernel);
    out.replace(QStringLiteral("${TEMPLATE}"), prefix);
    out.replace(QStringLiteral("${NAME}"), name);
    out.replace(QStringLiteral("${PARAMS}"), parameterList(task, plan, launch));
    return out;
}

} // namespace

QString templatesDir()
{
    return QString::fromStdString(installedPath(InstallDir::Data, "templates", KF_TEMPLATES_DIR).string());
}

bool isValidTaskName(const QString& name)
{
    static const QRegularExpression re(QStringLiteral("^[A-Za-z0-9_][A-Za-z0-9_-]*$"));
    return re.match(name).hasMatch();
}

Result<QString> createTask(const QString& workspaceRoot, const QString& name)
{
    const QDir root(workspaceRoot);
    if (!isValidTaskName(name))
        return fail("create task",
                    QStringLiteral("\"%1\" is not a valid task name").arg(name), workspaceRoot,
                    QStringLiteral("use letters, digits, '_' and '-', not starting with '-'"));
    if (!root.exists())
        return fail("create task", QStringLiteral("the workspace folder does not exist"), workspaceRoot);
    const QString dest = QDir::cleanPath(root.absoluteFilePath(name));
    if (QFileInfo::exists(dest))
        return fail("create task", QStringLiteral("a folder named \"%1\" already exists").arg(name),
                    dest, QStringLiteral("choose another name"));
    const QString source = templatesDir() + QStringLiteral("/task");
    auto json = readOrderedJson(source + QStringLiteral("/task.json"));
    if (!json)
        return json.error();
    (*json)["name"] = name.toStdString();

    if (!QDir().mkpath(dest))
        return fail("create task", QStringLiteral("the folder could not be created"), dest,
                    QStringLiteral("check the permissions of the workspace folder"));
    // From here on a failure removes the half-made folder: it was ours.
    auto abandon = [&](Error e) -> Result<QString> {
        QDir(dest).removeRecursively();
        return e;
    };
    QDirIterator it(source, QDir::Files | QDir::Hidden, QDirIterator::Subdirectories);
    while (it.hasNext()) {
        const QString file = it.next();
        const QString rel = QDir(source).relativeFilePath(file);
        if (rel == QStringLiteral("task.json"))
            continue;
        const QString target = QDir(dest).filePath(rel);
        QDir().mkpath(QFileInfo(target).absolutePath());
        if (!QFile::copy(file, target))
            return abandon(fail("create task", QStringLiteral("could not copy the template file %1").arg(rel), target));
        // Installed templates may be read-only; the user's copy must not be.
        QFile::setPermissions(target, QFile::permissions(target) | QFileDevice::WriteOwner);
    }
    const QString jsonPath = QDir(dest).filePath(QStringLiteral("task.json"));
    if (auto w = writeFileAtomic(fsPath(jsonPath), json->dump(2) + "\n"); !w)
        return abandon(w.error());
    if (auto check = loadTask(fsPath(dest)); !check)
        return abandon(check.error());
    return dest;
}

Result<QString> createCandidate(const QString& taskDir, const QString& fileName, const QString& copyFrom)
{
    const QDir dir(taskDir);
    const QString jsonPath = dir.absoluteFilePath(QStringLiteral("task.json"));
    QString file = fileName.trimmed();
    if (!file.endsWith(QStringLiteral(".cu")))
        file += QStringLiteral(".cu");
    static const QRegularExpression fileRe(QStringLiteral("^[A-Za-z0-9_][A-Za-z0-9_.-]*\\.cu$"));
    if (!fileRe.match(file).hasMatch())
        return fail("add candidate", QStringLiteral("\"%1\" is not a plain file name").arg(fileName),
                    jsonPath, QStringLiteral("use letters, digits, '_', '-' and '.', ending in .cu"));
    const QString target = dir.absoluteFilePath(file);
    if (QFileInfo::exists(target))
        return fail("add candidate", QStringLiteral("%1 already exists in the task folder").arg(file),
                    target, QStringLiteral("choose another name"));

    auto task = loadTask(fsPath(dir.absolutePath()));
    if (!task)
        return fail("add candidate",
                    QStringLiteral("the task does not load: %1").arg(QString::fromStdString(task.error().message())),
                    jsonPath, QStringLiteral("fix task.json first"));
    if (task->candidates.empty())
        return fail("add candidate", QStringLiteral("the task has no candidate whose launch plan could be reused"),
                    jsonPath, QStringLiteral("start from File ▸ New Candidate from Reference… or add a kernel with its "
                                             "plan with File ▸ Add Candidate…"));

    const Candidate* plan = &task->candidates.front();
    QString copySource;
    if (!copyFrom.isEmpty()) {
        copySource = QDir::cleanPath(dir.absoluteFilePath(copyFrom));
        if (!QFileInfo(copySource).isFile())
            return fail("add candidate", QStringLiteral("%1 does not exist").arg(copyFrom), copySource);
        if (const Candidate* c = task->findCandidate(dir.relativeFilePath(copySource).toStdString()))
            plan = c;
    }

    auto json = readOrderedJson(jsonPath);
    if (!json)
        return json.error();
    OrderedJson entry;
    for (const auto& c : (*json)["candidates"])
        if (c.is_object() && c.value("file", std::string()) == plan->file)
            entry = c;
    entry["description"] = copySource.isEmpty()
        ? std::string("new candidate")
        : "copy of " + QFileInfo(copySource).fileName().toStdString();

    std::string source;
    if (copySource.isEmpty()) {
        QFile templ(templatesDir() + QStringLiteral("/candidate.cu"));
        if (!templ.open(QIODevice::ReadOnly))
            return fail("add candidate", QStringLiteral("the candidate template is missing"), templ.fileName());
        source = skeletonSource(QString::fromUtf8(templ.readAll()), *task, *plan, file).toStdString();
    } else {
        auto bytes = readFileBytes(fsPath(copySource));
        if (!bytes)
            return fail("add candidate", QStringLiteral("could not read %1").arg(copyFrom), copySource);
        source = std::move(bytes).value();
    }
    auto added = appendCandidate(fsPath(dir.absolutePath()), file.toStdString(), source, std::move(entry), "add candidate");
    if (!added)
        return added.error();
    return target;
}

Result<QString> importCandidate(const QString& taskDir, const QString& fileName, const QString& sourcePath,
                                const nlohmann::json& plan, const QString& description)
{
    const QDir dir(taskDir);
    const QString jsonPath = dir.absoluteFilePath(QStringLiteral("task.json"));
    static const QRegularExpression fileRe(QStringLiteral("^[A-Za-z0-9_][A-Za-z0-9_.-]*\\.cu$"));
    if (!fileRe.match(fileName).hasMatch())
        return fail("import candidate", QStringLiteral("\"%1\" is not a plain file name").arg(fileName), jsonPath,
                    QStringLiteral("use letters, digits, '_', '-' and '.', ending in .cu"));
    if (!plan.is_object() || !plan.contains("launches"))
        return fail("import candidate", QStringLiteral("the launch plan is missing"), sourcePath,
                    QStringLiteral("the version folder's launch.json holds it; run `kforge registry check`"));
    QString file = fileName;
    for (int n = 2; QFileInfo::exists(dir.absoluteFilePath(file)); ++n)
        file = fileName.chopped(3) + QStringLiteral("_%1.cu").arg(n);
    const QString target = dir.absoluteFilePath(file);

    auto bytes = readFileBytes(fsPath(sourcePath));
    if (!bytes)
        return fail("import candidate", QStringLiteral("could not read %1").arg(sourcePath), target);
    OrderedJson entry = OrderedJson::parse(plan.dump());
    entry["description"] = description.toStdString();
    auto added = appendCandidate(fsPath(dir.absolutePath()), file.toStdString(), *bytes, std::move(entry),
                                 "import candidate");
    if (!added)
        return added.error();
    return target;
}

} // namespace kf::app
