#include "engine/core/Sandbox.h"

#include "engine/core/Files.h"

#include <csignal>
#include <pwd.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <random>
#include <cstdlib>
#include <thread>

extern char** environ;

namespace kf {
namespace {

namespace fs = std::filesystem;

// The variables a Python with torch needs to start and that say nothing about the user's files.
bool allowed(std::string_view name)
{
    static const char* const kNames[] = {"PATH",        "LANG",          "LANGUAGE",        "TZ",
                                         "LD_LIBRARY_PATH", "PYTHONHOME", "VIRTUAL_ENV",     "CONDA_PREFIX",
                                         "PYTHONIOENCODING", "PYTHONUTF8", "OMP_NUM_THREADS", "MKL_NUM_THREADS",
                                         "OPENBLAS_NUM_THREADS"};
    return name.rfind("LC_", 0) == 0 || std::find(std::begin(kNames), std::end(kNames), name) != std::end(kNames);
}

std::string envOr(const char* name)
{
    const char* v = std::getenv(name);
    return v ? v : "";
}

// The user's folders the program has no business reading: every home this account has, and the
// XDG folders (configuration, data with the registry, caches) wherever they were moved.
std::vector<fs::path> privateFolders()
{
    std::vector<fs::path> out;
    auto add = [&](const std::string& p) {
        std::error_code ec;
        if (p.empty() || !fs::path(p).is_absolute())
            return;
        const fs::path canon = fs::weakly_canonical(p, ec);
        static const char* const kSystem[] = {"/", "/usr", "/lib", "/lib64", "/bin", "/sbin", "/etc", "/opt", "/proc", "/dev"};
        if (ec || std::find(std::begin(kSystem), std::end(kSystem), canon.string()) != std::end(kSystem))
            return;
        if (fs::is_directory(canon, ec) && std::find(out.begin(), out.end(), canon) == out.end())
            out.push_back(canon);
    };
    add(envOr("HOME"));
    passwd entry{}, *pw = nullptr;
    char buffer[4096];
    if (::getpwuid_r(::getuid(), &entry, buffer, sizeof buffer, &pw) == 0 && pw && pw->pw_dir)
        add(pw->pw_dir);
    for (const char* x : {"XDG_CONFIG_HOME", "XDG_DATA_HOME", "XDG_CACHE_HOME", "XDG_STATE_HOME"})
        add(envOr(x));
    for (const char* shared : {"/tmp", "/var/tmp", "/run", "/dev/shm"})
        add(shared);
    // Parents first: a folder inside one already replaced needs no mount of its own.
    std::sort(out.begin(), out.end(), [](const fs::path& a, const fs::path& b) { return a.string().size() < b.string().size(); });
    std::vector<fs::path> kept;
    for (const fs::path& p : out)
        if (std::none_of(kept.begin(), kept.end(), [&](const fs::path& k) { return isInsideFolder(p, k); }))
            kept.push_back(p);
    return kept;
}

// The program and the prefix it belongs to (…/venv for …/venv/bin/python), as given and with
// links resolved: a Python in a virtual environment under the home must still start.
std::vector<fs::path> programFolders(const std::string& program)
{
    fs::path exe = program;
    const std::string path = envOr("PATH");
    if (program.find('/') == std::string::npos) {
        exe.clear();
        for (std::string_view rest = path; !rest.empty() && exe.empty();) {
            const auto colon = rest.find(':');
            const fs::path candidate = fs::path(std::string(rest.substr(0, colon))) / program;
            if (candidate.is_absolute() && ::access(candidate.c_str(), X_OK) == 0)
                exe = candidate;
            rest = colon == std::string_view::npos ? std::string_view() : rest.substr(colon + 1);
        }
    }
    std::error_code ec;
    std::vector<fs::path> out;
    if (exe.empty())
        return out;
    for (const fs::path& p : {fs::absolute(exe, ec), fs::weakly_canonical(exe, ec)}) {
        if (p.has_parent_path() && p.parent_path().has_parent_path())
            out.push_back(p.parent_path().parent_path());
        out.push_back(p);   // the file itself, when its prefix is a folder that stays hidden
    }
    return out;
}

// The program as the sandbox sees it: a venv reached through a link (a clone's .venv -> the venv
// its pins share under ~/.cache/kernelforge, packaging/setup.sh) is named by its real folder,
// which is what gets bound; the link itself may sit in a folder the sandbox empties (/tmp). The
// interpreter's own link is kept, so Python still finds the venv's pyvenv.cfg.
std::string programInRealPrefix(const std::string& program)
{
    if (program.find('/') == std::string::npos)
        return program;
    std::error_code ec;
    const fs::path exe = fs::absolute(program, ec);
    const fs::path prefix = exe.parent_path().parent_path();
    if (prefix.empty())
        return program;
    const fs::path real = fs::weakly_canonical(prefix, ec);
    return real == prefix ? program : (real / exe.lexically_relative(prefix)).string();
}

bool inAny(const fs::path& p, const std::vector<fs::path>& folders)
{
    return std::any_of(folders.begin(), folders.end(), [&](const fs::path& f) { return isInsideFolder(p, f); });
}

std::vector<std::string> bwrapArguments(const SandboxSupport& s, const ConfinedOptions& o, const std::vector<fs::path>& readable)
{
    std::vector<std::string> a = {s.bwrap, "--die-with-parent", "--new-session", "--unshare-net", "--unshare-pid",
                                  "--unshare-ipc", "--unshare-uts", "--unshare-cgroup-try", "--cap-drop", "ALL",
                                  "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc"};
    const std::vector<fs::path> emptied = privateFolders();
    for (const fs::path& p : emptied)
        a.insert(a.end(), {"--tmpfs", p.string()});
    std::error_code ec;
    std::vector<fs::path> shown;
    for (const fs::path& given : readable)
        if (const fs::path r = fs::weakly_canonical(given, ec);
            fs::exists(r, ec) && inAny(r, emptied) && !inAny(r, shown) &&
            std::none_of(emptied.begin(), emptied.end(), [&](const fs::path& e) { return isInsideFolder(e, r); })) {
            a.insert(a.end(), {"--ro-bind", r.string(), r.string()});
            shown.push_back(r);
        }
    const fs::path work = fs::weakly_canonical(o.workDir, ec);
    a.insert(a.end(), {"--bind", work.string(), work.string()});
    shown.push_back(work);
    // A hidden file still in view (the key beside a problem, or outside the home) reads as empty.
    for (const fs::path& h : o.hidden)
        if (fs::is_regular_file(h, ec) && (inAny(h, shown) || !inAny(h, emptied)))
            a.insert(a.end(), {"--ro-bind", "/dev/null", fs::weakly_canonical(h, ec).string()});
    a.insert(a.end(), {"--chdir", work.string(), "--"});
    return a;
}

std::uint64_t halfTheMemory()
{
    const long pages = ::sysconf(_SC_PHYS_PAGES), size = ::sysconf(_SC_PAGESIZE);
    return pages > 0 && size > 0 ? std::uint64_t(pages) * std::uint64_t(size) / 2 : 0;
}

// Outside the sandbox a child that left the program's process group (setsid, a daemon) would
// survive the group's kill; it still carries the run's marker in its environment (it is in
// /proc/<pid>/environ, readable for this user's processes only), so it is found and killed.
void killMarked(const std::string& marker)
{
    for (int round = 0, found = 1; round < 5 && found > 0; ++round) {
        found = 0;
        std::error_code ec;
        for (const auto& e : fs::directory_iterator("/proc", ec)) {
            const std::string pid = e.path().filename().string();
            if (pid.find_first_not_of("0123456789") != std::string::npos)
                continue;
            std::ifstream in(e.path() / "environ", std::ios::binary);
            const std::string env((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
            if (env.find(marker + '\0') != std::string::npos && ::kill(std::stoi(pid), SIGKILL) == 0)
                ++found;
        }
    }
}

std::string runMarker()
{
    std::random_device random;
    char hex[17];
    std::snprintf(hex, sizeof hex, "%08x%08x", random(), random());
    return std::string("KF_CONFINED_RUN=") + hex;
}

} // namespace

const SandboxSupport& sandboxSupport()
{
    static const SandboxSupport support = [] {
        SandboxSupport s;
        s.bwrap = findTool("bwrap", "KF_BWRAP");
        if (s.bwrap.empty()) {
            s.why = "bwrap is not installed (Debian package bubblewrap)";
            return s;
        }
        // The namespaces and mounts every confined run asks for, once.
        auto ran = runProcess({s.bwrap, "--die-with-parent", "--unshare-net", "--unshare-pid", "--cap-drop", "ALL", "--ro-bind",
                               "/", "/", "--dev", "/dev", "--proc", "/proc", "--tmpfs", "/tmp", "--", "true"},
                              10000);
        if (ran && ran->exitCode == 0) {
            s.available = true;
            return s;
        }
        std::string line = ran ? ran->err : ran.error().message();
        while (!line.empty() && (line.back() == '\n' || line.back() == '\r'))
            line.pop_back();
        line = line.substr(line.rfind('\n') == std::string::npos ? 0 : line.rfind('\n') + 1).substr(0, 200);
        s.why = "bwrap cannot create namespaces here, user namespaces may be disabled (" + line + ")";
        return s;
    }();
    return support;
}

std::vector<std::string> confinedEnvironment(const fs::path& workDir, const std::vector<std::string>& extra)
{
    std::vector<std::string> env;
    for (char** e = environ; e && *e; ++e) {
        const std::string_view entry(*e);
        if (const auto eq = entry.find('='); eq != std::string_view::npos && allowed(entry.substr(0, eq)))
            env.emplace_back(entry);
    }
    const fs::path home = workDir / "home";
    env.insert(env.end(), {"HOME=" + home.string(), "TMPDIR=" + (workDir / "tmp").string(),
                           "XDG_CONFIG_HOME=" + (home / ".config").string(), "XDG_DATA_HOME=" + (home / ".local/share").string(),
                           "XDG_CACHE_HOME=" + (home / ".cache").string(), "XDG_STATE_HOME=" + (home / ".local/state").string()});
    env.insert(env.end(), extra.begin(), extra.end());
    return env;
}

Result<ConfinedOutput> runConfined(const std::vector<std::string>& argv, const ConfinedOptions& o)
{
    if (argv.empty() || o.workDir.empty())
        return Error::failed("run confined code", "no program or no working folder given");
    std::error_code ec;
    for (const char* d : {"home", "tmp"})
        fs::create_directories(o.workDir / d, ec);
    std::vector<std::string> extra = o.env;
    std::vector<fs::path> readable = o.readable;
    const std::vector<fs::path> program = programFolders(argv.front());
    if (program.empty() || ::access(program.back().c_str(), X_OK) != 0)
        return Error::failed("run " + argv.front(), "no such program", "check that the program exists and is executable");
    readable.insert(readable.end(), program.begin(), program.end());
    // Packages installed with `pip install --user` stay importable from the private home.
    if (const std::string home = envOr("HOME"); !home.empty() && fs::is_directory(fs::path(home) / ".local" / "lib", ec)) {
        readable.push_back(fs::path(home) / ".local" / "lib");
        extra.push_back("PYTHONUSERBASE=" + (fs::path(home) / ".local").string());
    }
    ProcessOptions p;
    p.env = confinedEnvironment(o.workDir, extra);
    p.onlyEnv = true;
    p.timeoutMs = o.timeoutMs;
    p.stop = o.stop;
    p.cwd = o.workDir.string();
    p.keepBytes = o.keepBytes;
    p.dataBytes = o.dataBytes ? o.dataBytes : halfTheMemory();
    p.cpuSeconds = o.cpuSeconds ? o.cpuSeconds
                                : std::uint64_t(o.timeoutMs / 1000 + 1) * std::max(1u, std::thread::hardware_concurrency());
    const SandboxSupport& s = sandboxSupport();
    const bool sandboxed = o.sandbox && s.available;
    std::vector<std::string> command = argv;
    if (sandboxed) {
        command = bwrapArguments(s, o, readable);
        command.push_back(programInRealPrefix(argv.front()));
        command.insert(command.end(), argv.begin() + 1, argv.end());
    }
    const std::string marker = runMarker();
    if (!sandboxed)
        p.env.push_back(marker);
    auto ran = runProcess(command, p);
    if (!sandboxed)
        killMarked(marker);
    if (!ran)
        return ran.error();
    ConfinedOutput out;
    static_cast<ProcessOutput&>(out) = std::move(ran.value());
    // bwrap ends with 128 + the signal that killed the program, as a shell would.
    if (sandboxed && out.exitCode > 128 && out.exitCode < 128 + NSIG) {
        out.signal = out.exitCode - 128;
        out.exitCode = -1;
    }
    out.dataBytes = p.dataBytes;
    out.cpuSeconds = p.cpuSeconds;
    out.sandboxed = sandboxed;
    out.unsandboxedWhy = sandboxed ? "" : (o.sandbox ? s.why : "the sandbox was turned off");
    // bwrap's own refusal (a folder it cannot mount) is its first line, before the program ran.
    if (sandboxed && out.exitCode == 1 && out.err.rfind("bwrap: ", 0) == 0)
        return Error::failed("run confined code", "the sandbox could not be set up: " + out.err.substr(0, out.err.find('\n')));
    return out;
}

} // namespace kf
