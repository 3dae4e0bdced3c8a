// The twelve sections of an agent prompt: facts from the task, the architecture table and the
// registry, then the fixed prose of resources/agent/rules.md under the same key.
#include "engine/agent/Prompt.h"

#include "engine/agent/ReferenceText.h"
#include "engine/registry/Gates.h"
#include "resources/agent.h"

#include <algorithm>
#include <cinttypes>
#include <cmath>
#include <cstdio>
#include <map>

namespace kf::agent {
namespace {

using nlohmann::json;

std::string fmt(const char* f, double v)
{
    char buf[64];
    std::snprintf(buf, sizeof buf, f, v);
    return buf;
}

std::string number(double v)
{
    return fmt("%.6g", v);
}

std::string joined(const std::vector<std::string>& v, const char* sep = ", ")
{
    std::string s;
    for (size_t i = 0; i < v.size(); ++i)
        s += (i ? sep : "") + v[i];
    return s;
}

std::string replaceAll(std::string s, const std::string& from, const std::string& to)
{
    for (size_t pos = s.find(from); pos != std::string::npos; pos = s.find(from, pos + to.size()))
        s.replace(pos, from.size(), to);
    return s;
}

// "## key" sections of resources/agent/*.md.
const std::map<std::string, std::string>& prose()
{
    static const std::map<std::string, std::string> sections = [] {
        std::map<std::string, std::string> out;
        for (const EmbeddedFile& f : agentres::files()) {
            if (f.name.rfind("agent/", 0) != 0)
                continue;
            std::string text(f.contents), key;
            size_t pos = 0;
            while (pos < text.size()) {
                size_t end = text.find('\n', pos);
                if (end == std::string::npos)
                    end = text.size();
                std::string line = text.substr(pos, end - pos);
                if (line.rfind("## ", 0) == 0)
                    key = line.substr(3);
                else if (!key.empty())
                    out[key] += line + "\n";
                pos = end + 1;
            }
        }
        for (auto& [k, v] : out) {   // trim blank lines at both ends
            size_t a = v.find_first_not_of('\n');
            size_t b = v.find_last_not_of('\n');
            v = a == std::string::npos ? std::string() : v.substr(a, b - a + 1) + "\n";
        }
        return out;
    }();
    return sections;
}

std::string proseFor(const std::string& key, const std::string& taskPath, const std::string& name)
{
    auto it = prose().find(key);
    if (it == prose().end())
        return {};
    std::string stem = name.size() > 3 && name.substr(name.size() - 3) == ".cu" ? name.substr(0, name.size() - 3) : name;
    return replaceAll(replaceAll(replaceAll(it->second, "{task}", taskPath), "{name}", name), "{stem}", stem);
}

std::string toleranceText(const TensorSpec& o)
{
    const Tolerance& t = o.tolerance;
    std::string atol = t.atolMode == Tolerance::AtolMode::Rms ? number(t.atol) + " × rms(expected)" : number(t.atol);
    return "|actual − expected| ≤ " + atol + " + " + number(t.rtol) + " × |expected|"
           + (o.toleranceGiven ? " (set by the task)" : " (the default for " + std::string(dtypeName(o.dtype)) + ")");
}

// A fence the quoted text cannot close: one backtick more than its longest run (at least three).
std::string fenceFor(const std::string& text)
{
    size_t longest = 0, run = 0;
    for (char c : text) {
        run = c == '`' ? run + 1 : 0;
        longest = std::max(longest, run);
    }
    return std::string(std::max<size_t>(3, longest + 1), '`');
}

std::string quoted(const std::string& text, const char* lang)
{
    const std::string fence = fenceFor(text);
    return fence + lang + "\n" + text + (text.empty() || text.back() == '\n' ? "" : "\n") + fence + "\n\n";
}

std::string bindingsList(const std::vector<ShapeBinding>& shapes)
{
    std::string out;
    for (const ShapeBinding& s : shapes)
        out += "- " + (s.label.empty() ? std::string() : "`" + s.label + "`: ") + s.describe() + "\n";
    return out.empty() ? "- (none)\n" : out;
}

std::string operation(const Task& task, const PromptFacts& f)
{
    std::string out = "Task `" + task.name + "`" + (task.description.empty() ? "." : ": " + task.description) + "\n\n";
    if (!f.steps.empty()) {
        out += "The reference computes, step by step:\n\n" + stepsInWords(f.steps) + "\nAs PyTorch code (the verifier runs "
               "the same operations in LibTorch):\n\n```python\n" + stepsAsPyTorch(task, f.steps) + "```\n\n";
    } else if (!f.stepsProblem.empty()) {
        out += "The reference could not be read as a list of catalog operations (" + f.stepsProblem
               + "); its code below is the definition.\n\n";
    }
    if (!f.scriptCode.empty())
        out += "The reference is the TorchScript module `" + task.reference.torchscript.generic_string() + "`; its code ("
               + f.scriptEntry + "):\n\n" + quoted(f.scriptCode, "python");
    for (const auto& [name, text] : f.imported) {
        const std::string ext = name.substr(name.rfind('.') == std::string::npos ? name.size() : name.rfind('.'));
        const char* lang = ext == ".py" ? "python" : ext == ".yml" || ext == ".yaml" ? "yaml" : "";
        out += "The original problem this task was imported from (`imported/" + name + "`):\n\n" + quoted(text, lang);
    }
    return out;
}

std::string hardware(const PromptFacts& f)
{
    const ArchInfo& a = *f.arch;
    const int KiB = 1024;
    std::string out = "Target: **" + a.arch + "** (compute capability " + std::to_string(a.major) + "." + std::to_string(a.minor)
                      + "), measured on a GPU like the " + a.exampleGpu + ".\n\n| quantity | value |\n|---|---|\n";
    auto row = [&](const std::string& k, const std::string& v) { out += "| " + k + " | " + v + " |\n"; };
    row("streaming multiprocessors (SMs)", std::to_string(a.smCount) + " SMs");
    row("threads per block / per SM", std::to_string(a.maxThreadsPerBlock) + " / " + std::to_string(a.maxThreadsPerSm));
    row("resident blocks per SM", std::to_string(a.maxBlocksPerSm));
    row("warp size", std::to_string(a.warpSize));
    row("32-bit registers per SM / per block / per thread",
        std::to_string(a.regsPerSm) + " / " + std::to_string(a.regsPerBlock) + " / " + std::to_string(a.maxRegsPerThread));
    row("shared memory per SM", std::to_string(a.sharedPerSm / KiB) + " KiB");
    row("shared memory per block (default / opt-in maximum)",
        std::to_string(a.sharedPerBlock / KiB) + " KiB / " + std::to_string(a.sharedPerBlockOptin / KiB) + " KiB");
    row("shared memory reserved per block", std::to_string(a.reservedSharedPerBlock) + " bytes");
    row("L2 cache", std::to_string(a.l2Bytes / (KiB * KiB)) + " MiB");
    row("DRAM bandwidth (peak)", number(a.peakDramGBs) + " GB/s");
    row("FP32 (peak)", number(a.peakFp32Tflops) + " TFLOP/s");
    row("FP16 tensor cores, dense (peak)", number(a.peakFp16TensorTflops) + " TFLOP/s");
    out += "\nPeaks are the datasheet numbers of that board; a memory-bound kernel that reaches 80–90 % of the DRAM "
           "bandwidth is near its limit.\n";
    return out;
}

std::string shapes(const Task& task)
{
    std::string out = "| tensor | role | dtype | shape |\n|---|---|---|---|\n";
    for (const auto* list : {&task.inputs, &task.outputs})
        for (const TensorSpec& t : *list)
            out += "| `" + t.name + "` | " + (list == &task.inputs ? "input" : "output") + " | "
                   + std::string(dtypeName(t.dtype)) + " | [" + joined(t.shape) + "] |\n";
    out += "\nTensors are contiguous and row-major; extents are the symbols below.\n\n";
    if (!task.symbols.empty()) {
        out += "| symbol | min | max | multiple of |\n|---|---|---|---|\n";
        for (const SymbolSpec& s : task.symbols)
            out += "| `" + s.name + "` | " + std::to_string(s.min) + " | "
                   + (s.max == INT64_MAX ? std::string("no limit") : std::to_string(s.max)) + " | "
                   + std::to_string(s.multipleOf) + " |\n";
        out += "\n";
    }
    if (!task.parameters.empty()) {
        out += "Parameters (constants the expressions may use):";
        for (const auto& [k, v] : task.parameters)
            out += " `" + k + "` = " + (v.isInt ? std::to_string(v.i) : number(v.d)) + ";";
        out.back() = '\n';
        out += "\n";
    }
    if (!task.constraints.empty()) {
        out += "Constraints every shape satisfies:";
        for (const Expr& c : task.constraints)
            out += " `" + c.text() + "`;";
        out.back() = '\n';
        out += "\n";
    }
    out += "Test shapes (verification runs every one of them):\n\n" + bindingsList(task.testShapes)
           + "\nBenchmark shapes (the speedup is measured on these):\n\n" + bindingsList(task.benchmarkShapes) + "\n";
    int heldOut = heldOutRequiredFor(task);
    if (heldOut > 0)
        out += "Held-out shapes: verification before promotion also runs shapes that are not listed anywhere, drawn "
               "from the symbol ranges and constraints above with a secret seed (each symbol at most its largest test "
               "value, odd extents preferred). Your kernel must be correct for **every** shape the ranges admit, not "
               "only the listed ones.\n";
    else
        out += "Held-out shapes: none (the ranges admit no shape beyond the test shapes), so the listed test shapes "
               "are the whole correctness check.\n";
    return out;
}

std::string objective(const Task& task, const PromptFacts& f)
{
    std::string out = "Baseline: the LibTorch reference above, run eagerly on the same GPU, timed interleaved with your "
                      "kernel on every benchmark shape.\n\n";
    if (!task.bytesFormula.empty() && !task.benchmarkShapes.empty()) {
        out += "Memory-traffic floor (the bytes the task must move at the peak DRAM bandwidth; no kernel is faster):\n\n";
        for (const ShapeBinding& s : task.benchmarkShapes) {
            auto bytes = task.bytesFormula.eval(task.environment(s));
            if (!bytes)
                continue;
            double b = bytes->asDouble();
            out += "- " + s.describe() + ": " + number(b / 1e6) + " MB → at least " + fmt("%.2f", b / (f.arch->peakDramGBs * 1e3))
                   + " µs\n";
        }
        out += "\n";
    }
    double threshold = f.registry ? f.registry->threshold : kDefaultSpeedupThreshold;
    out += "To be promoted into the registry of verified kernels, the geometric-mean speedup over the eager baseline "
           "across the benchmark shapes must be at least **" + fmt("%.2f", threshold) + "×**";
    if (f.registry && f.registry->compileThreshold)
        out += ", and at least " + fmt("%.2f", *f.registry->compileThreshold) + "× of `torch.compile`'s time";
    out += ".\n\n";
    if (f.best)
        out += "Current best for this task on " + f.arch->arch + ": `" + f.best->id + "` (" + f.best->kernelFile + "), "
               + fmt("%.2f", f.best->geomeanSpeedup) + "× geometric mean, " + fmt("%.2f", f.best->minSpeedup)
               + "× on its slowest shape. Beat it.\n";
    else if (f.registry)
        out += "Current best for this task on " + f.arch->arch + ": none promoted yet.\n";
    else
        out += "Current best: unknown (" + f.registryProblem + ").\n";
    return out;
}

std::string constraints(const Task& task, const PromptFacts& f, const PromptOptions& o, const std::string& taskPath)
{
    std::string out = "- Compiler: " + f.nvrtc + " (runtime compilation), for " + f.arch->arch + ", C++ standard "
                      + task.compile.cxxStd + (task.compile.fastMath ? ", --use_fast_math" : "") + ".\n";
    if (!task.compile.defines.empty()) {
        out += "- The task defines:";
        for (const auto& [k, v] : task.compile.defines)
            out += " `" + k + (v.empty() ? "" : "=" + v) + "`";
        out += ".\n";
    }
    if (!task.compile.extraOptions.empty())
        out += "- Extra compiler options of the task: `" + joined(task.compile.extraOptions, "` `") + "`.\n";
    out += "\nThe device library is available with `#include <kf/prelude.cuh>`:\n\n```\n" + f.preludeApi + "```\n\n";
    out += proseFor("constraints", taskPath, o.candidateName);
    return out;
}

std::string deliverables(const Task& task, const PromptOptions& o, const std::string& taskPath)
{
    std::string out = proseFor("deliverables", taskPath, o.candidateName) + "\n" + proseFor("plan-format", taskPath, o.candidateName);
    if (!task.candidates.empty()) {
        json t = taskToJson(task);
        if (t.contains("candidates") && t["candidates"].is_array() && !t["candidates"].empty()) {
            json plan = t["candidates"][0];
            std::string file = plan.value("file", std::string());
            plan.erase("file");
            out += "\nThe launch plan of this task's existing candidate `" + file + "`, for reference:\n\n```json\n"
                   + plan.dump(2) + "\n```\n";
        }
    }
    return out;
}

std::string correctness(const Task& task, const PromptOptions& o, const std::string& taskPath)
{
    std::string out = "Tolerances, per output:\n\n";
    for (const TensorSpec& t : task.outputs)
        out += "- `" + t.name + "` (" + std::string(dtypeName(t.dtype)) + "): " + toleranceText(t) + "\n";
    out += "\nInput values, per input (trials cycle through the list):\n\n";
    for (const TensorSpec& t : task.inputs) {
        std::vector<std::string> d;
        for (const Distribution& dist : t.distributions)
            d.push_back("`" + dist.toJson().dump() + "`");
        out += "- `" + t.name + "`: " + joined(d) + "\n";
    }
    out += "\n" + proseFor("correctness", taskPath, o.candidateName);
    return out;
}

std::string skillsSection(const std::vector<SkillChoice>& chosen, const SkillLibrary& lib)
{
    if (chosen.empty())
        return "No skills were bundled with this prompt.\n";
    std::string out = "Playbooks chosen for this task (" + std::to_string(chosen.size()) + " of "
                      + std::to_string(lib.skills.size()) + " known). They advise; the rules above decide.\n";
    for (const SkillChoice& c : chosen)
        out += "\n### " + c.skill->name + "\n\n*Why: " + c.reason + ".* " + c.skill->description + "\n\n" + c.skill->body + "\n";
    return out;
}

} // namespace

const std::vector<std::string>& promptSectionKeys()
{
    static const std::vector<std::string> keys = {"operation", "hardware", "shapes", "objective", "constraints", "deliverables",
                                                  "correctness", "benchmark", "files", "forbidden", "check", "skills"};
    return keys;
}

Result<Prompt> renderPrompt(const Task& task, const PromptFacts& f, const PromptOptions& o)
{
    const std::string taskPath = o.taskPath.empty() ? task.directory.generic_string() : o.taskPath;
    auto chosen = selectSkills(f.library, traitsOf(task, f.steps, f.arch->arch), o.skills);
    if (!chosen)
        return chosen.error();
    Prompt p;
    p.task = task.name;
    p.arch = f.arch->arch;
    for (const SkillChoice& c : *chosen)
        p.skills.push_back({c.skill->name, c.reason, c.skill->origin});
    auto add = [&](const char* key, const char* title, std::string body) {
        p.sections.push_back({key, title, std::move(body)});
    };
    add("operation", "Operation", operation(task, f) + proseFor("operation", taskPath, o.candidateName));
    add("hardware", "Target hardware", hardware(f));
    add("shapes", "Shapes", shapes(task));
    add("objective", "Objective", objective(task, f));
    add("constraints", "Constraints", constraints(task, f, o, taskPath));
    add("deliverables", "Required deliverables", deliverables(task, o, taskPath));
    add("correctness", "Correctness requirements", correctness(task, o, taskPath));
    add("benchmark", "Benchmark requirements",
        "Benchmark shapes: " + [&] {
            std::vector<std::string> s;
            for (const ShapeBinding& b : task.benchmarkShapes)
                s.push_back(b.describe());
            return s.empty() ? std::string("none listed") : joined(s, "; ");
        }() + ".\n\n" + proseFor("benchmark", taskPath, o.candidateName));
    add("files", "Files to produce", proseFor("files", taskPath, o.candidateName));
    add("forbidden", "Forbidden behaviour", proseFor("forbidden", taskPath, o.candidateName));
    add("check", "Check before you hand it back", proseFor("check", taskPath, o.candidateName));
    add("skills", "Skills", skillsSection(*chosen, f.library));
    return p;
}

std::string agentProse(const std::string& key, const std::string& taskPath, const std::string& name)
{
    return proseFor(key, taskPath, name);
}

std::string taskSchemaText()
{
    for (const EmbeddedFile& f : agentres::files())
        if (f.name.size() >= 14 && f.name.substr(f.name.size() - 14) == "task-schema.md")
            return std::string(f.contents);
    return {};
}

} // namespace kf::agent
