#include "engine/agent/Prompt.h"

#include "engine/cast/ReferenceSteps.h"
#include "engine/cast/ScriptTape.h"
#include "engine/compile/Compiler.h"
#include "engine/core/Files.h"
#include "resources/prelude.h"

#include <algorithm>
#include <set>
#include <system_error>

namespace kf::agent {
namespace {

namespace fs = std::filesystem;

// The longest file quoted into a prompt (a TorchScript module's code, an imported problem).
constexpr int kMaxQuotedLines = 400;
constexpr std::uintmax_t kMaxQuotedBytes = 64 * 1024;

std::string firstLines(const std::string& text, int maxLines)
{
    size_t pos = 0;
    for (int line = 0; line < maxLines; ++line) {
        pos = text.find('\n', pos);
        if (pos == std::string::npos)
            return text;
        ++pos;
    }
    return text.substr(0, pos) + "# … (cut after " + std::to_string(maxLines) + " lines)\n";
}

std::string preludeComment()
{
    for (const EmbeddedFile& f : prelude::files()) {
        if (f.name != "kf/prelude.cuh")
            continue;
        std::string out;
        size_t pos = 0;
        std::string_view text = f.contents;
        while (pos < text.size()) {
            size_t end = text.find('\n', pos);
            std::string_view line = text.substr(pos, end == std::string_view::npos ? std::string_view::npos : end - pos);
            if (line.rfind("#pragma", 0) == 0) {
                pos = end == std::string_view::npos ? text.size() : end + 1;
                continue;
            }
            if (line.rfind("//", 0) != 0)
                break;
            out += std::string(line.substr(line.size() > 2 && line[2] == ' ' ? 3 : 2)) + "\n";
            pos = end == std::string_view::npos ? text.size() : end + 1;
        }
        return out;
    }
    return {};
}

} // namespace

std::optional<RegistryEntry> bestActiveEntry(const RegistryIndex& index, const std::string& taskName,
                                             const std::string& arch)
{
    const RegistryEntry* best = nullptr;
    for (const RegistryEntry& e : index.kernels)
        if (!e.deprecated() && e.taskName == taskName && e.arch == arch
            && (!best || e.geomeanSpeedup > best->geomeanSpeedup))
            best = &e;
    if (!best)
        return std::nullopt;
    return *best;
}

Result<PromptFacts> gatherPromptFacts(const Task& task, const PromptOptions& options)
{
    PromptFacts f;
    std::string arch = options.arch.empty() ? (task.architectures.empty() ? "sm_90" : task.architectures.front())
                                            : options.arch;
    f.arch = findArchitecture(arch);
    if (!f.arch) {
        std::string known;
        for (const ArchInfo& a : knownArchitectures())
            known += (known.empty() ? "" : ", ") + a.arch;
        return Error::failed("write the agent prompt", "unknown architecture '" + arch + "'", "use one of: " + known);
    }
    auto nvrtc = nvrtcVersion();
    f.nvrtc = nvrtc ? "NVRTC " + nvrtc.value() : "NVRTC (not found on this machine: " + nvrtc.error().why + ")";

    auto steps = cast::referenceSteps(task);
    if (steps)
        f.steps = steps->steps;
    else
        f.stepsProblem = steps.error().message();
    if (task.reference.kind == Reference::Kind::TorchScript) {
        auto code = cast::scriptCode(task);
        if (code) {
            f.scriptEntry = code->entry;
            f.scriptCode = firstLines(code->text, kMaxQuotedLines);
        }
    }
    std::error_code ec;
    const fs::path imported = task.directory / "imported";
    if (fs::is_directory(imported, ec)) {
        std::vector<fs::path> files;
        for (fs::directory_iterator it(imported, ec), end; !ec && it != end; it.increment(ec))
            // Links are not followed: a shared task folder must not quote other files of the machine.
            if (it->symlink_status(ec).type() == fs::file_type::regular && it->file_size(ec) <= kMaxQuotedBytes
                && std::set<std::string>{".py", ".yml", ".yaml", ".md", ".txt"}.count(it->path().extension().string()))
                files.push_back(it->path());
        std::sort(files.begin(), files.end());
        for (const fs::path& p : files)
            if (auto bytes = readFileBytes(p); bytes && bytes->find('\0') == std::string::npos)
                f.imported.emplace_back(p.filename().string(), firstLines(*bytes, kMaxQuotedLines));
    }

    auto dir = Registry::resolveDirectory(options.registryDir, task.directory);
    if (dir) {
        f.registryDir = dir->string();
        auto index = Registry(*dir).load();
        if (index) {
            f.registry = std::move(index).value();
            f.best = bestActiveEntry(*f.registry, task.name, f.arch->arch);
        } else {
            f.registryProblem = index.error().message();
        }
    } else {
        f.registryProblem = dir.error().message();
    }
    f.preludeApi = preludeComment();
    f.library = loadSkills(options.skillDirs);
    return f;
}

std::string Prompt::markdown() const
{
    std::string out = "# Task: write a faster CUDA kernel for `" + task + "` on " + arch + "\n\n"
                      "This is a strict task. Every rule below is checked by KernelForge's verifier, benchmark and "
                      "promotion gates; nothing you write is trusted until it passes them.\n";
    for (size_t i = 0; i < sections.size(); ++i)
        out += "\n## " + std::to_string(i + 1) + ". " + sections[i].title + "\n\n" + sections[i].body;
    return out;
}

nlohmann::json Prompt::toJson() const
{
    nlohmann::json sec = nlohmann::json::array();
    for (const PromptSection& s : sections)
        sec.push_back({{"key", s.key}, {"title", s.title}, {"markdown", s.body}});
    nlohmann::json sk = nlohmann::json::array();
    for (const PromptSkill& c : skills)
        sk.push_back({{"name", c.name}, {"reason", c.reason}, {"origin", c.origin}});
    return {{"task", task}, {"arch", arch}, {"sections", sec}, {"skills", sk}, {"markdown", markdown()}};
}

} // namespace kf::agent
