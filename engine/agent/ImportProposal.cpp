// The importer helper's proposal (docs/agents.md, "Importing problems"): read strictly, then
// turned into a task folder in one rename.
#include "engine/agent/Import.h"

#include "engine/core/Files.h"
#include "engine/core/JsonReader.h"
#include "engine/task/Task.h"

#include <unistd.h>

#include <system_error>

namespace kf::agent {
namespace {

namespace fs = std::filesystem;
namespace jr = kf::json;
using Json = nlohmann::json;

bool plainName(const std::string& s)
{
    if (s.empty() || s.size() > 200 || s == "." || s == ".." || s.front() == '.')
        return false;
    for (char c : s)
        if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-' || c == '.'))
            return false;
    return true;
}

// "samples/<label>/inputs/x.npy": relative, no "..", under samples/, a regular file in `folder`.
std::string samplePath(const Json& v, const std::string& ptr, const fs::path& folder)
{
    const std::string p = jr::asString(v, ptr);
    const fs::path path(p);
    bool ok = !path.is_absolute() && p.rfind("samples/", 0) == 0 && path.extension() == ".npy";
    for (const auto& part : path)
        ok = ok && part != ".." && part != ".";
    std::error_code ec;
    if (!ok || !fs::is_regular_file(folder / path, ec) || fs::is_symlink(fs::symlink_status(folder / path, ec)))
        jr::fail(ptr, "\"" + p + "\" is not a .npy file under samples/ in the proposal");
    return p;
}

std::vector<std::pair<std::string, std::string>> tensorMap(const Json& v, const std::string& ptr, const fs::path& folder)
{
    if (!v.is_object())
        jr::fail(ptr, "must be an object of tensor name to .npy path, not " + jr::describe(v));
    std::vector<std::pair<std::string, std::string>> out;
    for (auto it = v.begin(); it != v.end(); ++it)
        out.emplace_back(it.key(), samplePath(it.value(), jr::child(ptr, it.key()), folder));
    return out;
}

} // namespace

Result<ImportProposal> readImportProposal(const Json& j, const std::string& origin, const fs::path& folder)
{
    ImportProposal p;
    try {
        if (!j.is_object())
            jr::fail("", "the proposal must be a JSON object, not " + jr::describe(j));
        jr::Object o(j, "");
        if (o.integer("schema_version") != 1)
            jr::fail(o.at("schema_version"), "schema_version must be 1");
        p.format = o.string("format");
        if (p.format != "kernelbench" && p.format != "gpumode")
            jr::fail(o.at("format"), "format must be \"kernelbench\" or \"gpumode\"");
        p.torchVersion = o.string("torch_version");
        const Json& task = o.required("task");
        if (!task.is_object())
            jr::fail(o.at("task"), "must be a task.json object, not " + jr::describe(task));
        if (task.contains("candidates"))
            jr::fail(jr::child(o.at("task"), "candidates"), "an imported task has no candidates yet");
        p.task = nlohmann::ordered_json::parse(task.dump());
        p.task["candidates"] = nlohmann::ordered_json::array();
        for (const std::string& name : jr::asStringArray(o.required("originals"), o.at("originals"))) {
            std::error_code ec;
            if (!plainName(name) || !fs::is_regular_file(folder / "originals" / name, ec)
                || fs::is_symlink(fs::symlink_status(folder / "originals" / name, ec)))
                jr::fail(o.at("originals"), "\"" + name + "\" is not a file in the proposal's originals/");
            p.originals.push_back(name);
        }
        const Json& samples = jr::asArray(o.required("samples"), o.at("samples"));
        for (size_t i = 0; i < samples.size(); ++i) {
            jr::Object s(samples[i], jr::child(o.at("samples"), i));
            ImportSample sample;
            sample.label = s.string("label");
            if (!plainName(sample.label))
                jr::fail(s.at("label"), "a sample label is a plain name");
            sample.shape = s.required("shape");
            if (!sample.shape.is_object())
                jr::fail(s.at("shape"), "must be an object of symbol values");
            for (auto it = sample.shape.begin(); it != sample.shape.end(); ++it)
                jr::asInteger(it.value(), jr::child(s.at("shape"), it.key()));
            sample.inputs = tensorMap(s.required("inputs"), s.at("inputs"), folder);
            sample.expected = tensorMap(s.required("expected"), s.at("expected"), folder);
            if (const Json* u = s.optional("upcast"))
                sample.upcast = jr::asStringArray(*u, s.at("upcast"));
            s.finish();
            p.samples.push_back(std::move(sample));
        }
        p.notes = jr::asStringArray(o.required("notes"), o.at("notes"));
        o.finish();
    } catch (const jr::SchemaError& e) {
        return Error::inFile(origin, e.pointer, "read the import proposal", e.message, "this is the importer's fault; please report it with the problem");
    }
    // The task itself, with its reference present in the folder, as a plain file name.
    auto task = parseTask(Json::parse(p.task.dump()), origin + " (its task)", folder);
    if (!task)
        return task.error();
    if (task->reference.kind == Reference::Kind::TorchScript) {
        std::error_code ec;
        const fs::path ref = folder / task->reference.torchscript;
        if (!plainName(task->reference.torchscript.string()) || fs::is_symlink(fs::symlink_status(ref, ec)))
            return Error::inFile(origin, "/task/reference/torchscript", "read the import proposal", "the reference must be a file of the proposal folder, not \""
                                                         + task->reference.torchscript.string() + "\"");
    }
    for (const ImportSample& s : p.samples)
        for (const auto* list : {&s.inputs, &s.expected})
            for (const auto& [name, path] : *list)
                if (!task->findTensor(name))
                    return Error::inFile(origin, "/samples", "read the import proposal", "sample " + s.label + " names a tensor " + name + " the task lacks");
    return p;
}

Result<fs::path> writeImportedTask(const ImportProposal& p, const fs::path& from, const fs::path& to)
{
    std::error_code ec;
    fs::path target = fs::absolute(to, ec).lexically_normal();
    if (target.filename().empty())   // "out/" or "."
        target = target.parent_path();
    if (fs::exists(target, ec) && !(fs::is_directory(target, ec) && fs::is_empty(target, ec)))
        return Error::inFile(target.string(), {}, "write the imported task", target.string() + " already exists and is not empty", "choose another folder with -o");
    const fs::path parent = target.parent_path();
    // The first folder on the way that does not exist yet is ours to remove if this fails.
    fs::path created;
    for (fs::path p = parent; !p.empty() && !fs::exists(p, ec); p = p.parent_path())
        created = p;
    fs::create_directories(parent, ec);
    std::string tmpl = (parent / (".import-XXXXXX")).string();
    if (!::mkdtemp(tmpl.data())) {
        if (!created.empty())
            fs::remove_all(created, ec);
        return Error::inFile(parent.string(), {}, "write the imported task", "cannot create a folder in " + parent.string(), "check the permissions");
    }
    const fs::path staging = tmpl;
    auto abandon = [&](Error e) -> Result<fs::path> {
        fs::remove_all(staging, ec);
        if (!created.empty())
            fs::remove_all(created, ec);
        return e;
    };
    auto copy = [&](const fs::path& a, const fs::path& b) -> Result<void> {
        std::error_code e2;
        fs::create_directories(b.parent_path(), e2);
        fs::copy_file(a, b, fs::copy_options::overwrite_existing, e2);
        if (e2)
            return Error::inFile(b.string(), {}, "write the imported task", "cannot copy " + a.filename().string() + ": " + e2.message());
        return {};
    };
    if (auto w = writeFileAtomic(staging / "task.json", p.task.dump(2) + "\n"); !w)
        return abandon(w.error());
    const std::string reference = p.task["reference"].value("torchscript", std::string());
    if (!reference.empty())
        if (auto c = copy(from / reference, staging / reference); !c)
            return abandon(c.error());
    for (const std::string& name : p.originals)
        if (auto c = copy(from / "originals" / name, staging / "imported" / name); !c)
            return abandon(c.error());
    for (const ImportSample& s : p.samples)
        for (const auto* list : {&s.inputs, &s.expected})
            for (const auto& [name, path] : *list)
                if (auto c = copy(from / path, staging / path); !c)
                    return abandon(c.error());
    nlohmann::ordered_json record = {{"format", p.format}, {"torch_version", p.torchVersion},
                                     {"originals", p.originals}, {"notes", p.notes}};
    nlohmann::ordered_json samples = nlohmann::ordered_json::array();
    for (const ImportSample& s : p.samples) {
        nlohmann::ordered_json in = nlohmann::ordered_json::object(), ex = nlohmann::ordered_json::object();
        for (const auto& [n, path] : s.inputs)
            in[n] = path;
        for (const auto& [n, path] : s.expected)
            ex[n] = path;
        samples.push_back({{"label", s.label}, {"shape", s.shape}, {"inputs", in}, {"expected", ex}, {"upcast", s.upcast}});
    }
    record["samples"] = samples;
    if (auto w = writeFileAtomic(staging / "imported" / "import.json", record.dump(2) + "\n"); !w)
        return abandon(w.error());
    if (auto check = loadTask(staging); !check)
        return abandon(check.error());
    if (fs::exists(target, ec))
        fs::remove(target, ec);   // the empty folder
    fs::rename(staging, target, ec);
    if (ec)
        return abandon(Error::inFile(target.string(), {}, "write the imported task", "cannot rename the staged folder: " + ec.message()));
    return target;
}

} // namespace kf::agent
