// `kforge-cast model`: the LibTorch side of `kforge cast run` for a package's TorchScript model,
// what a LibTorch program does with kf_cast_model.h: load the package and the model, substitute
// the packaged kernels into the model's graph, run it with and without them on the same inputs
// (warm-up untimed, CUDA events, the two alternating), compare outputs with the unsubstituted
// model and an fp64 run, and print and write the model-level evidence in the format the Python
// runtime writes (docs/cast-format.md, "Model runs").
#include "device/cast/cpp/CastModelTool.h"
#include "device/cast/cpp/CastToolArgs.h"

#include "device/CudaDriver.h"
#include "device/DeviceInfo.h"
#include "device/cast/cpp/CastOp.h"
#include "include/kf_cast/kf_cast_model.h"

#include <ATen/cuda/CUDAEvent.h>
#include <c10/cuda/CUDAFunctions.h>
#include <c10/cuda/CUDAStream.h>
#include <cuda.h>
#include <torch/csrc/jit/ir/ir.h>
#include <torch/csrc/jit/passes/freeze_module.h>
#include <torch/version.h>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <ctime>
#include <fstream>
#include <iostream>
#include <map>

using Json = nlohmann::json;

namespace {

constexpr const char* kScope = kf::cast::kModelRunScope;

struct ModelArgs : CastToolArgs {
    std::string model, evidence;
    int warmup = 5;
    std::uint64_t seed = 0;
    bool check = false, allowFallback = false;
};

int usage(const std::string& why)
{
    std::cerr << "kforge cast run: " << why
              << "\nusage: kforge-cast model PACKAGE [--model NAME] [--device cuda|cpu] [--runs N] [--warmup N] [--seed N]"
                 " [--no-kernels] [--check] [--allow-fallback] [--json] [--evidence FILE]\n";
    return 2;
}

Json stats(std::vector<double> v)
{
    std::sort(v.begin(), v.end());
    auto q = [&](double f) { return v[std::min(v.size() - 1, static_cast<std::size_t>(std::lround(f * double(v.size() - 1))))]; };
    return {{"median", q(0.5)}, {"min", v.front()}, {"max", v.back()}, {"p10", q(0.1)}, {"p90", q(0.9)}};
}

std::vector<at::Tensor> flat(const c10::IValue& v)
{
    std::vector<at::Tensor> out;
    if (v.isTensor())
        out.push_back(v.toTensor());
    else if (v.isTuple())
        for (const auto& e : v.toTupleRef().elements())
            for (auto& t : flat(e))
                out.push_back(t);
    else if (v.isList())
        for (const auto& e : v.toListRef())
            for (auto& t : flat(e))
                out.push_back(t);
    return out;
}

/// Max and RMS difference where both are finite, and whether their non-finite values match
/// (the same rule as the Python runtime's _errors).
Json errors(const at::Tensor& got, const at::Tensor& ref)
{
    const at::Tensor g = got.detach().to(at::kDouble).cpu(), r = ref.detach().to(at::kDouble).cpu();
    const at::Tensor d = (g - r).masked_select(g.isfinite() & r.isfinite());
    const at::Tensor gi = g.isinf(), ri = r.isinf();
    const bool alike = at::equal(g.isnan(), r.isnan()) && at::equal(gi, ri) && at::equal(g.masked_select(gi), r.masked_select(ri));
    return {{"max_abs", d.numel() ? d.abs().max().item<double>() : 0.0},
            {"rms", d.numel() ? std::sqrt((d * d).mean().item<double>()) : 0.0},
            {"finite_alike", alike}};
}

/// The model computing in fp64: floating weights and every floating dtype constant of the
/// frozen graph (casts such as .float()) made fp64.
torch::jit::Module asFp64(const torch::jit::Module& model)
{
    torch::jit::Module m = model.clone();
    m.to(at::kDouble);
    m.eval();
    torch::jit::Module frozen = torch::jit::freeze_module(m);
    auto graph = frozen.get_method("forward").graph();
    for (torch::jit::Node* n : graph->nodes()) {
        const c10::FunctionSchema* schema = n->maybeSchema();
        if (!schema)
            continue;
        for (std::size_t i = 0; i < n->inputs().size() && i < schema->arguments().size(); ++i) {
            auto real = schema->arguments()[i].real_type();
            if (auto opt = real->cast<c10::OptionalType>())
                real = opt->getElementType();
            if (real->kind() != c10::TypeKind::ScalarTypeType)
                continue;
            auto c = torch::jit::toIValue(n->input(i));
            if (!c || !c->isInt() || !c10::isFloatingType(static_cast<c10::ScalarType>(c->toInt())))
                continue;
            torch::jit::WithInsertPoint guard(n);
            n->replaceInput(i, graph->insertConstant(static_cast<std::int64_t>(at::kDouble)));
        }
    }
    return frozen;
}

std::string utcNow()
{
    std::time_t t = std::time(nullptr);
    char b[32];
    std::strftime(b, sizeof b, "%Y-%m-%dT%H:%M:%SZ", std::gmtime(&t));
    return b;
}

std::string fixed(double v, int digits)
{
    char b[64];
    std::snprintf(b, sizeof b, "%.*f", digits, v);
    return b;
}

std::string general(double v)
{
    char b[64];
    std::snprintf(b, sizeof b, "%.3g", v);
    return b;
}

void print(const Json& ev)
{
    int subs = 0;
    for (const auto& s : ev["substitution"])
        subs += s["status"] == "substituted";
    std::printf("model %s from %s %s on %s (%s), torch %s\n", ev["model"].get<std::string>().c_str(),
                ev["package"]["name"].get<std::string>().c_str(), ev["package"]["version"].get<std::string>().c_str(),
                ev["gpu"].get<std::string>().empty() ? "CPU" : ev["gpu"].get<std::string>().c_str(),
                ev["device"].get<std::string>().c_str(), ev["torch"].get<std::string>().c_str());
    std::string ins;
    for (const auto& i : ev["inputs"])
        ins += (ins.empty() ? "" : "; ") + i["name"].get<std::string>() + " " + i["dtype"].get<std::string>() + " " + i["shape"].dump();
    std::printf("inputs: %s\n\nsubstitution: %d of %zu candidate call sites run packaged kernels\n", ins.c_str(), subs,
                ev["substitution"].size());
    std::printf("  %-12s %-18s %-11s %s\n", "op", "node", "status", "kernel / reason");
    for (const auto& s : ev["substitution"])
        std::printf("  %-12s %-18s %-11s %s\n", s["op"].get<std::string>().c_str(), s["node"].get<std::string>().c_str(),
                    s["status"].get<std::string>().c_str(),
                    s["cast_op"].get<std::string>().empty() ? s["reason"].get<std::string>().c_str()
                                                            : ("cast::" + s["cast_op"].get<std::string>()).c_str());
    std::printf("\ntime per pass, ms (%d runs after %d warm-up, %s, same inputs):\n  %-16s %9s %9s %9s %9s %9s\n",
                ev["runs"].get<int>(), ev["warmup"].get<int>(), ev["gpu"].get<std::string>().empty() ? "wall clock" : "CUDA events",
                "", "median", "p10", "p90", "min", "max");
    for (auto [label, key] : {std::pair{"with kernels", "with_kernels_ms"}, {"without kernels", "without_kernels_ms"}}) {
        if (!ev.contains(key)) {
            std::printf("  %-16s %9s\n", label, "not run (--no-kernels)");
            continue;
        }
        const Json& t = ev[key];
        std::printf("  %-16s %9.4f %9.4f %9.4f %9.4f %9.4f\n", label, t["median"].get<double>(), t["p10"].get<double>(),
                    t["p90"].get<double>(), t["min"].get<double>(), t["max"].get<double>());
    }
    if (ev["speedup"].is_number())
        std::printf("end-to-end speedup: %.3f× (%s; the ops' own speedups in `inspect` are op-level microbenchmarks)\n",
                    ev["speedup"].get<double>(), kScope);
    std::string fb;
    for (const auto& [k, v] : ev["fallbacks"].items())
        fb += (fb.empty() ? "" : ", ") + ("cast::" + k + " fell back " + std::to_string(v.get<std::int64_t>()) + " time(s)");
    std::printf("%s\n", fb.empty() ? "fallbacks: none" : ("FALLBACKS: " + fb).c_str());
    if (ev["check"].is_object()) {
        std::printf("\ncheck (fp64 reference: %s):\n", ev["check"]["fp64"].get<std::string>().c_str());
        for (const auto& o : ev["check"]["outputs"]) {
            std::string parts;
            for (auto [key, label] : {std::pair{"kernels_vs_original", "kernels vs original"}, {"kernels_vs_fp64", "kernels vs fp64"},
                                      {"original_vs_fp64", "original vs fp64"}}) {
                if (!o.contains(key))
                    continue;
                const Json& e = o[key];
                parts += (parts.empty() ? "" : "; ") + std::string(label) + " max " + general(e["max_abs"].get<double>()) + " rms " +
                         general(e["rms"].get<double>()) + (e["finite_alike"].get<bool>() ? "" : " (NON-FINITE DIFFERS)");
            }
            std::printf("  output %lld %s %s: %s\n", static_cast<long long>(o["index"].get<std::int64_t>()),
                        o["dtype"].get<std::string>().c_str(), o["shape"].dump().c_str(), parts.c_str());
        }
    }
}

/// fp16, bf16, ... as the manifest writes dtypes (the same names as the Python runtime).
std::string dtypeName(at::ScalarType t)
{
    static const std::map<at::ScalarType, std::string> names = {
        {at::kHalf, "fp16"},   {at::kFloat, "fp32"}, {at::kDouble, "fp64"}, {at::kBFloat16, "bf16"}, {at::kLong, "int64"},
        {at::kInt, "int32"},   {at::kShort, "int16"}, {at::kChar, "int8"},  {at::kByte, "uint8"},     {at::kBool, "bool"}};
    auto it = names.find(t);
    return it == names.end() ? std::string(c10::toString(t)) : it->second;
}

/// Reads the options after "model"; 0, or the exit code of a usage error.
int parseArgs(const std::vector<std::string>& rest, ModelArgs& a)
{
    const std::string wrong = readCastToolArgs(rest, a, [&](const std::string& s, const OptionValue& value) {
        if (s == "--model")
            a.model = value();
        else if (s == "--warmup")
            a.warmup = std::atoi(value().c_str());
        else if (s == "--seed")
            a.seed = std::strtoull(value().c_str(), nullptr, 10);
        else if (s == "--evidence")
            a.evidence = value();
        else if (s == "--check")
            a.check = true;
        else if (s == "--allow-fallback")
            a.allowFallback = true;
        else
            return false;
        return true;
    });
    if (!wrong.empty())
        return usage(wrong);
    if (a.runs < 1 || a.warmup < 0)
        return usage("--runs is at least 1 and --warmup at least 0");
    return 0;
}

/// The package, its model as exported (frozen) and with the packaged kernels substituted, and
/// the model's inputs.
struct ModelUnderTest {
    std::shared_ptr<const kf_cast::Package> pkg;
    torch::jit::Module original, unfrozen;
    std::vector<c10::IValue> inputs;
    kf_cast::Substituted sub;
    std::string model;
};

/// Loads the package and the model and substitutes the kernels; throws what went wrong.
void load(const ModelArgs& a, const at::Device& device, ModelUnderTest& m)
{
    m.model = a.model;
    m.pkg = kf_cast::load(a.package);
    if (m.model.empty()) {
        const auto all = kf_cast::models(*m.pkg);
        if (all.empty())
            throw std::runtime_error(a.package + " carries no model (export one with `kforge cast export ... --model FILE`)");
        m.model = all.front().first;
    }
    m.unfrozen = kf_cast::loadModel(*m.pkg, m.model, device);
    m.inputs = kf_cast::modelInputs(*m.pkg, m.model, device, a.seed);
    m.sub = kf_cast::substitute(*m.pkg, m.unfrozen, m.inputs);
    // The baseline is frozen the same way, so the substitution is the only difference timed.
    m.original = torch::jit::freeze_module(m.unfrozen.clone());
}

/// The model's outputs compared: with the kernels against the original, and both against an
/// fp64 run where one is possible. Throws when the runs return different numbers of tensors.
Json checkOutputs(ModelUnderTest& m, bool noKernels)
{
    auto ref = flat(m.original.forward(m.inputs));
    std::vector<at::Tensor> got;
    if (!noKernels)
        got = flat(m.sub.module.forward(m.inputs));
    std::vector<at::Tensor> ref64;
    std::string fp64 = "ran";
    try {
        torch::jit::Module m64 = asFp64(m.unfrozen);
        std::vector<c10::IValue> in64;
        for (const auto& v : m.inputs)
            in64.push_back(v.isTensor() && v.toTensor().is_floating_point() ? c10::IValue(v.toTensor().to(at::kDouble)) : v);
        ref64 = flat(m64.forward(in64));
        if (ref64.size() != ref.size())
            throw std::runtime_error("the fp64 run returned " + std::to_string(ref64.size()) + " tensors");
    } catch (const std::exception& e) {
        ref64.clear();
        std::string why = e.what();
        fp64 = "not possible: " + why.substr(0, why.find('\n'));
    }
    if (!got.empty() && got.size() != ref.size())
        throw std::runtime_error("the model with the kernels returned " + std::to_string(got.size()) +
                                 " tensors, the model as exported " + std::to_string(ref.size()));
    Json check = {{"outputs", Json::array()}, {"fp64", fp64}};
    for (std::size_t i = 0; i < ref.size(); ++i) {
        Json o = {{"index", i}, {"dtype", dtypeName(ref[i].scalar_type())}, {"shape", ref[i].sizes().vec()}};
        if (!got.empty())
            o["kernels_vs_original"] = errors(got[i], ref[i]);
        if (!ref64.empty()) {
            o["original_vs_fp64"] = errors(ref[i], ref64[i]);
            if (!got.empty())
                o["kernels_vs_fp64"] = errors(got[i], ref64[i]);
        }
        check["outputs"].push_back(o);
    }
    return check;
}

/// One forward pass's time in ms: CUDA events on a GPU, the wall clock on the CPU.
double timedForward(torch::jit::Module& m, const std::vector<c10::IValue>& inputs, bool cuda)
{
    if (cuda) {
        at::cuda::CUDAEvent start(cudaEventDefault), end(cudaEventDefault);
        start.record();
        m.forward(inputs);
        end.record();
        end.synchronize();
        return static_cast<double>(start.elapsed_time(end));
    }
    auto t = std::chrono::steady_clock::now();
    m.forward(inputs);
    return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t).count();
}

