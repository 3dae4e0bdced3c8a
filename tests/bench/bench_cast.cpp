// bench_cast: a LibTorch program that loads a .cast package with kf_cast and
//   1. for each `--case OP=DIR` (a case folder of `kforge verify --dump`: the runner's inputs and
//      its kernel's outputs), calls cast::OP on the same inputs and compares the outputs byte for
//      byte with the runner's;
//   2. with `--overhead OP`, times one call of cast::OP on the task's smallest test shape through
//      the dispatcher against a raw cuLaunchKernel of the same cubin function with arguments
//      packed once, and an ATen op on the same input (median of 5 rounds).
// Prints a table; with --json FILE writes the numbers. Exit 0 when every case is bit-identical.
//
//   bench_cast ops.cast --case softmax_fp32=/tmp/dump/00-... --overhead softmax_fp32
#include "device/CudaDriver.h"
#include "device/runner/TorchCatalog.h"
#include "engine/cast/CastPackage.h"
#include "engine/task/Task.h"
#include "engine/verify/Npy.h"

#include <kf_cast/kf_cast.h>

#include <ATen/ATen.h>
#include <ATen/core/dispatch/Dispatcher.h>
#include <ATen/core/stack.h>
#include <c10/cuda/CUDAStream.h>
#include <c10/cuda/CUDAFunctions.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>

namespace fs = std::filesystem;
using Json = nlohmann::json;

namespace {

at::ScalarType scalarOf(const std::string& dtype)
{
    return kf::device::scalarTypeOf(*kf::parseDType(dtype));
}

const Json* findOp(const kf::cast::Package& pkg, const std::string& name)
{
    for (const auto& op : pkg.ops)
        if (op.name == name)
            return &op.json;
    return nullptr;
}

std::vector<c10::IValue> callBoxed(const c10::OperatorHandle& op, const std::vector<at::Tensor>& inputs)
{
    torch::jit::Stack stack(inputs.begin(), inputs.end());
    op.callBoxed(&stack);
    return stack;
}

template <class F>
double microsPerCall(F&& f, int calls)
{
    for (int i = 0; i < 200; ++i)
        f();
    c10::cuda::device_synchronize();
    std::vector<double> rounds;
    for (int r = 0; r < 5; ++r) {
        auto t = std::chrono::steady_clock::now();
        for (int i = 0; i < calls; ++i)
            f();
        c10::cuda::device_synchronize();
        rounds.push_back(std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t).count() / calls);
    }
    std::sort(rounds.begin(), rounds.end());
    return rounds[2];
}

} // namespace

