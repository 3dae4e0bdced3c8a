// kforge-cast: the LibTorch half of `kforge cast run` (kforge itself never links LibTorch; it
// starts this program, found beside it). Loads a package with kf_cast exactly as a user's
// program would, then runs every op on generated inputs for each of its task's test shapes,
// compares the op's outputs with its reference ops under the task's tolerances, and times both.
//
//   kforge-cast run ops.cast [--device cuda|cpu] [--runs N] [--no-kernels] [--op NAME] [--json]
//   kforge-cast model model.cast [--model NAME] ... (CastModelTool.cpp)
//
// Exit: 0 every output within tolerance; 1 a mismatch; 2 bad arguments or package; 3 no CUDA
// device when --device cuda was asked for.
#include "device/cast/cpp/CastModelTool.h"
#include "device/cast/cpp/CastOp.h"
#include "device/cast/cpp/CastToolArgs.h"
#include "device/runner/TorchCatalog.h"
#include "engine/task/Task.h"

#include <ATen/ATen.h>
#include <ATen/core/dispatch/Dispatcher.h>
#include <ATen/core/stack.h>
#include <c10/cuda/CUDAFunctions.h>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <iostream>
#include <optional>

using Json = nlohmann::json;

namespace {

struct Args : CastToolArgs {
    std::string op;
};

int usage(const std::string& why)
{
    std::cerr << "kforge cast run: " << why
              << "\nusage: kforge cast run PACKAGE [--device cuda|cpu] [--runs N] [--no-kernels] [--op NAME] [--json]\n";
    return 2;
}

at::Tensor generated(const kf::TensorSpec& t, const std::vector<std::int64_t>& shape, at::Device device)
{
    auto opts = at::TensorOptions().device(device);
    switch (t.dtype) {
    case kf::DType::Bool:
        return at::randint(0, 2, shape, opts.dtype(at::kLong)).to(at::kBool);
    case kf::DType::I8:
    case kf::DType::U8:
    case kf::DType::I16:
    case kf::DType::I32:
    case kf::DType::I64:
        return at::randint(0, 8, shape, opts.dtype(at::kLong)).to(kf::device::scalarTypeOf(t.dtype));
    case kf::DType::F16:
        return at::randn(shape, opts).to(at::kHalf);
    case kf::DType::BF16:
        return at::randn(shape, opts).to(at::kBFloat16);
    case kf::DType::F64:
        return at::randn(shape, opts.dtype(at::kDouble));
    default:
        return at::randn(shape, opts);
    }
}

double median(std::vector<double> v)
{
    if (v.empty())
        return NAN;
    std::sort(v.begin(), v.end());
    return v[v.size() / 2];
}

template <class F>
double timedMs(F&& f, int runs, bool cuda)
{
    std::vector<double> ms;
    for (int r = 0; r < runs; ++r) {
        if (cuda)
            c10::cuda::device_synchronize();
        auto t = std::chrono::steady_clock::now();
        f();
        if (cuda)
            c10::cuda::device_synchronize();
        ms.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t).count());
    }
    return median(ms);
}

/// Reads the options after "run"; 0, or the exit code of a usage error.
int parseArgs(const std::vector<std::string>& rest, Args& a)
{
    const std::string wrong = readCastToolArgs(rest, a, [&](const std::string& s, const OptionValue& value) {
        if (s != "--op")
            return false;
        a.op = value();
        return true;
    });
    if (!wrong.empty())
        return usage(wrong);
    if (a.runs < 1 || a.runs > 100000)
        return usage("--runs is 1 to 100000");
    return 0;
}