/// The model's inputs as the evidence names them (names from the package's example shapes).
Json inputsEvidence(const ModelUnderTest& m)
{
    auto& loaded = dynamic_cast<const kf_cast::detail::LoadedPackage&>(*m.pkg);
    const Json& entry = [&]() -> const Json& {
        for (const Json& e : loaded.m_source->manifest["models"])
            if (e["name"] == m.model)
                return e;
        throw std::logic_error("model vanished");
    }();
    Json ins = Json::array();
    const Json spec = entry["example"]["kind"] == "shapes"
                          ? Json::parse(loaded.m_source->file(entry["example"]["file"].get<std::string>())->bytes)["inputs"]
                          : Json::array();
    for (std::size_t i = 0; i < m.inputs.size(); ++i)
        if (m.inputs[i].isTensor())
            ins.push_back({{"name", i < spec.size() ? spec[i]["name"].get<std::string>() : "arg" + std::to_string(i)},
                           {"dtype", dtypeName(m.inputs[i].toTensor().scalar_type())},
                           {"shape", m.inputs[i].toTensor().sizes().vec()}});
    return ins;
}

/// The model-level evidence (docs/cast-format.md, "Model runs").
Json evidence(const ModelArgs& a, const ModelUnderTest& m, bool cuda, const std::vector<double>& tOrig,
              const std::vector<double>& tSub, const Json& check, const Json& fallbacks)
{
    Json report = Json::array();
    for (const kf_cast::Site& s : m.sub.report)
        report.push_back({{"node", s.node}, {"op", s.op}, {"status", s.status}, {"cast_op", s.castOp}, {"reason", s.reason}});
    std::string driver;
    if (cuda) {
        int v = 0;
        if (kf::device::CudaDriver::get() && kf::device::cuda().cuDriverGetVersion(&v) == CUDA_SUCCESS)
            driver = kf::device::driverApiString(v);
    }
    Json ev = {{"scope", kScope},
               {"model", m.model},
               {"package", {{"name", m.pkg->name()}, {"version", m.pkg->version()}}},
               {"created_at", utcNow()},
               {"device", cuda ? "cuda:" + std::to_string(c10::cuda::current_device()) : std::string("cpu")},
               {"gpu", cuda ? std::string(at::cuda::getCurrentDeviceProperties()->name) : std::string()},
               {"torch", TORCH_VERSION},
               {"cuda_driver", driver},
               {"runtime", "kf_cast (LibTorch " + std::string(TORCH_VERSION) + ")"},
               {"inputs", inputsEvidence(m)},
               {"runs", a.runs},
               {"warmup", a.warmup},
               {"without_kernels_ms", stats(tOrig)},
               {"speedup", nullptr},
               {"substitution", report},
               {"fallbacks", fallbacks},
               {"check", a.check ? check : Json()}};
    if (!tSub.empty()) {
        ev["with_kernels_ms"] = stats(tSub);
        ev["speedup"] = ev["without_kernels_ms"]["median"].get<double>() / ev["with_kernels_ms"]["median"].get<double>();
    }
    return ev;
}

} // namespace

