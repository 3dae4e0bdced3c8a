// `kforge cast export | inspect | check | run`: .cast packages of registry kernels (docs/cast.md,
// docs/cast-format.md).
#include "CastCommand.h"

#include "ExitCodes.h"
#include "ProgressLine.h"
#include "TextTable.h"
#include "engine/cast/CastExport.h"
#include "engine/cast/CastPackage.h"
#include "engine/registry/Registry.h"

#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <memory>

#ifndef KF_VERSION
#define KF_VERSION "dev"
#endif

namespace fs = std::filesystem;
using nlohmann::json;

namespace kf::cli {

namespace {

struct CastArgs {
    std::vector<std::string> ids;
    std::string output;
    std::string archs;
    std::string ptx;
    std::vector<std::string> names;
    std::string packageName;
    std::string packageVersion = "1.0.0";
    bool allowDeprecated = false;
    std::string registry;
    std::string file;
    bool json = false;
    // cast run
    std::string device;
    int runs = 20;
    bool noKernels = false;
    std::string op;
};

void printJson(const json& j) { std::cout << j.dump(2, ' ', false, json::error_handler_t::replace) << '\n'; }

std::string fixed(const json& v, const char* suffix)
{
    if (!v.is_number())
        return "–";
    char b[32];
    std::snprintf(b, sizeof b, "%.2f%s", v.get<double>(), suffix);
    return b;
}

std::vector<std::string> splitList(const std::string& s)
{
    std::vector<std::string> out;
    std::size_t start = 0;
    while (start <= s.size()) {
        std::size_t comma = s.find(',', start);
        if (comma == std::string::npos)
            comma = s.size();
        std::string part = s.substr(start, comma - start);
        if (!part.empty())
            out.push_back(part);
        start = comma + 1;
    }
    return out;
}

int reportError(const Error& e, bool asJson, const char* command, int code)
{
    if (asJson)
        printJson({{"schema_version", 1}, {"command", std::string("cast ") + command}, {"ok", false},
                   {"error", {{"what", e.what}, {"why", e.why}, {"hint", e.hint}, {"file", e.file}, {"entry", e.pointer}}}});
    else
        std::cerr << "kforge: " << e.message() << '\n';
    return code;
}

int exportCommand(const CastArgs& a)
{
    cast::ExportOptions o;
    o.ids = a.ids;
    o.architectures = splitList(a.archs);
    o.ptx = a.ptx;
    o.packageName = a.packageName;
    o.packageVersion = a.packageVersion;
    o.kernelforgeVersion = KF_VERSION;
    o.allowDeprecated = a.allowDeprecated;
    for (const std::string& n : a.names) {
        const auto eq = n.find('=');
        if (eq == std::string::npos || eq == 0 || eq + 1 == n.size())
            return reportError(Error{"read --name", "\"" + n + "\" is not ID=NAME", "e.g. --name cuda_add_h100_fp32_n64_v1=my_add", {}, {}},
                               a.json, "export", kExitUsage);
        o.opNames[n.substr(0, eq)] = n.substr(eq + 1);
    }
    auto dir = Registry::resolveDirectory(a.registry, fs::current_path());
    if (!dir)
        return reportError(dir.error(), a.json, "export", kExitUsage);
    Registry registry(dir.value());
    ProgressLine line;
    auto done = cast::exportPackage(registry, o, a.output, [&](const cast::ExportProgress& p) {
        line.show("[" + std::to_string(p.done) + "/" + std::to_string(p.total) + "] " + p.text);
    });
    line.clear();
    if (!done) {
        const Error& e = done.error();
        int code = kExitEnvironment;
        if (e.kind == kRegistryBadArgument || e.kind == cast::kCastBadArgument)
            code = kExitUsage;
        else if (e.kind == cast::kCastKernelRefused)
            code = kExitFailed;
        return reportError(e, a.json, "export", code);
    }
    const cast::ExportSummary& s = done.value();
    if (a.json) {
        printJson({{"schema_version", 1}, {"command", "cast export"}, {"ok", true}, {"file", s.file.string()},
                   {"bytes", s.bytes}, {"ops", s.ops}, {"architectures", s.architectures},
                   {"ptx", s.ptx.empty() ? json() : json(s.ptx)}, {"compile_ms", s.compileMs}});
        return kExitOk;
    }
    std::string ops;
    for (const auto& n : s.ops)
        ops += (ops.empty() ? "cast::" : ", cast::") + n;
    std::string archs;
    for (const auto& x : s.architectures)
        archs += (archs.empty() ? "" : ", ") + x;
    std::cout << "wrote " << s.file.string() << " (" << s.bytes << " bytes): " << ops << "\n  cubins for " << archs
              << (s.ptx.empty() ? std::string(", no PTX") : ", PTX " + s.ptx) << "; compiled in "
              << static_cast<long long>(s.compileMs) << " ms\n";
    return kExitOk;
}

int openFailureCode(const Error& e)
{
    if (e.kind == cast::kCastNoSuchFile)
        return kExitUsage;
    if (e.what.find("libcrypto") != std::string::npos || e.what.find("SHA-256") != std::string::npos)
        return kExitEnvironment;
    return kExitFailed;
}

int inspectCommand(const CastArgs& a, bool checkOnly)
{
    const char* name = checkOnly ? "check" : "inspect";
    auto pkg = cast::openPackage(a.file);
    if (!pkg)
        return reportError(pkg.error(), a.json, name, openFailureCode(pkg.error()));
    const cast::Package& p = pkg.value();
    if (a.json) {
        json j = {{"schema_version", 1}, {"command", std::string("cast ") + name}, {"ok", true}, {"file", a.file},
                  {"package", {{"name", p.name}, {"version", p.version}}}, {"files", p.files.size()}, {"ops", json::array()}};
        for (const auto& op : p.ops)
            j["ops"].push_back({{"name", op.name}, {"registry_id", op.registryId}, {"schema", op.schema}, {"images", op.images}});
        if (!checkOnly)
            j["manifest"] = p.manifest;
        printJson(j);
        return kExitOk;
    }
    if (checkOnly) {
        std::uint64_t bytes = 0;
        for (const auto& f : p.files)
            bytes += static_cast<std::uint64_t>(f.bytes);
        std::cout << a.file << ": ok — " << p.ops.size() << " op(s), " << p.files.size()
                  << " files, every SHA-256 matches (" << bytes << " bytes unpacked)\n";
        return kExitOk;
    }
    const json& m = p.manifest;
    std::cout << "package  " << p.name << " " << p.version << "  (" << a.file << ")\n"
              << "made     " << p.createdAt << " by KernelForge " << p.kernelforgeVersion << ", NVRTC "
              << m.value("nvrtc_version", "") << "\n";
    std::string archs;
    for (const auto& x : m["architectures"])
        archs += (archs.empty() ? "" : ", ") + x.get<std::string>();
    std::cout << "targets  cubin " << archs << "; PTX " << (m["ptx"].is_string() ? m["ptx"].get<std::string>() : "none")
              << "\n\nops\n";
    TextTable ops({{"op"}, {"signature"}, {"registry ID"}, {"measured on"}, {"geomean", TextTable::Align::Right},
                   {"min", TextTable::Align::Right}, {"signature check"}});
    for (const auto& op : m["ops"]) {
        const json& ev = op["evidence"];
        ops.addRow({"cast::" + op["name"].get<std::string>(), op["schema"].get<std::string>(),
                    op["registry_id"].get<std::string>(),
                    ev.value("gpu", "") + " (" + ev.value("arch", "") + ")", fixed(ev.value("geomean_speedup", json()), "×"),
                    fixed(ev.value("min_speedup", json()), "×"), ev.value("registry_signature", "")});
    }
    ops.print(std::cout);
    std::cout << "\nfiles\n";
    TextTable files({{"path"}, {"bytes", TextTable::Align::Right}, {"sha256"}});
    for (const auto& f : p.files)
        files.addRow({f.path, std::to_string(f.bytes), f.sha256});
    files.print(std::cout);
    std::cout << "\nintegrity: every file matches its SHA-256 in the manifest\n";
    return kExitOk;
}

/// `kforge cast run`: kforge does not link LibTorch, so the work is kforge-cast's ($KF_CAST_TOOL,
/// beside kforge, PATH), which replaces this process with the same arguments.
int runCommand(const CastArgs& a)
{
    fs::path tool;
    if (const char* env = std::getenv("KF_CAST_TOOL"); env && *env) {
        tool = env;
    } else {
        std::error_code ec;
        const fs::path self = fs::read_symlink("/proc/self/exe", ec);
        if (!ec && fs::exists(self.parent_path() / "kforge-cast"))
            tool = self.parent_path() / "kforge-cast";
    }
    std::vector<std::string> argv = {tool.empty() ? "kforge-cast" : tool.string(), "run", a.file, "--runs", std::to_string(a.runs)};
    if (!a.device.empty())
        argv.insert(argv.end(), {"--device", a.device});
    if (a.noKernels)
        argv.push_back("--no-kernels");
    if (!a.op.empty())
        argv.insert(argv.end(), {"--op", a.op});
    if (a.json)
        argv.push_back("--json");
    std::vector<char*> cargv;
    for (auto& s : argv)
        cargv.push_back(s.data());
    cargv.push_back(nullptr);
    std::cout.flush();
    if (tool.empty())
        ::execvp("kforge-cast", cargv.data());
    else
        ::execv(tool.c_str(), cargv.data());
    std::cerr << "kforge: cannot start kforge-cast (" << (tool.empty() ? std::string("not beside kforge nor on PATH") : tool.string())
              << "): it is the LibTorch half of `kforge cast run`; build the kforge-cast target (it needs LibTorch) "
                 "or point $KF_CAST_TOOL at it\n";
    return kExitEnvironment;
}

} // namespace

void addCastCommand(CLI::App& app, int& exitCode)
{
    auto args = std::make_shared<CastArgs>();
    CLI::App* cast = app.add_subcommand("cast", "Export registry kernels as .cast packages, inspect and check them");
    cast->require_subcommand(1);

    CLI::App* e = cast->add_subcommand("export", "Compile registry kernels for several GPUs into one .cast package");
    e->add_option("ids", args->ids, "registry IDs (`kforge registry list`)")->required();
    e->add_option("-o,--output", args->output, "the package to write, e.g. ops.cast")->required();
    std::string defaults;
    for (const char* a : cast::kDefaultArchitectures)
        defaults += (defaults.empty() ? "" : ",") + std::string(a);
    e->add_option("--arch", args->archs, "cubin architectures, comma-separated (default " + defaults + ")");
    e->add_option("--ptx", args->ptx, "PTX for later GPUs: compute_XY of a listed architecture, or none (default: the lowest)");
    e->add_option("--name", args->names, "ID=NAME: call that version cast::NAME (default: its task's name)");
    e->add_option("--package-name", args->packageName, "the package's name (default: the file's stem)");
    e->add_option("--package-version", args->packageVersion, "the package's version (default 1.0.0)");
    e->add_flag("--allow-deprecated", args->allowDeprecated, "export deprecated versions too");
    e->add_option("--registry", args->registry,
                  "registry folder (default: $KF_REGISTRY, the workspace's, or ~/.local/share/KernelForge/registry)");
    e->add_flag("--json", args->json, "print JSON");
    e->callback([args, &exitCode] { exitCode = exportCommand(*args); });

    CLI::App* i = cast->add_subcommand("inspect", "List a package's ops, architectures, evidence and file hashes");
    i->add_option("file", args->file, "the .cast package")->required();
    i->add_flag("--json", args->json, "print JSON (with the whole manifest)");
    i->callback([args, &exitCode] { exitCode = inspectCommand(*args, false); });

    CLI::App* r = cast->add_subcommand("run", "Load a package as a LibTorch program would and run each op on generated "
                                               "inputs against its reference ops, with timings");
    r->add_option("file", args->file, "the .cast package")->required();
    r->add_option("--device", args->device, "cuda or cpu (default: cuda when there is a GPU)")
        ->check(CLI::IsMember({"cuda", "cpu"}));
    r->add_option("--runs", args->runs, "timed runs per shape (default 20)")->check(CLI::Range(1, 100000));
    r->add_flag("--no-kernels", args->noKernels, "run every op's reference ops instead of its kernels");
    r->add_option("--op", args->op, "only this op");
    r->add_flag("--json", args->json, "print JSON");
    r->callback([args, &exitCode] { exitCode = runCommand(*args); });

    CLI::App* c = cast->add_subcommand("check", "Check a package's integrity: archive, manifest, hashes (exit 1 when rejected)");
    c->add_option("file", args->file, "the .cast package")->required();
    c->add_flag("--json", args->json, "print JSON");
    c->callback([args, &exitCode] { exitCode = inspectCommand(*args, true); });
}

} // namespace kf::cli