/// The op's outputs against the reference ops' under the task's tolerances, up to the first
/// output that is off; `verdict` gets a word for each output compared.
Json compareOutputs(const kf::Task& task, const std::vector<at::Tensor>& got, const std::vector<at::Tensor>& want, bool& ok,
                    std::string& verdict)
{
    Json outputs = Json::array();
    for (std::size_t o = 0; ok && o < task.outputs.size(); ++o) {
        const kf::TensorSpec& spec = task.outputs[o];
        at::Tensor g = got.at(o).to(at::kDouble).cpu(), w = want.at(o).to(at::kDouble).cpu();
        const kf::Tolerance tol = spec.tolerance;
        const double rms = w.numel() ? std::sqrt(w.pow(2).mean().item<double>()) : 0.0;
        const double atol = tol.atolMode == kf::Tolerance::AtolMode::Rms ? tol.atol * rms : tol.atol;
        at::Tensor diff = (g - w).abs();
        // A NaN where the reference has a number (or the reverse) is a mismatch: NaN > tol is false.
        at::Tensor bad = (diff > (atol + tol.rtol * w.abs())) | (g.isnan() ^ w.isnan());
        const std::int64_t mismatches = bad.sum().item<std::int64_t>();
        const double maxAbs = diff.numel() ? at::nan_to_num(diff).max().item<double>() : 0.0;
        ok = ok && mismatches == 0;
        verdict += (verdict.empty() ? "" : ", ") + spec.name + (mismatches ? " " + std::to_string(mismatches) + " off" : " ok");
        outputs.push_back({{"output", spec.name}, {"mismatches", mismatches}, {"max_abs_error", maxAbs}});
    }
    return outputs;
}

/// One test shape of an op: generated inputs, the op and its reference ops compared, then both
/// timed; the table's row printed unless --json. `ok`: every output within tolerance.
Json runShape(const Args& a, const kf::Task& task, const kf::ShapeBinding& shape, const c10::OperatorHandle& handle,
              kf_cast::detail::CastOp& reference, const at::Device& device, bool& ok)
{
    std::vector<at::Tensor> inputs;
    for (const kf::TensorSpec& t : task.inputs)
        inputs.push_back(generated(t, task.extents(t, shape).value(), device));
    std::vector<at::Tensor> got;
    auto call = [&] {
        torch::jit::Stack stack(inputs.begin(), inputs.end());
        handle.callBoxed(&stack);
        got.clear();
        for (const auto& v : stack)
            got.push_back(v.toTensor());
    };
    std::vector<at::Tensor> want;
    std::string failure;
    try {
        call();
        want = reference.run(inputs, a.device == "cuda" ? kf_cast::detail::Mode::Cuda : kf_cast::detail::Mode::Cpu);
    } catch (const std::exception& e) {
        failure = e.what();
    }
    std::string verdict;
    ok = failure.empty();
    const Json outputs = compareOutputs(task, got, want, ok, verdict);
    if (!failure.empty())
        verdict = "error: " + failure.substr(0, failure.find('\n'));
    const bool cuda = a.device == "cuda";
    double opMs = NAN, refMs = NAN;
    if (failure.empty()) {
        opMs = timedMs(call, a.runs, cuda);
        refMs = timedMs([&] { reference.run(inputs, cuda ? kf_cast::detail::Mode::Cuda : kf_cast::detail::Mode::Cpu); }, a.runs,
                        cuda);
    }
    if (!a.json)
        std::printf("  %-36s %10lld %12.4f %12.4f %7.2f×  %s\n", shape.describe().c_str(),
                    static_cast<long long>(task.totalElements(shape)), opMs, refMs, refMs / opMs, verdict.c_str());
    return {{"shape", shape.describe()}, {"label", shape.label}, {"ok", ok}, {"op_ms", opMs},
            {"reference_ms", refMs}, {"outputs", outputs}, {"error", failure}};
}

