#include "engine/compile/TaskCompile.h"

#include "engine/compile/Compiler.h"
#include "engine/task/TaskFiles.h"

#include <algorithm>
#include <iterator>

namespace fs = std::filesystem;

namespace kf {

Result<CompileRequest> compileRequestFor(const Task& task, const Candidate& candidate, const std::string& arch)
{
    // Inside the task folder, a regular file, at most what NVRTC is given (engine/task/TaskFiles.h).
    auto source = readTaskFile(task.directory, candidate.file, kMaxSourceBytes);
    if (!source)
        return source.error();
    return compileRequestFor(task, candidate, arch, std::move(source.value()));
}

CompileRequest compileRequestFor(const Task& task, const Candidate& candidate, const std::string& arch, std::string source)
{
    fs::path file = task.directory / candidate.file;
    CompileRequest req;
    req.source = std::move(source);
    req.fileName = file.string();
    req.options.arch = arch;
    req.options.cxxStd = task.compile.cxxStd;
    req.options.fastMath = task.compile.fastMath;
    req.options.defines = task.compile.defines;
    req.options.defines.insert(req.options.defines.end(), candidate.defines.begin(), candidate.defines.end());
    for (const auto& d : task.compile.includeDirs)
        req.options.includeDirs.push_back(fs::absolute(task.directory / d).lexically_normal().string());
    req.options.extraOptions = task.compile.extraOptions;
    req.confineIncludesTo = {fs::absolute(task.directory).lexically_normal().string()};
    std::size_t index = 0;
    while (index < task.candidates.size() && task.candidates[index].file != candidate.file)
        ++index;
    for (std::size_t li = 0; li < candidate.launches.size(); ++li) {
        const Launch& l = candidate.launches[li];
        if (std::find(req.nameExpressions.begin(), req.nameExpressions.end(), l.kernel) != req.nameExpressions.end())
            continue;
        req.nameExpressions.push_back(l.kernel);
        req.nameExpressionOrigins[l.kernel] = (task.directory / "task.json").string() + " at /candidates/" +
                                              std::to_string(index) + "/launches/" + std::to_string(li) + "/kernel";
    }
    return req;
}

Result<EveryArchitectureBuild> compileForEveryArchitecture(const Task& task, const Candidate& candidate, const std::string& source,
                                                           const std::string& fileName, const std::string& planOrigin,
                                                           const CancelToken* cancel, const std::function<bool()>& stop)
{
    EveryArchitectureBuild out;
    for (const std::string& arch : task.architectures) {
        if ((stop && stop()) || (cancel && cancel->cancelled()))
            return Error::inFile(fileName, {}, "compile " + fileName, "cancelled");
        CompileRequest req = compileRequestFor(task, candidate, arch, source);
        req.fileName = fileName;
        for (std::size_t li = 0; li < candidate.launches.size(); ++li)
            req.nameExpressionOrigins[candidate.launches[li].kernel] = planOrigin + " at /launches/" + std::to_string(li) + "/kernel";
        auto result = compile(req, nullptr, cancel);
        if (!result)
            return result.error();
        for (Diagnostic d : result->diagnostics) {
            d.message = "[" + arch + "] " + d.message;
            out.diagnostics.push_back(std::move(d));
        }
        const bool built = result->success;
        out.results.push_back(std::move(result.value()));
        if (!built)
            return out;
        out.compiledFor.push_back(arch);
    }
    out.success = true;
    return out;
}

const ShapeBinding* representativeShape(const Task& task)
{
    if (!task.benchmarkShapes.empty())
        return &task.benchmarkShapes.front();
    if (!task.testShapes.empty())
        return &task.testShapes.front();
    return nullptr;
}

std::vector<LaunchAnalysis> analyseLaunches(const Task& task, const Candidate& candidate, const CompileResult& result,
                                            const ShapeBinding& shape)
{
    std::vector<LaunchAnalysis> out;
    const std::string realArch = result.arch.rfind("compute_", 0) == 0 ? "sm_" + result.arch.substr(8) : result.arch;
    const ArchInfo* arch = findArchitecture(realArch);
    for (size_t i = 0; i < candidate.launches.size(); ++i) {
        const Launch& l = candidate.launches[i];
        LaunchAnalysis a;
        a.launchIndex = static_cast<int>(i);
        a.kernel = l.kernel;
        a.shape = shape.describe();
        if (auto it = result.loweredNames.find(l.kernel); it != result.loweredNames.end())
            a.lowered = it->second;
        for (const auto& k : result.kernels)
            if (k.name == a.lowered)
                a.resources = &k;
        auto geometry = evaluateLaunch(task, candidate, l, shape);
        if (geometry) {
            std::copy(std::begin(geometry->grid), std::end(geometry->grid), a.grid);
            std::copy(std::begin(geometry->block), std::end(geometry->block), a.block);
            a.dynamicSharedBytes = geometry->sharedBytes;
        }
        if (!geometry) {
            a.occupancy = geometry.error();
        } else if (!arch) {
            a.occupancy = Error::failed("compute occupancy", "unknown architecture " + result.arch);
        } else if (!a.resources) {
            a.occupancy = Error::failed("compute occupancy", "kernel " + l.kernel + " was not found in the cubin");
        } else {
            OccupancyQuery q;
            q.blockSize = static_cast<int>(a.block[0] * a.block[1] * a.block[2]);
            q.registersPerThread = a.resources->registers;
            q.staticSharedBytes = a.resources->staticSharedBytes;
            q.dynamicSharedBytes = static_cast<int>(a.dynamicSharedBytes);
            q.maxThreadsPerBlock = a.resources->maxThreadsPerBlock;
            a.occupancy = computeOccupancy(*arch, q);
        }
        out.push_back(std::move(a));
    }
    return out;
}

nlohmann::json toJson(const LaunchAnalysis& a)
{
    nlohmann::json j = {{"launch", a.launchIndex},
                        {"kernel", a.kernel},
                        {"lowered_name", a.lowered},
                        {"shape", a.shape},
                        {"grid", {a.grid[0], a.grid[1], a.grid[2]}},
                        {"block", {a.block[0], a.block[1], a.block[2]}},
                        {"dynamic_shared_bytes", a.dynamicSharedBytes}};
    if (a.occupancy)
        j["occupancy"] = toJson(a.occupancy.value());
    else
        j["occupancy_error"] = a.occupancy.error().message();
    return j;
}

} // namespace kf