int main(int argc, char** argv)
{
    if (argc < 2) {
        std::cerr << "usage: bench_cast PACKAGE [--case OP=DIR]... [--overhead OP] [--json FILE]\n";
        return 2;
    }
    const std::string path = argv[1];
    std::vector<std::pair<std::string, std::string>> cases;
    std::string overheadOp, jsonOut;
    for (int i = 2; i + 1 < argc; i += 2) {
        const std::string flag = argv[i], value = argv[i + 1];
        if (flag == "--case") {
            const auto eq = value.find('=');
            cases.emplace_back(value.substr(0, eq), value.substr(eq + 1));
        } else if (flag == "--overhead") {
            overheadOp = value;
        } else if (flag == "--json") {
            jsonOut = value;
        }
    }
    auto pkg = kf::cast::openPackage(path);
    if (!pkg) {
        std::cerr << "bench_cast: " << pkg.error().message() << '\n';
        return 2;
    }
    std::shared_ptr<const kf_cast::Package> loaded;
    try {
        loaded = kf_cast::load(path);
    } catch (const std::exception& e) {
        std::cerr << "bench_cast: " << e.what() << '\n';
        return 2;
    }
    Json out = {{"cases", Json::array()}, {"overhead_us", Json::object()}, {"runs_as", Json::object()}};
    const bool cuda = at::hasCUDA() && c10::cuda::device_count() > 0;
    if (!cuda) {
        std::cout << "bench_cast: no CUDA device; nothing to time\n";
        return 77;
    }
    for (const auto& op : loaded->ops())
        out["runs_as"][op.name] = loaded->imageUsed(op.name, 0);

    int identical = 0, total = 0;
    for (const auto& [name, dir] : cases) {
        const Json* op = findOp(pkg.value(), name);
        if (!op) {
            std::cerr << "bench_cast: the package has no op " << name << '\n';
            return 2;
        }
        const auto& handle = c10::Dispatcher::singleton().findSchemaOrThrow(("cast::" + name).c_str(), "");
        std::vector<at::Tensor> inputs;
        for (const Json& t : (*op)["inputs"]) {
            auto f = kf::NpyFile::open(fs::path(dir) / "inputs" / (t["name"].get<std::string>() + ".npy"));
            if (!f) {
                std::cerr << "bench_cast: " << f.error().message() << '\n';
                return 2;
            }
            at::Tensor host = at::empty(f->header().extents, at::TensorOptions().dtype(scalarOf(t["dtype"])));
            std::memcpy(host.data_ptr(), f->data(), static_cast<std::size_t>(host.nbytes()));
            inputs.push_back(host.cuda());
        }
        std::vector<c10::IValue> results = callBoxed(handle, inputs);
        c10::cuda::device_synchronize();
        std::size_t k = 0;
        for (const Json& t : (*op)["outputs"]) {
            auto f = kf::NpyFile::open(fs::path(dir) / "actual" / (t["name"].get<std::string>() + ".npy"));
            at::Tensor mine = results.at(k++).toTensor().cpu();
            const bool same = f && static_cast<std::size_t>(mine.nbytes()) ==
                                       static_cast<std::size_t>(kf::dtypeSize(f->header().dtype)) *
                                           static_cast<std::size_t>(mine.numel()) &&
                              std::memcmp(mine.data_ptr(), f->data(), static_cast<std::size_t>(mine.nbytes())) == 0;
            ++total;
            identical += same ? 1 : 0;
            out["cases"].push_back({{"op", name}, {"case", fs::path(dir).filename().string()}, {"output", t["name"]},
                                    {"bit_identical", same}});
        }
    }
    if (!cases.empty())
        std::cout << "LibTorch program: outputs bit-identical to the runner's in " << identical << " of " << total << "\n";

    if (!overheadOp.empty()) {
        const Json* op = findOp(pkg.value(), overheadOp);
        auto taskEntry = pkg->file((*op)["task"].get<std::string>());
        auto task = kf::parseTask(Json::parse(taskEntry->bytes), "task.json");
        if (!op || !task || task->testShapes.empty()) {
            std::cerr << "bench_cast: cannot read the task of " << overheadOp << '\n';
            return 2;
        }
        // The smallest test shape: the launch cost dominates, not the kernel.
        const kf::ShapeBinding* shape = &task->testShapes.front();
        for (const auto& s : task->testShapes)
            if (task->totalElements(s) < task->totalElements(*shape))
                shape = &s;
        std::vector<at::Tensor> inputs;
        for (const auto& t : task->inputs) {
            auto ext = task->extents(t, *shape);
            inputs.push_back(at::randn(ext.value(), at::TensorOptions().device(at::kCUDA)).to(kf::device::scalarTypeOf(t.dtype)));
        }
        const auto& handle = c10::Dispatcher::singleton().findSchemaOrThrow(("cast::" + overheadOp).c_str(), "");
        std::vector<c10::IValue> first = callBoxed(handle, inputs);   // loads the module, makes the plan
        at::Tensor output = first.at(0).toTensor();

        // The raw launch: the same image the op uses, the same function, arguments packed once.
        const auto& cu = kf::device::cuda();
        std::vector<std::string> archs;
        for (const auto& [a, p] : (*op)["images"].items())
            archs.push_back(a);
        int major = 0, minor = 0;
        CUdevice dev = 0;
        cu.cuDeviceGet(&dev, 0);
        cu.cuDeviceGetAttribute(&major, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, dev);
        cu.cuDeviceGetAttribute(&minor, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, dev);
        const std::string arch = kf_cast::chooseImage(archs, major, minor);
        std::string image = pkg->file((*op)["images"][arch].get<std::string>())->bytes;
        if (arch.rfind("compute_", 0) == 0)
            image.push_back('\0');
        CUmodule module = nullptr;
        CUfunction fn = nullptr;
        const Json& launch = (*op)["launches"][0];
        if (cu.cuModuleLoadData(&module, image.data()) != CUDA_SUCCESS ||
            cu.cuModuleGetFunction(&fn, module, launch["lowered"].get<std::string>().c_str()) != CUDA_SUCCESS) {
            std::cerr << "bench_cast: cannot load " << arch << '\n';
            return 1;
        }
        kf::Env env = task->environment(*shape);
        auto ev = [&](const Json& e) { return kf::Expr::parse(e["text"].get<std::string>())->evalInt(env).value(); };
        std::vector<void*> pointers;
        std::vector<std::array<unsigned char, 8>> scalars(launch["args"].size());
        std::vector<void*> params;
        std::map<std::string, at::Tensor> buffers;
        for (std::size_t i = 0; i < task->inputs.size(); ++i)
            buffers[task->inputs[i].name] = inputs[i];
        for (std::size_t i = 0; i < task->outputs.size(); ++i)
            buffers[task->outputs[i].name] = first.at(i).toTensor();
        pointers.reserve(launch["args"].size());
        for (std::size_t i = 0; i < launch["args"].size(); ++i) {
            const Json& a = launch["args"][i];
            if (a.contains("tensor")) {
                pointers.push_back(buffers.at(a["tensor"]).data_ptr());
                params.push_back(&pointers.back());
            } else {
                auto v = kf::Expr::parse(a["scalar"]["text"].get<std::string>())->eval(env).value();
                const std::string type = a["type"];
                if (type == "fp32") {
                    float f = static_cast<float>(v.asDouble());
                    std::memcpy(scalars[i].data(), &f, 4);
                } else if (type == "fp64") {
                    double d = v.asDouble();
                    std::memcpy(scalars[i].data(), &d, 8);
                } else if (type == "int32" || type == "uint32") {
                    std::int32_t x = static_cast<std::int32_t>(v.i);
                    std::memcpy(scalars[i].data(), &x, 4);
                } else {
                    std::memcpy(scalars[i].data(), &v.i, 8);
                }
                params.push_back(scalars[i].data());
            }
        }
        const unsigned g[3] = {unsigned(ev(launch["grid"][0])), unsigned(ev(launch["grid"][1])), unsigned(ev(launch["grid"][2]))};
        const unsigned b[3] = {unsigned(ev(launch["block"][0])), unsigned(ev(launch["block"][1])), unsigned(ev(launch["block"][2]))};
        const unsigned shared = unsigned(ev(launch["shared_bytes"]));
        CUstream stream = c10::cuda::getCurrentCUDAStream(0).stream();
        const int calls = 20000;
        auto typedOne = [&] { return callBoxed(handle, inputs); };
        out["shape"] = shape->describe();
        out["image"] = arch;
        out["overhead_us"]["raw cuLaunchKernel (C++, packed once)"] = microsPerCall(
            [&] { cu.cuLaunchKernel(fn, g[0], g[1], g[2], b[0], b[1], b[2], shared, stream, params.data(), nullptr); }, calls);
        out["overhead_us"]["cast op through the dispatcher (C++)"] = microsPerCall(typedOne, calls);
        out["overhead_us"]["at::neg on the same input (ATen)"] = microsPerCall([&] { return at::neg(inputs[0]); }, calls);
        const double raw = out["overhead_us"]["raw cuLaunchKernel (C++, packed once)"];
        const double castUs = out["overhead_us"]["cast op through the dispatcher (C++)"];
        out["overhead_us"]["cast op minus raw launch (C++)"] = castUs - raw;
        std::printf("call overhead of cast::%s at %s (%s), µs per call, median of 5 × %d:\n", overheadOp.c_str(),
                    shape->describe().c_str(), arch.c_str(), calls);
        for (const auto& [k, v] : out["overhead_us"].items())
            std::printf("  %-45s %8.2f\n", k.c_str(), v.get<double>());
        (void)output;
    }
    if (!jsonOut.empty())
        std::ofstream(jsonOut) << out.dump(2);
    return identical == total ? 0 : 1;
}