/// Every test shape of one op, as the report's entry; an exit code when its task cannot be read.
std::optional<int> runOp(const Args& a, const kf::cast::Package& pkg, const kf::cast::PackageOp& op,
                         const kf_cast::Package& loaded, const at::Device& device, Json& opJson, bool& allOk)
{
    auto task = kf::parseTask(Json::parse(pkg.file(op.json["task"].get<std::string>())->bytes), "task.json");
    if (!task) {
        std::cerr << "kforge cast run: " << task.error().message() << '\n';
        return 2;
    }
    kf_cast::detail::CastOp reference(pkg, op, {false, ""});
    const auto& handle = c10::Dispatcher::singleton().findSchemaOrThrow(("cast::" + op.name).c_str(), "");
    const std::string runsAs = a.device == "cpu" ? std::string("reference ops (CPU)") : loaded.imageUsed(op.name, 0);
    if (!a.json)
        std::printf("\ncast::%s  (%s)\n  %-36s %10s %12s %12s %8s  %s\n", op.name.c_str(), runsAs.c_str(), "shape",
                    "elements", "op ms", "reference ms", "ratio", "outputs");
    opJson = {{"name", op.name}, {"runs_as", runsAs}, {"shapes", Json::array()}};
    for (const kf::ShapeBinding& shape : task->testShapes) {
        bool ok = true;
        opJson["shapes"].push_back(runShape(a, *task, shape, handle, reference, device, ok));
        allOk = allOk && ok;
    }
    return std::nullopt;
}

} // namespace

int main(int argc, char** argv)
{
    Args a;
    std::vector<std::string> rest(argv + 1, argv + argc);
    if (!rest.empty() && rest[0] == "model")
        return runModel(rest);
    if (rest.empty() || rest[0] != "run")
        return usage("the commands are run (the ops) and model (a TorchScript model)");
    if (int usageError = parseArgs(rest, a))
        return usageError;
    const bool haveCuda = at::hasCUDA() && c10::cuda::device_count() > 0;
    if (a.device.empty())
        a.device = haveCuda ? "cuda" : "cpu";
    if (a.device != "cuda" && a.device != "cpu")
        return usage("--device is cuda or cpu");
    if (a.device == "cuda" && !haveCuda) {
        std::cerr << "kforge cast run: no CUDA device (run with --device cpu to run the reference ops)\n";
        return 3;
    }
    const at::Device device(a.device == "cuda" ? at::kCUDA : at::kCPU);

    auto pkg = kf::cast::openPackage(a.package);
    if (!pkg) {
        std::cerr << "kforge cast run: " << pkg.error().message() << '\n';
        return 2;
    }
    std::shared_ptr<const kf_cast::Package> loaded;
    try {
        loaded = kf_cast::load(a.package, {!a.noKernels, ""});
    } catch (const std::exception& e) {
        std::cerr << "kforge cast run: " << e.what() << '\n';
        return 2;
    }
    if (!a.json)
        std::printf("%s %s: %zu op(s) on %s%s, %d run(s) each\n", loaded->name().c_str(), loaded->version().c_str(),
                    loaded->ops().size(), a.device.c_str(), a.noKernels ? " with the reference ops (--no-kernels)" : "",
                    a.runs);
    Json report = {{"schema_version", 1}, {"command", "cast run"}, {"package", a.package}, {"device", a.device},
                   {"kernels", !a.noKernels}, {"ops", Json::array()}};
    bool allOk = true, found = a.op.empty();
    at::manual_seed(20261126);
    for (const kf::cast::PackageOp& op : pkg->ops) {
        if (!a.op.empty() && op.name != a.op)
            continue;
        found = true;
        Json opJson;
        if (auto exitCode = runOp(a, pkg.value(), op, *loaded, device, opJson, allOk))
            return *exitCode;
        report["ops"].push_back(opJson);
    }
    if (!found)
        return usage("the package has no op " + a.op);
    report["ok"] = allOk;
    if (a.json)
        std::cout << report.dump(2) << '\n';
    else
        std::printf("\n%s\n", allOk ? "every output within the task's tolerance of the reference ops"
                                    : "MISMATCH: an output is outside the task's tolerance");
    return allOk ? 0 : 1;
}
