// kf_cast::load: a .cast package checked whole (engine/cast/CastPackage.h), then each op
// registered as cast::<name> with boxed CUDA, CPU and Meta kernels through a torch::Library that
// lives as long as the process. Also registers kf_cast::load(str path, bool kernels, str image)
// so TorchScript and Python (torch.ops.load_library) can load packages.
#include "device/cast/cpp/CastOp.h"

#include <ATen/core/dispatch/Dispatcher.h>
#include <ATen/core/stack.h>
#include <torch/library.h>

#include <algorithm>

namespace kf_cast {

namespace {

using detail::CastOp;
using detail::LoadedPackage;
using detail::Mode;

class BoxedKernel final : public c10::OperatorKernel {
public:
    BoxedKernel(std::shared_ptr<CastOp> op, Mode mode) : m_op(std::move(op)), m_mode(mode) {}

    void operator()(const c10::OperatorHandle&, c10::DispatchKeySet, torch::jit::Stack* stack)
    {
        const std::size_t n = m_op->inputCount();
        c10::SmallVector<at::Tensor, 8> inputs;   // on the stack: no allocation per call
        for (const c10::IValue& v : torch::jit::last(*stack, n))
            inputs.push_back(v.toTensor());
        std::vector<at::Tensor> outs = m_op->run(inputs, m_mode);
        torch::jit::drop(*stack, n);
        for (at::Tensor& o : outs)
            torch::jit::push(*stack, std::move(o));
    }

private:
    std::shared_ptr<CastOp> m_op;
    Mode m_mode;
};

struct Registry {
    std::mutex mutex;
    std::map<std::string, std::string> identity;                   // op name -> what it is
    std::map<std::string, std::shared_ptr<CastOp>> serving;         // op name -> the CastOp registered for it
    std::map<std::string, std::shared_ptr<const Package>> loaded;  // package identity -> package
    std::vector<std::unique_ptr<torch::Library>> libraries;        // kept for the process
};

Registry& registry()
{
    static Registry* r = new Registry;   // never destroyed: operators outlive static destruction
    return *r;
}

} // namespace

std::string chooseImage(const std::vector<std::string>& images, int major, int minor)
{
    const int want = major * 10 + minor;
    auto number = [](const std::string& a) { return std::stoi(a.substr(a.find('_') + 1)); };
    const std::string exact = "sm_" + std::to_string(want);
    if (std::find(images.begin(), images.end(), exact) != images.end())
        return exact;
    std::string best;
    for (const std::string& a : images)
        if (a.rfind("sm_", 0) == 0 && number(a) / 10 == major && number(a) <= want && (best.empty() || number(a) > number(best)))
            best = a;
    if (!best.empty())
        return best;
    for (const std::string& a : images)
        if (a.rfind("compute_", 0) == 0 && number(a) <= want && (best.empty() || number(a) > number(best)))
            best = a;
    return best;
}

std::shared_ptr<const Package> load(const std::string& path, const LoadOptions& options)
{
    auto opened = kf::cast::openPackage(path);
    if (!opened)
        throw std::runtime_error(opened.error().message());
    const kf::cast::Package& pkg = opened.value();

    Registry& r = registry();
    std::lock_guard<std::mutex> lock(r.mutex);
    std::string packageIdentity = pkg.archive.entries.front().bytes;   // the manifest: every hash
    packageIdentity += options.kernels ? "|kernels|" : "|reference|";
    packageIdentity += options.image;
    if (auto it = r.loaded.find(packageIdentity); it != r.loaded.end())
        return it->second;

    std::map<std::string, std::string> identities;
    for (const kf::cast::PackageOp& op : pkg.ops) {
        std::string id = op.registryId;
        for (const auto& f : pkg.files)
            for (const auto& [arch, p] : op.json["images"].items())
                if (p == f.path)
                    id += "|" + arch + ":" + f.sha256;
        id += options.kernels ? "|kernels|" : "|reference|";
        id += options.image;
        identities[op.name] = id;
        if (auto it = r.identity.find(op.name); it != r.identity.end() && it->second != id)
            throw std::runtime_error(path + ": cast::" + op.name +
                                     " is already registered by another package or with other options; export this "
                                     "one under another name with `kforge cast export ... --name " + op.registryId +
                                     "=OTHER`");
        if (!r.identity.count(op.name) && c10::Dispatcher::singleton().findSchema({"cast::" + op.name, ""}))
            throw std::runtime_error(path + ": an operator cast::" + op.name + " exists already (registered outside kf_cast)");
    }

    auto loaded = std::make_shared<LoadedPackage>();
    loaded->m_path = path;
    loaded->m_name = pkg.name;
    loaded->m_version = pkg.version;
    loaded->m_source = std::make_shared<kf::cast::Package>(pkg);
    // Every op is built before anything is registered: a constructor that throws leaves no trace.
    for (const kf::cast::PackageOp& op : pkg.ops) {
        // The same op loaded before (same kernels, same options): the CastOp already serving it.
        auto serving = r.serving.find(op.name);
        loaded->m_ops.push_back(serving != r.serving.end() ? serving->second : std::make_shared<CastOp>(pkg, op, options));
        loaded->m_info.push_back({op.name, op.registryId, op.schema, op.images, op.json["evidence"].dump()});
    }
    torch::Library* lib = nullptr;
    for (std::size_t i = 0; i < pkg.ops.size(); ++i) {
        const kf::cast::PackageOp& op = pkg.ops[i];
        if (r.identity.count(op.name))
            continue;   // the same op, registered by an earlier load: its kernels serve this one too
        if (!lib) {
            // Kept before the first registration, so what registered stays registered (and known).
            r.libraries.push_back(
                std::make_unique<torch::Library>(torch::Library::FRAGMENT, "cast", std::nullopt, __FILE__, __LINE__));
            lib = r.libraries.back().get();
        }
        const auto& castOp = loaded->m_ops[i];
        lib->def(op.schema.c_str());
        r.identity[op.name] = identities[op.name];
        r.serving[op.name] = castOp;
        lib->impl(op.name.c_str(), torch::dispatch(c10::DispatchKey::CUDA, torch::CppFunction::makeFromBoxedFunctor(
                                                                           std::make_unique<BoxedKernel>(castOp, Mode::Cuda))));
        lib->impl(op.name.c_str(), torch::dispatch(c10::DispatchKey::CPU, torch::CppFunction::makeFromBoxedFunctor(
                                                                          std::make_unique<BoxedKernel>(castOp, Mode::Cpu))));
        lib->impl(op.name.c_str(), torch::dispatch(c10::DispatchKey::Meta, torch::CppFunction::makeFromBoxedFunctor(
                                                                           std::make_unique<BoxedKernel>(castOp, Mode::Meta))));
    }
    std::shared_ptr<const Package> result = loaded;
    r.loaded[packageIdentity] = result;
    return result;
}

} // namespace kf_cast

TORCH_LIBRARY(kf_cast, m)
{
    m.def("load(str path, bool kernels=True, str image=\"\") -> str[]",
          [](std::string path, bool kernels, std::string image) {
              std::vector<std::string> names;
              try {
                  auto pkg = kf_cast::load(path, {kernels, image});
                  for (const auto& op : pkg->ops())
                      names.push_back(op.name);
              } catch (const std::runtime_error& e) {
                  TORCH_CHECK_VALUE(false, e.what());
              }
              return names;
          });
}
