// Stage 1 of the search (engine/tune/Tuner.h): every point compiled on all cores, then pruned.
#include "engine/compile/CompileCache.h"
#include "engine/compile/Compiler.h"
#include "engine/compile/TaskCompile.h"
#include "engine/tune/Tuner.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <mutex>
#include <thread>

namespace kf::tune {

namespace {

/// Why a compiled point cannot be timed, or empty: a spill, or a launch that does not fit a shape.
std::string pruneReason(const Task& task, const Candidate& c, const CompileResult& r, const Settings& settings, PointResult& p)
{
    for (const auto& k : r.kernels) {
        p.registers = std::max(p.registers, k.registers);
        p.spillBytes = std::max({p.spillBytes, k.spillStoreBytes, k.spillLoadBytes});
    }
    if (p.spillBytes > 0 && !settings.allowSpills)
        return "spills " + std::to_string(p.spillBytes) + " bytes of registers to local memory";
    std::vector<const ShapeBinding*> shapes;
    for (const auto& s : task.testShapes)
        shapes.push_back(&s);
    for (const auto& s : settings.shapes.empty() ? task.benchmarkShapes : settings.shapes)
        shapes.push_back(&s);
    for (const ShapeBinding* s : shapes)
        for (const Launch& l : c.launches)
            if (auto g = evaluateLaunch(task, c, l, *s); !g)
                return g.error().why;
    if (const ShapeBinding* at = representativeShape(task)) {
        for (const LaunchAnalysis& a : analyseLaunches(task, c, r, *at)) {
            if (!a.occupancy)
                return "launch " + std::to_string(a.launchIndex + 1) + " (" + a.kernel + ") cannot run: " + a.occupancy.error().why;
            p.occupancy = std::min(p.occupancy.value_or(1.0), a.occupancy->occupancy);
            const std::int64_t threads = a.block[0] * a.block[1] * a.block[2];
            if (a.resources && a.resources->maxThreadsPerBlock > 0 && threads > a.resources->maxThreadsPerBlock)
                return "a block of " + std::to_string(threads) + " threads is over " + a.kernel + "'s __launch_bounds__ of " +
                       std::to_string(a.resources->maxThreadsPerBlock);
        }
    }
    return {};
}

std::string firstError(const CompileResult& r)
{
    for (const auto& d : r.diagnostics)
        if (d.severity == Diagnostic::Severity::Error)
            return d.message;
    return "NVRTC produced no cubin";
}

} // namespace

void compilePoints(const Task& task, const Candidate& candidate, const std::string& arch, const Settings& settings,
                   Outcome& out, const ProgressFn& progress, const CancelToken* cancel)
{
    const auto start = std::chrono::steady_clock::now();
    CompileCache cache(settings.cacheDir.empty() ? CompileCache::defaultDirectory() : settings.cacheDir);
    const int workers = std::max(1, settings.compileThreads > 0 ? settings.compileThreads
                                                                : int(std::max(1u, std::thread::hardware_concurrency())));
    std::atomic<std::size_t> next{0};
    std::atomic<int> done{0};
    std::mutex report;
    auto work = [&] {
        for (std::size_t i; (i = next++) < out.points.size();) {
            if (cancel && cancel->cancelled())
                return;
            PointResult& p = out.points[i];
            const Task t = taskWithPoint(task, candidate.file, p.point);
            const Candidate& c = *t.findCandidate(candidate.file);
            auto req = compileRequestFor(t, c, arch);
            Result<CompileResult> r = req ? [&] { req->wantSass = false; return compile(*req, &cache, cancel); }()
                                          : Result<CompileResult>(req.error());
            if (!r) {
                p.stage = Stage::CompileFailed;
                p.reason = r.error().why;
            } else if (!r->success || r->cubin.empty()) {
                p.stage = Stage::CompileFailed;
                p.reason = firstError(*r);
            } else {
                p.compiled = true;
                if (std::string why = pruneReason(t, c, *r, settings, p); !why.empty()) {
                    p.stage = Stage::Pruned;
                    p.reason = std::move(why);
                }
            }
            const int n = ++done;
            std::lock_guard lock(report);
            if (progress)
                progress({"compile", n, int(out.points.size()), 0, &p});
        }
    };
    std::vector<std::thread> pool;
    for (int k = 0; k < workers; ++k)
        pool.emplace_back(work);
    for (auto& th : pool)
        th.join();
    for (const PointResult& p : out.points) {
        out.cost.compiled += p.compiled ? 1 : 0;
        out.cost.compileFailed += p.stage == Stage::CompileFailed ? 1 : 0;
        out.cost.pruned += p.stage == Stage::Pruned ? 1 : 0;
    }
    out.cost.compileS = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

} // namespace kf::tune