int runModel(const std::vector<std::string>& rest)
{
    ModelArgs a;
    if (int usageError = parseArgs(rest, a))
        return usageError;
    const bool haveCuda = at::hasCUDA() && c10::cuda::device_count() > 0;
    if (a.device.empty())
        a.device = haveCuda ? "cuda" : "cpu";
    if (a.device == "cuda" && !haveCuda) {
        std::cerr << "kforge cast run: --device cuda, but there is no CUDA device\n";
        return 3;
    }
    const at::Device device(a.device == "cuda" ? at::kCUDA : at::kCPU);
    const bool cuda = device.is_cuda();

    ModelUnderTest m;
    try {
        load(a, device, m);
    } catch (const std::exception& e) {
        std::cerr << "kforge cast run: " << e.what() << '\n';
        return 1;
    }
    m.pkg->allowFallback(a.allowFallback);
    const auto fallbacksBefore = m.pkg->fallbacks();
    if (a.noKernels)
        for (kf_cast::Site& s : m.sub.report)
            if (s.status == "substituted") {
                s.status = "kept";
                s.reason = "--no-kernels (cast::" + s.castOp + " would run here)";
                s.castOp.clear();
            }

    std::vector<double> tOrig, tSub;
    Json check;
    try {
        torch::NoGradGuard noGrad;
        for (int i = 0; i < a.warmup; ++i) {
            m.original.forward(m.inputs);
            if (!a.noKernels)
                m.sub.module.forward(m.inputs);
        }
        for (int i = 0; i < a.runs; ++i) {
            tOrig.push_back(timedForward(m.original, m.inputs, cuda));
            if (!a.noKernels)
                tSub.push_back(timedForward(m.sub.module, m.inputs, cuda));
        }
        if (a.check)
            check = checkOutputs(m, a.noKernels);
    } catch (const std::exception& e) {
        std::string why = e.what();
        std::cerr << "kforge cast run: the model run failed: " << why.substr(0, why.find("\nException raised from"))
                  << (a.allowFallback ? "" : "\n(a packaged kernel that raises is an error; --allow-fallback runs its reference "
                                             "ops instead, said once and counted)")
                  << '\n';
        return 1;
    }

    Json fallbacks = Json::object();
    const auto fallbacksAfter = m.pkg->fallbacks();
    for (std::size_t i = 0; i < fallbacksAfter.size(); ++i)
        if (auto n = fallbacksAfter[i].second - fallbacksBefore[i].second; n > 0)
            fallbacks[fallbacksAfter[i].first] = n;
    const Json ev = evidence(a, m, cuda, tOrig, tSub, check, fallbacks);
    if (!a.evidence.empty()) {
        const std::string tmp = a.evidence + ".tmp";
        std::ofstream(tmp) << ev.dump(2) << '\n';
        std::rename(tmp.c_str(), a.evidence.c_str());
    }
    if (a.json)
        std::cout << ev.dump(2) << '\n';
    else
        print(ev);
    bool nonFinite = false;
    if (check.is_object())
        for (const auto& o : check["outputs"])
            if (o.contains("kernels_vs_original") && !o["kernels_vs_original"]["finite_alike"].get<bool>())
                nonFinite = true;
    return nonFinite ? 1 : 0;
}
