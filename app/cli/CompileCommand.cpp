#include "CompileCommand.h"

#include "ExitCodes.h"
#include "engine/analysis/Occupancy.h"
#include "engine/compile/CompileCache.h"
#include "engine/compile/Compiler.h"
#include "engine/compile/TaskCompile.h"
#include "engine/core/Files.h"
#include "engine/task/Task.h"

#include <nlohmann/json.hpp>

#include <cstdio>
#include <filesystem>
#include <iostream>
#include <memory>
#include <sstream>

namespace fs = std::filesystem;
using nlohmann::json;

namespace kf::cli {

namespace {

std::string fmt(double v, int prec = 1)
{
    char b[64];
    std::snprintf(b, sizeof b, "%.*f", prec, v);
    return b;
}

void printResources(std::ostream& out, const KernelResources& k)
{
    out << "    registers " << k.registers << " | static smem " << k.staticSharedBytes << " B";
    if (k.reservedSharedBytes)
        out << " (+" << k.reservedSharedBytes << " B reserved)";
    out << " | local/stack " << k.localBytes << " B | spills ";
    if (k.spillStoreBytes >= 0)
        out << k.spillStoreBytes << " B stored / " << k.spillLoadBytes << " B loaded";
    else
        out << "unknown";
    out << " | cmem[0] " << k.constBank0Bytes << " B | params " << k.paramBytes << " B | barriers " << k.barriers;
    if (k.maxThreadsPerBlock)
        out << " | launch bounds " << k.maxThreadsPerBlock << (k.minBlocksPerSm ? "," + std::to_string(k.minBlocksPerSm) : "");
    out << '\n';
    if (k.spillStoreBytes > 0 || k.spillLoadBytes > 0)
        out << "    warning: the kernel spills registers to local memory\n";
}

void printOccupancy(std::ostream& out, const Result<Occupancy>& occ, const std::string& arch)
{
    if (!occ) {
        out << "    occupancy on " << arch << ": cannot launch: " << occ.error().why << '\n';
        return;
    }
    const Occupancy& o = occ.value();
    out << "    occupancy on " << arch << ": " << fmt(o.occupancy * 100.0) << "% (" << o.activeBlocksPerSm
        << " blocks/SM, " << o.activeWarpsPerSm << " of " << o.maxWarpsPerSm << " warps), limited by "
        << limiterName(o.limiter) << '\n';
}

struct Job {
    std::string label;            ///< "vector_add/naive.cu"
    CompileRequest request;
    const Task* task = nullptr;
    const Candidate* candidate = nullptr;
};

// Options given on the command line apply to single files and override task settings.
void applyCommandLine(const CompileArgs& a, CompileOptions& o)
{
    for (const auto& d : a.defines) {
        auto eq = d.find('=');
        o.defines.emplace_back(d.substr(0, eq), eq == std::string::npos ? "1" : d.substr(eq + 1));
    }
    for (const auto& i : a.includeDirs)
        o.includeDirs.push_back(fs::absolute(i).string());
    if (a.fastMath)
        o.fastMath = true;
    o.optLevel = a.optLevel;
    if (a.maxRegisters)
        o.maxRegisters = a.maxRegisters;
}

/// One job per selected candidate and architecture of the task at `path`; `task` keeps the
/// loaded task alive for the jobs that point into it. Returns an exit code (kExitOk on success).
int taskJobs(const CompileArgs& a, const fs::path& path, std::unique_ptr<Task>& task, std::vector<Job>& jobs)
{
    auto loaded = loadTask(path, a.candidate.empty() ? std::vector<std::string>{} : std::vector<std::string>{a.candidate});
    if (!loaded)
        return fail(loaded.error(), kExitUsage);
    task = std::make_unique<Task>(std::move(loaded.value()));
    std::vector<const Candidate*> cands;
    if (!a.candidate.empty()) {
        const Candidate* c = task->findCandidate(a.candidate);
        if (!c) {
            std::cerr << "kforge: " << a.candidate << " is not a candidate of task " << task->name
                      << "; list it with its launch plan under \"candidates\" in task.json\n";
            return kExitUsage;
        }
        cands.push_back(c);
    } else {
        for (const auto& c : task->candidates)
            cands.push_back(&c);
    }
    const std::vector<std::string> archs = a.archs.empty() ? task->architectures : a.archs;
    for (const Candidate* c : cands) {
        for (const auto& arch : archs) {
            auto req = compileRequestFor(*task, *c, arch);
            if (!req)
                return fail(req.error(), kExitUsage);
            applyCommandLine(a, req->options);
            req->wantSass = a.showSass || a.json;
            jobs.push_back({task->name + "/" + c->file, std::move(req.value()), task.get(), c});
        }
    }
    return kExitOk;
}

/// One job per architecture for a single .cu file. Returns an exit code (kExitOk on success).
int fileJobs(const CompileArgs& a, const fs::path& path, std::vector<Job>& jobs)
{
    // A regular file of at most what NVRTC is given: /dev/zero or a FIFO is refused, not read.
    auto source = readFileBytes(path, kMaxSourceBytes);
    if (!source)
        return fail(source.error(), kExitUsage);
    for (const auto& arch : a.archs.empty() ? std::vector<std::string>{"sm_90"} : a.archs) {
        Job j;
        j.label = path.filename().string();
        j.request.source = source.value();
        j.request.fileName = path.string();
        j.request.options.arch = arch;
        j.request.options.cxxStd = a.cxxStd;
        j.request.nameExpressions = a.nameExpressions;
        j.request.wantSass = a.showSass || a.json;
        applyCommandLine(a, j.request.options);
        jobs.push_back(std::move(j));
    }
    return kExitOk;
}

/// The build as one element of the --json "builds" array.
json jobJson(const CompileArgs& a, const Job& job, const CompileResult& r, const std::vector<LaunchAnalysis>& launches)
{
    json j = {{"label", job.label}, {"file", job.request.fileName}, {"arch", job.request.options.arch},
              {"result", toJson(r, a.showPtx || a.showSass)}};
    if (!r.sass.empty() && !a.showSass)
        j["result"].erase("sass");
    json lj = json::array();
    for (const auto& l : launches)
        lj.push_back(toJson(l));
    if (!job.task && r.success) {
        // A bare .cu has no launch plan: report occupancy at --block-size for each kernel.
        const ArchInfo* arch = findArchitecture(r.arch);
        for (const auto& k : r.kernels) {
            if (!arch)
                break;
            OccupancyQuery q{a.blockSize, k.registers, k.staticSharedBytes, a.dynamicShared, k.maxThreadsPerBlock};
            auto occ = computeOccupancy(*arch, q);
            json o = {{"kernel", k.name}, {"block", {a.blockSize, 1, 1}}, {"dynamic_shared_bytes", a.dynamicShared}};
            if (occ)
                o["occupancy"] = toJson(occ.value());
            else
                o["occupancy_error"] = occ.error().message();
            lj.push_back(o);
        }
    }
    j["launches"] = lj;
    return j;
}

void printLaunches(std::ostream& out, const std::vector<LaunchAnalysis>& launches, const std::string& arch)
{
    for (const auto& l : launches) {
        out << "  launch " << l.launchIndex + 1 << ": " << l.kernel << "  grid (" << l.grid[0] << "," << l.grid[1]
            << "," << l.grid[2] << ") block (" << l.block[0] << "," << l.block[1] << "," << l.block[2] << ")";
        if (l.dynamicSharedBytes)
            out << " dynamic smem " << l.dynamicSharedBytes << " B";
        out << " at " << l.shape << '\n';
        if (l.resources)
            printResources(out, *l.resources);
        printOccupancy(out, l.occupancy, arch);
    }
}

/// A bare .cu file: each kernel's resources, its occupancy at --block-size and the best block size.
void printBareKernels(std::ostream& out, const CompileArgs& a, const CompileResult& r)
{
    const ArchInfo* arch = findArchitecture(r.arch);
    for (const auto& k : r.kernels) {
        out << "  kernel " << k.demangled << '\n';
        printResources(out, k);
        if (!arch)
            continue;
        OccupancyQuery q{a.blockSize, k.registers, k.staticSharedBytes, a.dynamicShared, k.maxThreadsPerBlock};
        out << "    at block size " << a.blockSize << ":\n";
        printOccupancy(out, computeOccupancy(*arch, q), r.arch);
        int best = 0;
        double bestOcc = -1;
        for (const auto& p : occupancyCurve(*arch, q))
            if (p.occupancy > bestOcc + 1e-9) {
                bestOcc = p.occupancy;
                best = p.blockSize;
            }
        if (best)
            out << "    best theoretical occupancy " << fmt(bestOcc * 100.0) << "% from block size " << best << '\n';
    }
}

/// The human-readable report of one build.
void printJob(const CompileArgs& a, const Job& job, const CompileResult& r, const std::vector<LaunchAnalysis>& launches)
{
    std::ostream& out = std::cout;
    for (const auto& d : r.diagnostics)
        (d.severity == Diagnostic::Severity::Error ? std::cerr : out) << formatDiagnostic(d);
    out << job.label << " [" << r.arch << "]: ";
    if (!r.success) {
        out << r.errorCount() << " error(s), " << r.warningCount() << " warning(s)\n";
        return;
    }
    out << "compiled in " << fmt(r.compileMs) << " ms" << (r.fromCache ? " (cached)" : "") << ", NVRTC "
        << r.nvrtcVersion << ", " << r.warningCount() << " warning(s)\n";
    if (job.task)
        printLaunches(out, launches, r.arch);
    else
        printBareKernels(out, a, r);
    if (a.showPtx)
        out << "---- PTX ----\n" << r.ptx << '\n';
    if (a.showSass)
        out << "---- SASS ----\n" << (r.sass.empty() ? r.sassUnavailableReason + "\n" : r.sass);
}

int run(const CompileArgs& a)
{
    auto version = nvrtcVersion();
    if (!version)
        return fail(version.error(), kExitEnvironment);
    std::unique_ptr<CompileCache> cache;
    if (!a.noCache)
        cache = std::make_unique<CompileCache>(CompileCache::defaultDirectory());

    std::vector<Job> jobs;
    std::unique_ptr<Task> task;
    fs::path path = a.path;
    std::error_code ec;
    if (!fs::exists(path, ec)) {
        std::cerr << "kforge: " << path.string() << ": no such file or folder\n";
        return kExitUsage;
    }
    const bool isTask = fs::is_directory(path, ec) || path.extension() == ".json";
    if (int code = isTask ? taskJobs(a, path, task, jobs) : fileJobs(a, path, jobs); code != kExitOk)
        return code;

    int exit = kExitOk;
    json all = json::array();
    for (const Job& job : jobs) {
        auto res = compile(job.request, cache.get());
        if (!res)
            return fail(res.error(), kExitEnvironment);
        const CompileResult& r = res.value();
        if (!r.success)
            exit = kExitFailed;

        std::vector<LaunchAnalysis> launches;
        const ShapeBinding* shape = job.task ? representativeShape(*job.task) : nullptr;
        if (r.success && job.task && shape)
            launches = analyseLaunches(*job.task, *job.candidate, r, *shape);

        if (a.json)
            all.push_back(jobJson(a, job, r, launches));
        else
            printJob(a, job, r, launches);
    }
    if (a.json)
        std::cout << json({{"schema_version", 1}, {"command", "compile"}, {"ok", exit == kExitOk}, {"builds", all}}).dump(2)
                  << '\n';
    return exit;
}

} // namespace

void addCompileCommand(CLI::App& app, int& exitCode)
{
    auto args = std::make_shared<CompileArgs>();
    CLI::App* cmd = app.add_subcommand("compile", "Compile a task's candidates (or one .cu file) with NVRTC; no GPU needed");
    cmd->add_option("path", args->path, "task folder, task.json, or a .cu file")->required();
    // One value per flag (repeatable, or comma-separated): `--arch sm_90 FILE` leaves FILE the path.
    cmd->add_option("--arch", args->archs, "target architecture, e.g. sm_90; repeat or separate with commas for several "
                                           "(default: the task's, or sm_90)")
        ->allow_extra_args(false)
        ->delimiter(',');
    cmd->add_option("--candidate", args->candidate, "compile only this candidate of the task");
    cmd->add_flag("--json", args->json, "machine-readable output (docs/compile-result-schema.md)");
    cmd->add_flag("--ptx", args->showPtx, "print the PTX");
    cmd->add_flag("--sass", args->showSass, "print the SASS (needs nvdisasm or cuobjdump)");
    cmd->add_flag("--no-cache", args->noCache, "always run NVRTC, bypassing the compile cache");
    cmd->add_option("-D,--define", args->defines, "preprocessor definition NAME[=VALUE]")
        ->allow_extra_args(false);
    cmd->add_option("-I,--include", args->includeDirs, "include folder for your own headers")
        ->allow_extra_args(false);
    cmd->add_option("--name-expression", args->nameExpressions, "kernel name expression to lower (single-file mode)")
        ->allow_extra_args(false);
    cmd->add_flag("--fast-math", args->fastMath, "compile with --use_fast_math");
    cmd->add_option("--std", args->cxxStd, "C++ standard for a single file")->check(CLI::IsMember({"c++11", "c++14", "c++17", "c++20"}));
    cmd->add_option("-O", args->optLevel, "ptxas optimisation level")->check(CLI::Range(0, 3));
    cmd->add_option("--maxrregcount", args->maxRegisters, "register limit per thread")->check(CLI::Range(0, 255));
    cmd->add_option("--block-size", args->blockSize, "block size for the occupancy of a single file")->check(CLI::Range(1, 1024));
    cmd->add_option("--dynamic-smem", args->dynamicShared, "dynamic shared memory bytes for the occupancy of a single file")
        ->check(CLI::NonNegativeNumber);
    cmd->callback([args, &exitCode] { exitCode = run(*args); });
}

} // namespace kf::cli
