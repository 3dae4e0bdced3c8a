#include "device/runner/Sanitize.h"
#include "engine/protocol/Verdict.h"

#include "device/DeviceInfo.h"

#include "device/runner/SanitizerTool.h"
#include "engine/core/Files.h"
#include "engine/core/Process.h"
#include "engine/core/TempFolder.h"
#include "engine/protocol/Protocol.h"
#include "engine/sanitize/SanitizerXml.h"

#include <chrono>
#include <csignal>
#include <cstring>
#include <cstdlib>
#include <fcntl.h>
#include <filesystem>
#include <map>
#include <spawn.h>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>

extern char** environ;

namespace fs = std::filesystem;
using nlohmann::json;

namespace kf::device {

namespace {

constexpr int kPrintLimit = 100;
constexpr int kErrorExit = 86;

struct Child {
    std::string tool;
    pid_t pid = -1;
    fs::path xml, out, err;
    std::chrono::steady_clock::time_point started;
    bool done = false;
    int status = 0;
    bool timedOut = false;
    double ms = 0;
};

// The request a child runs: the client's, on the sanitize shapes, one trial, the first seed,
// nothing saved, no sanitize of its own.
json childRequest(const json& request, const protocol::SanitizeSettings& s)
{
    json r = request;
    for (const char* k : {"dump", "held_out_shapes", "sanitize", "first_trial", "inputs_dir", "placement", "samples"})
        r.erase(k);
    json shapes = json::array();
    for (const ShapeBinding& b : s.shapes) {
        json o = json::object();
        for (const auto& [name, value] : b.values)
            o[name] = value;
        if (!b.label.empty())
            o["label"] = b.label;
        shapes.push_back(o);
    }
    r["only_shapes"] = shapes;
    r["set_name"] = "custom";
    r["trials"] = 1;
    if (r.contains("seeds") && r["seeds"].is_array() && !r["seeds"].empty())
        r["seeds"] = json::array({r["seeds"][0]});
    r["id"] = 1;
    return r;
}

Result<pid_t> spawnChild(const std::vector<std::string>& args, const fs::path& in, const fs::path& out, const fs::path& err)
{
    std::vector<std::string> env;
    for (char** e = environ; e && *e; ++e) {
        std::string kv(*e);
        if (kv.rfind("KF_RUNNER_EXACT_ALLOC=", 0) == 0 || kv.rfind("KF_RUNNER_FORCE_CPU=", 0) == 0)
            continue;
        env.push_back(kv);
    }
    env.push_back("KF_RUNNER_EXACT_ALLOC=1");
    std::vector<char*> envp;
    for (auto& s : env)
        envp.push_back(s.data());
    envp.push_back(nullptr);
    std::vector<std::string> copy = args;
    std::vector<char*> argv;
    for (auto& a : copy)
        argv.push_back(a.data());
    argv.push_back(nullptr);
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_addopen(&fa, 0, in.c_str(), O_RDONLY, 0);
    posix_spawn_file_actions_addopen(&fa, 1, out.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
    posix_spawn_file_actions_addopen(&fa, 2, err.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
    const SpawnAttributes attr({SIGPIPE, SIGINT, SIGTERM, SIGHUP, SIGCHLD});
    pid_t pid = -1;
    const int rc = ::posix_spawn(&pid, argv[0], &fa, attr.get(), argv.data(), envp.data());
    posix_spawn_file_actions_destroy(&fa);
    if (rc != 0)
        return Error::failed("start compute-sanitizer", std::string("posix_spawn failed: ") + std::strerror(rc));
    return pid;
}

std::string lastLines(const fs::path& file, std::size_t bytes = 600)
{
    auto text = readFileBytes(file);
    if (!text)
        return {};
    std::string t = text->size() > bytes ? text->substr(text->size() - bytes) : *text;
    for (char& c : t)
        if (c == '\n' || c == '\r')
            c = ' ';
    return t;
}

// The child's final message: a report (its verdict) or an error (why it could not run).
std::string childOutcome(const fs::path& out)
{
    auto text = readFileBytes(out, protocol::kMaxLineBytes);   // one report
    if (!text)
        return "no output";
    std::string outcome = "no report";
    std::size_t pos = 0;
    while (pos < text->size()) {
        std::size_t nl = text->find('\n', pos);
        const std::string line = text->substr(pos, nl == std::string::npos ? std::string::npos : nl - pos);
        pos = nl == std::string::npos ? text->size() : nl + 1;
        const json m = json::parse(line, nullptr, false);
        if (!m.is_object())
            continue;
        const std::string type = m.value("type", "");
        if (type == "report" && m.contains("report") && m["report"].is_object())
            outcome = "verdict " + m["report"].value("verdict", std::string("?"));
        else if (type == "error" && m.contains("why") && m["why"].is_string())
            outcome = "error: " + m["why"].get<std::string>();
    }
    return outcome;
}

std::string findingKey(const protocol::SanitizerFinding& f)
{
    auto access = [](const protocol::SanitizerAccess& a) { return a.access + "@" + a.pc + ":" + std::to_string(a.line); };
    return f.tool + "|" + f.kind + "|" + access(f.where) + "|" + (f.other ? access(*f.other) : std::string());
}

/// compute-sanitizer started once per tool on the runner itself (`self`), reading the child's
/// request; a tool that cannot start has its error in `section` at once.
std::vector<Child> startTools(const RunPlan& plan, const std::string& toolPath, const fs::path& folder, const fs::path& requestFile,
                              const std::string& self, protocol::SanitizerSection& section)
{
    const protocol::SanitizeSettings& s = *plan.sanitize;
    std::vector<Child> children;
    for (const std::string& t : s.tools) {
        Child c;
        c.tool = t;
        c.xml = folder / (t + ".xml");
        c.out = folder / (t + ".out");
        c.err = folder / (t + ".err");
        std::vector<std::string> args = {toolPath, "--tool", t, "--xml", "--save", c.xml.string(),
                                         "--print-limit", std::to_string(kPrintLimit), "--error-exitcode", std::to_string(kErrorExit),
                                         "--launch-timeout", std::to_string(std::max<std::int64_t>(s.timeoutMs / 1000, 10)),
                                         "--check-exit-code", "no"};
        // Only the candidate's kernels are checked, except by initcheck: it does not see what an
        // unchecked kernel writes, so with LibTorch's kernels filtered out it calls every input
        // LibTorch drew on the GPU uninitialised (seen on the H100). Its findings in LibTorch's
        // kernels are dropped below like any finding outside the candidate's kernels.
        if (t != "initcheck")
            for (const auto& [expr, lowered] : plan.loweredNames) {
                args.push_back("--kernel-name");
                args.push_back("kne=" + lowered);
            }
        args.push_back(self);
        c.started = std::chrono::steady_clock::now();
        auto pid = spawnChild(args, requestFile, c.out, c.err);
        protocol::SanitizerToolRun run;
        run.tool = t;
        if (!pid) {
            c.done = true;
            c.status = -1;
            section.tools.push_back(run);
            section.tools.back().error = pid.error().why;
        }
        else {
            c.pid = pid.value();
        }
        children.push_back(c);
    }
    return children;
}

/// Reaps the children that finished and kills those past the timeout; true while any runs.
bool reapChildren(std::vector<Child>& children, std::int64_t timeoutMs)
{
    bool running = false;
    for (Child& c : children) {
        if (c.done || c.pid <= 0)
            continue;
        int st = 0;
        const pid_t r = ::waitpid(c.pid, &st, WNOHANG);
        const double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - c.started).count();
        if (r == c.pid) {
            c.done = true;
            c.status = st;
            c.ms = ms;
            ::kill(-c.pid, SIGKILL);   // anything the tool left in its group
        } else if (ms > static_cast<double>(timeoutMs)) {
            ::kill(-c.pid, SIGKILL);
            ::waitpid(c.pid, &st, 0);
            c.done = true;
            c.timedOut = true;
            c.ms = ms;
        } else {
            running = true;
        }
    }
    return running;
}

/// Waits for all, killing a tool that overruns; the heartbeat thread keeps the client informed.
void waitForTools(Channel& channel, std::int64_t id, std::vector<Child>& children, std::int64_t timeoutMs)
{
    int lastReport = -1;
    auto lastSaid = std::chrono::steady_clock::now();
    while (true) {
        const bool running = reapChildren(children, timeoutMs);
        int finished = 0;
        for (const Child& c : children)
            finished += c.done ? 1 : 0;
        // Progress when a tool finishes, and every 2 s: progress is work to the supervisor, whose
        // stuck-runner timeout would otherwise see a long tool as a hang.
        const auto now = std::chrono::steady_clock::now();
        if (finished != lastReport || now - lastSaid > std::chrono::seconds(2)) {
            lastReport = finished;
            lastSaid = now;
            std::string names;
            for (const Child& c : children)
                if (!c.done)
                    names += (names.empty() ? "" : ", ") + c.tool;
            channel.progress(id, 900 + 100 * finished / std::max<int>(1, static_cast<int>(children.size())),
                             "compute-sanitizer: " + (names.empty() ? std::string("reading the results") : names + " running"));
        }
        if (!running)
            break;
        std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
}

/// One tool's run: how it ended, its findings in the candidate's kernels (added to `section`'s,
/// each place once; `seen` indexes them), and whether its child really ran the candidate.
protocol::SanitizerToolRun readToolRun(const Child& c, const std::vector<std::string>& kernels, std::int64_t timeoutMs,
                                       std::map<std::string, std::size_t>& seen, protocol::SanitizerSection& section)
{
    protocol::SanitizerToolRun run;
    run.tool = c.tool;
    run.durationMs = static_cast<std::int64_t>(c.ms);
    run.exitCode = WIFEXITED(c.status) ? WEXITSTATUS(c.status) : -1;
    if (c.timedOut) {
        run.error = "did not finish within " + std::to_string(timeoutMs / 1000) + " s";
        return run;
    }
    if (WIFSIGNALED(c.status)) {
        run.error = "compute-sanitizer was killed by signal " + std::to_string(WTERMSIG(c.status)) + " (" + lastLines(c.err) + ")";
        return run;
    }
    auto text = readFileBytes(c.xml);   // 64 MiB, what parseSanitizerXml reads
    if (!text) {
        run.error = "compute-sanitizer wrote no XML that could be read (" + text.error().why + "; exit code " +
                    std::to_string(run.exitCode) + "): " + lastLines(c.err);
        return run;
    }
    auto parsed = sanitize::parseSanitizerXml(*text, c.tool, c.xml.filename().string());
    if (!parsed) {
        run.error = parsed.error().message();
        return run;
    }
    run.ran = true;
    run.truncated = parsed->records >= kPrintLimit;
    for (protocol::SanitizerFinding& f : parsed->findings) {
        if (f.hostSide || !sanitize::findingInKernels(f, kernels)) {
            ++run.ignored;
            continue;
        }
        const std::string key = findingKey(f);
        if (auto it = seen.find(key); it != seen.end()) {
            section.findings[it->second].count += f.count;
            continue;
        }
        seen[key] = section.findings.size();
        section.findings.push_back(std::move(f));
        ++run.findings;
    }
    // The child itself must have run the candidate: a child that could not (no GPU memory,
    // a LibTorch start-up failure) checked nothing.
    const std::string outcome = childOutcome(c.out);
    if (outcome.rfind("verdict ", 0) != 0 && run.findings == 0) {
        run.ran = false;
        run.error = "the runner under compute-sanitizer did not finish its run (" + outcome + "): " + lastLines(c.err);
    } else if (run.exitCode == kErrorExit && run.findings == 0 && run.ignored == 0) {
        run.ran = false;
        run.error = "compute-sanitizer reported errors its XML does not list: " + lastLines(c.out);
    }
    return run;
}

} // namespace

protocol::SanitizerSection runSanitizer(Channel& channel, const RunPlan& plan, const json& requestJson)
{
    protocol::SanitizerSection section;
    const auto started = std::chrono::steady_clock::now();
    const protocol::SanitizeSettings& s = *plan.sanitize;
    const auto& tool = sanitizerTool();
    if (!tool) {
        section.reason = "compute-sanitizer was not found on " + hostName() +
                         " (set KF_COMPUTE_SANITIZER to its path, or install the CUDA toolkit's compute-sanitizer)";
        return section;
    }
    section.toolVersion = tool->version;
    section.toolPath = tool->path;
    for (const ShapeBinding& b : s.shapes)
        section.shapes.push_back(b.describe());
    if (!plan.seeds.empty())
        section.seed = protocol::seedText(plan.seeds.front());

    TempFolder dir("kf-sanitize-");
    if (dir.path().empty()) {
        section.reason = "could not make a private temporary folder for the tools' output";
        return section;
    }
    const fs::path folder = dir.path();
    const fs::path requestFile = folder / "request.jsonl";
    {
        std::string lines = protocol::toLine(childRequest(requestJson, s)) + protocol::toLine({{"type", "shutdown"}, {"id", 2}});
        if (auto w = writeFileAtomic(requestFile, lines); !w) {
            section.reason = "could not write the child's request: " + w.error().message();
            return section;
        }
    }
    std::string self = "/proc/self/exe";
    std::error_code ec;
    if (fs::path exe = fs::read_symlink("/proc/self/exe", ec); !ec)
        self = exe.string();

    std::vector<Child> children = startTools(plan, tool->path, folder, requestFile, self, section);
    waitForTools(channel, plan.id, children, s.timeoutMs);

    std::vector<std::string> kernels;
    for (const auto& [expr, lowered] : plan.loweredNames)
        kernels.push_back(expr);
    std::map<std::string, std::size_t> seen;
    for (const Child& c : children)
        if (c.pid > 0)
            section.tools.push_back(readToolRun(c, kernels, s.timeoutMs, seen, section));
    section.ran = true;
    section.durationMs = static_cast<std::int64_t>(
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - started).count());
    return section;
}

protocol::SanitizerSection sectionNotRun(bool requested, const std::string& reason)
{
    protocol::SanitizerSection section;
    section.requested = requested;
    section.reason = reason;
    if (const auto& tool = sanitizerTool()) {
        section.toolVersion = tool->version;
        section.toolPath = tool->path;
        if (section.reason.empty())
            section.reason = protocol::kSanitizerNotRequested;
    } else if (section.reason.empty()) {
        section.reason = "no compute-sanitizer on " + hostName();
    }
    return section;
}

void addSanitizerSection(json& report, const protocol::SanitizerSection& section)
{
    report["sanitizer"] = protocol::toJson(section);
    if (report.value("verdict", std::string()) != protocol::verdictName(protocol::Verdict::Pass))
        return;
    if (!section.ran)
        return;   // not run: the gate decides what that means (its reason is in the section)
    if (!section.clean()) {
        report["verdict"] = protocol::verdictName(protocol::Verdict::Fail);
        report["summary"] = section.firstProblem();
    }
}

} // namespace kf::device
