// Reading and validating a task.json with many test shapes: the JSON reader was quadratic in an
// array of objects (issue 41: 300 000 shapes took 17 s to validate, 1 000 000 took 188 s).
// Target: linear, so 10x the shapes costs about 10x the time (docs/benchmarks.md has figures;
// 100 000 shapes, the cap, validate in 0.2 to 1 s on the 2-core development machine).
//
//   bench_json [--counts 10000,100000,1000000] [--repeats N] [examples-dir]
//
// For each count, a copy of the vector_add example gets a task.json with that many test shapes
// (in a private temporary folder). "read" is json::readFile (read the file, parse, check keys
// and depth); "validate" is loadTask, what `kforge validate` runs: read plus the task schema.
// A count above the task's cap on shapes (kMaxShapesPerList) is refused by validate; the time
// printed is then the time to the refusal. Each figure is the median of --repeats runs.
#include "engine/core/Files.h"
#include "engine/core/JsonReader.h"
#include "engine/core/TempFolder.h"
#include "engine/task/Task.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <string>
#include <vector>

namespace fs = std::filesystem;
using namespace kf;

namespace {

double now()
{
    return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

double median(std::vector<double> v)
{
    std::sort(v.begin(), v.end());
    const size_t n = v.size();
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

std::vector<size_t> parseCounts(const std::string& text)
{
    std::vector<size_t> counts;
    for (size_t start = 0; start <= text.size();) {
        const size_t comma = std::min(text.find(',', start), text.size());
        counts.push_back(std::strtoull(text.substr(start, comma - start).c_str(), nullptr, 10));
        start = comma + 1;
    }
    return counts;
}

/// vector_add's task.json with `count` test shapes in place of its own.
std::string taskWithShapes(const json::Json& base, size_t count)
{
    json::Json task = base;
    json::Json tests = json::Json::array();
    for (size_t i = 0; i < count; ++i)
        tests.push_back({{"label", "s" + std::to_string(i % 100)}, {"N", 1 + i % 1000003}});
    task["shapes"]["tests"] = std::move(tests);
    return task.dump(1);
}

struct Figures {
    double readMs = 0;
    double validateMs = 0;
    std::string verdict;
};

Figures measure(const fs::path& folder, int repeats)
{
    std::vector<double> reads, validates;
    Figures f;
    for (int r = 0; r < repeats; ++r) {
        double t0 = now();
        auto j = json::readFile(folder / "task.json");
        reads.push_back(now() - t0);
        if (!j)
            f.verdict = "read refused: " + j.error().message();
        t0 = now();
        auto task = loadTask(folder);
        validates.push_back(now() - t0);
        if (task)
            f.verdict = "valid, " + std::to_string(task->testShapes.size()) + " test shapes";
        else
            f.verdict = "refused: " + task.error().why;
    }
    f.readMs = median(reads);
    f.validateMs = median(validates);
    return f;
}

} // namespace

int main(int argc, char** argv)
{
    std::vector<size_t> counts = {10000, 100000, 1000000};
    int repeats = 3;
    fs::path examples = KF_EXAMPLES_DIR;
    for (int i = 1; i < argc; ++i) {
        if (!std::strcmp(argv[i], "--counts") && i + 1 < argc)
            counts = parseCounts(argv[++i]);
        else if (!std::strcmp(argv[i], "--repeats") && i + 1 < argc)
            repeats = std::max(1, std::atoi(argv[++i]));
        else
            examples = argv[i];
    }
    const fs::path example = examples / "vector_add";
    auto base = json::readFile(example / "task.json");
    if (!base) {
        std::fprintf(stderr, "bench_json: %s\n", base.error().message().c_str());
        return 1;
    }
    TempFolder tmp("kf-bench-json-");
    if (tmp.path().empty()) {
        std::fprintf(stderr, "bench_json: cannot create a temporary folder\n");
        return 1;
    }
    std::printf("%10s %12s %10s %12s %12s  %s\n", "shapes", "bytes", "read ms", "validate ms", "us/shape", "result");
    for (size_t count : counts) {
        const fs::path folder = tmp.path() / ("n" + std::to_string(count));
        std::error_code ec;
        fs::copy(example, folder, fs::copy_options::recursive, ec);
        const std::string text = taskWithShapes(base.value(), count);
        if (ec || !writeFileAtomic(folder / "task.json", text)) {
            std::fprintf(stderr, "bench_json: cannot write the task in %s\n", folder.c_str());
            return 1;
        }
        const Figures f = measure(folder, repeats);
        std::printf("%10zu %12zu %10.1f %12.1f %12.2f  %s\n", count, text.size(), f.readMs, f.validateMs,
                    1000.0 * f.validateMs / static_cast<double>(std::max<size_t>(count, 1)), f.verdict.substr(0, 100).c_str());
        std::fflush(stdout);
        removeTree(folder);
    }
    return 0;
}
