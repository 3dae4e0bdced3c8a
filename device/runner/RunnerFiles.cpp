// The runner's requests about files (docs/runner-protocol.md, "Files"): have_files and put_file,
// a staged request made local, and the test hook that shows what a staged request reads.
#include "device/runner/Runner.h"

#include "device/runner/RunPlan.h"
#include "device/runner/TorchBridge.h"
#include "engine/core/Hmac.h"
#include "engine/core/TempFolder.h"
#include "engine/protocol/FileTransfer.h"
#include "engine/verify/Npy.h"

#include <algorithm>
#include <cstring>
#include <unistd.h>

namespace fs = std::filesystem;

namespace kf::device {

void Runner::handleFiles(const std::string& type, const nlohmann::json& request, std::int64_t id)
{
    auto answer = [&](protocol::FilesAnswer a) {
        nlohmann::json m = a.toJson();
        m["id"] = id;
        m_channel.send(m);
    };
    if (type == "have_files") {
        auto have = protocol::HaveFiles::fromJson(request);
        if (!have) {
            m_channel.error(id, have.error(), false);
            return;
        }
        answer({m_files.missing(have->sha256)});
        return;
    }
    auto put = protocol::PutFile::fromJson(request);
    if (!put) {
        m_channel.error(id, put.error(), false);
        return;
    }
    auto whole = m_files.put(put.value());
    if (!whole) {
        m_channel.error(id, whole.error(), false);
        return;
    }
    protocol::FilesAnswer a;
    if (!whole.value())
        a.missing.push_back(put->sha256);
    answer(a);
}

Result<nlohmann::json> Runner::localise(const nlohmann::json& request, std::vector<std::filesystem::path>& folders)
{
    if (!request.contains("task_files") && !request.contains("inputs_files"))
        return request;
    // The reader checks every path and hash, the limits, and task_dir xor task_files.
    auto read = protocol::RunRequest::fromJson(request);
    if (!read)
        return read.error();
    nlohmann::json local = request;
    if (!read->taskFiles.empty()) {
        // An include folder that holds no file must exist all the same for parseTask.
        std::vector<std::string> includeDirs;
        const nlohmann::json& task = request["task"];
        if (auto c = task.find("compile"); c != task.end() && c->is_object())
            if (auto inc = c->find("include_dirs"); inc != c->end() && inc->is_array())
                for (const auto& d : *inc)
                    if (d.is_string())
                        includeDirs.push_back(d.get<std::string>());
        auto dir = m_files.materialise(read->taskFiles, "/task_files", "task", includeDirs);
        if (!dir)
            return dir.error();
        folders.push_back(dir.value());
        local.erase("task_files");
        local["task_dir"] = dir->string();
    }
    if (!read->inputsFiles.empty()) {
        auto dir = m_files.materialise(read->inputsFiles, "/inputs_files", "inputs");
        if (!dir)
            return dir.error();
        folders.push_back(dir.value());
        local.erase("inputs_files");
        local["inputs_dir"] = dir->string();
    }
    return local;
}

Runner::RequestFolders::~RequestFolders()
{
    for (const auto& f : paths)
        removeTree(f);
}

namespace {

// Every file of a folder as this runner reads it: its relative path -> its SHA-256.
nlohmann::json filesAsRead(const fs::path& folder)
{
    nlohmann::json files = nlohmann::json::object();
    std::error_code ec;
    for (auto it = fs::recursive_directory_iterator(folder, ec); !ec && it != fs::recursive_directory_iterator();
         it.increment(ec)) {
        std::error_code fileEc;
        if (it->symlink_status(fileEc).type() != fs::file_type::regular)
            continue;
        auto sha = sha256OfFile(it->path().string());
        files[fs::relative(it->path(), folder, fileEc).generic_string()] = sha ? sha.value() : sha.error().why;
    }
    return files;
}

// The task's inputs at the plan's first shape, in `storage`: read from the inputs folder when
// the request has one, else drawn from each input's first distribution.
Result<std::map<std::string, RawTensor>> firstShapeInputs(const RunPlan& plan,
                                                         std::map<std::string, std::vector<unsigned char>>& storage)
{
    const Task& task = plan.task;
    const ShapeBinding& shape = plan.runShapes.front().binding;
    std::map<std::string, RawTensor> inputs;
    for (std::size_t i = 0; i < task.inputs.size(); ++i) {
        const TensorSpec& spec = task.inputs[i];
        auto ext = task.extents(spec, shape);
        if (!ext)
            return ext.error();
        std::int64_t n = 1;
        for (std::int64_t e : ext.value())
            n *= e;
        auto& buffer = storage[spec.name];
        buffer.resize(static_cast<std::size_t>(n) * static_cast<std::size_t>(dtypeSize(spec.dtype)));
        RawTensor raw{buffer.data(), spec.dtype, ext.value(), false};
        if (!plan.inputsDir.empty()) {
            auto bytes = readNpyExpecting(fs::path(plan.inputsDir) / (spec.name + ".npy"), spec.dtype, ext.value());
            if (!bytes)
                return bytes.error();
            std::copy(bytes->begin(), bytes->end(), buffer.begin());
        } else if (!spec.distributions.empty()) {
            if (auto r = TorchBridge::fillInput(raw, spec.distributions.front(), deriveSeed(plan.seeds.front(), i)); !r)
                return r.error();
        }
        inputs[spec.name] = raw;
    }
    return inputs;
}

// The reference at the first shape, on the CPU: its first output's first 64 values.
Result<nlohmann::json> referenceAtFirstShape(const RunPlan& plan)
{
    std::map<std::string, std::vector<unsigned char>> storage;
    auto inputs = firstShapeInputs(plan, storage);
    if (!inputs)
        return inputs.error();
    auto reference = TorchBridge::prepareReference(plan.task, inputs.value());
    if (!reference)
        return reference.error();
    if (auto r = reference.value()->run(); !r)
        return r.error();
    const std::string output = plan.task.outputs.front().name;
    auto values = reference.value()->resultAsDouble(output);
    if (!values)
        return values.error();
    const std::size_t shown = std::min<std::size_t>(values->size(), 64);
    return nlohmann::json{{"output", output},
                          {"elements", values->size()},
                          {"values", std::vector<double>(values->begin(), values->begin() + static_cast<std::ptrdiff_t>(shown))}};
}

} // namespace

void Runner::testPreparedRun(const nlohmann::json& request, std::int64_t id)
{
    auto fail = [&](const Error& e) { m_channel.error(id, e, false); };
    const auto inner = request.find("request");
    if (inner == request.end() || !inner->is_object())
        return fail(Error::inFile("request", "/request", "run test_prepared_run", "give the run request under \"request\""));
    RequestFolders folders;
    auto local = localise(*inner, folders.paths);
    if (!local)
        return fail(local.error());
    auto plan = planRun(local.value());
    if (!plan)
        return fail(plan.error());
    char cwd[4096] = {};
    nlohmann::json out = {{"task_dir", plan->task.directory.string()},
                          {"inputs_dir", plan->inputsDir},
                          {"files", filesAsRead(plan->task.directory)},
                          {"candidate", plan->candidate().file},
                          {"shapes", plan->runShapes.size()},
                          {"cwd", ::getcwd(cwd, sizeof cwd) ? std::string(cwd) : std::string()}};
    auto reference = referenceAtFirstShape(plan.value());
    if (!reference)
        return fail(reference.error());
    out["reference"] = std::move(reference.value());
    m_channel.send({{"type", "report"}, {"id", id}, {"report", out}});
}

} // namespace kf::device
