#include "engine/runner/RunnersConfig.h"

#include "engine/core/Files.h"
#include "engine/core/JsonReader.h"
#include "engine/core/UserConfig.h"

#include <algorithm>
#include <cstdlib>
#include <cctype>
#include <map>
#include <system_error>

namespace kf {

namespace fs = std::filesystem;
using kf::json::Json;
using Kind = Endpoint::Kind;

namespace {

const char* kWhat = "read the runner endpoints";
const char* kFixHint = "fix it, or edit the endpoints in the workbench's settings";

/// A refusal with its own "what to do" (a SchemaError from the reader gets kFixHint).
struct Refusal {
    std::string pointer, why, hint;
};

[[noreturn]] void refuse(std::string pointer, std::string why, std::string hint)
{
    throw Refusal{std::move(pointer), std::move(why), std::move(hint)};
}

bool isName(std::string_view s)
{
    auto lowerOrDigit = [](char c) { return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9'); };
    if (s.empty() || s.size() > 64 || !lowerOrDigit(s[0]))
        return false;
    return std::all_of(s.begin(), s.end(), [&](char c) { return lowerOrDigit(c) || c == '.' || c == '_' || c == '-'; });
}

bool isEnvName(std::string_view s)
{
    auto letter = [](char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_'; };
    if (s.empty() || !letter(s[0]))
        return false;
    return std::all_of(s.begin(), s.end(), [&](char c) { return letter(c) || (c >= '0' && c <= '9'); });
}

bool hasLineBreakOrNul(std::string_view s) { return s.find_first_of(std::string_view("\0\n\r", 3)) != std::string_view::npos; }

std::string inQuotes(const std::string& s) { return "\"" + s + "\""; }

/// A string that goes into a command line: not empty, one line.
std::string wordAt(json::Object& o, std::string_view key)
{
    std::string s = o.string(key);
    if (s.empty() || hasLineBreakOrNul(s))
        refuse(o.at(key), std::string(key) + " must be one line of text, not empty", "give the value or leave the key out");
    return s;
}

/// An array of argv words (a NUL would cut a word short on its way to execve).
std::vector<std::string> wordsAt(json::Object& o, std::string_view key)
{
    std::vector<std::string> words = json::asStringArray(o.required(key), o.at(key));
    for (size_t i = 0; i < words.size(); ++i)
        if (words[i].find('\0') != std::string::npos)
            refuse(json::child(o.at(key), i), std::string(key) + " holds a NUL character", "leave it out");
    return words;
}

int intInRange(json::Object& o, std::string_view key, int fallback, int lo, int hi, const char* unit)
{
    const std::int64_t v = o.integerOr(key, fallback);
    if (v < lo || v > hi)
        refuse(o.at(key), std::string(key) + " " + std::to_string(v) + " is not from " + std::to_string(lo) + " to " + std::to_string(hi),
               std::string("a whole number of ") + unit);
    return int(v);
}

// The ssh(1) options that take a value (its getopt string).
bool shortOptionTakesValue(char c) { return std::string_view("BbcDEeFIiJLlmOoPpQRSWw").find(c) != std::string_view::npos; }

/// ssh_options: options only (a stray word would become the host or the command), and none that
/// asks for a terminal, runs no command or leaves for the background.
void checkSshOptions(const std::vector<std::string>& opts, const std::string& ptr)
{
    const char* pty = "a pseudo-terminal rewrites protocol lines";
    for (size_t i = 0; i < opts.size(); ++i) {
        const std::string& a = opts[i];
        const std::string at = json::child(ptr, i);
        if (a.size() < 2 || a[0] != '-' || a == "--")
            refuse(at, "ssh_options holds options only, and " + inQuotes(a) + " is not one", "the host goes in \"host\"; leave this out");
        for (size_t j = 1; j < a.size(); ++j) {
            const char c = a[j];
            if (c == 't')
                refuse(at, pty, "leave -t out");
            if (c == 'N')
                refuse(at, "-N starts no remote command, so no runner", "leave -N out");
            if (c == 'f')
                refuse(at, "-f sends ssh to the background, away from the runner's pipes", "leave -f out");
            if (!shortOptionTakesValue(c))
                continue;
            std::string value = a.substr(j + 1);
            if (value.empty()) {
                if (i + 1 == opts.size())
                    refuse(at, "-" + std::string(1, c) + " needs a value after it", "add the value as the next element");
                value = opts[++i];
            }
            std::string key = value.substr(0, value.find_first_of("= \t"));
            std::transform(key.begin(), key.end(), key.begin(), [](unsigned char ch) { return char(std::tolower(ch)); });
            if (c == 'o' && key == "requesttty")
                refuse(json::child(ptr, i), pty, "leave -t out");
            break;
        }
    }
}

/// The endpoint's "env": names, values on one line, nothing Slurm sets itself.
void readEnv(json::Object& o, const Json& env, Endpoint& e)
{
    json::Object vars(env, o.at("env"));
    for (auto it = env.begin(); it != env.end(); ++it) {
        const std::string at = vars.at(it.key());
        if (!isEnvName(it.key()))
            refuse(at, "environment variable name " + inQuotes(it.key()) + " is not letters, digits and '_' starting with a letter or '_'",
                   "rename it");
        std::string value = json::asString(it.value(), at);
        if (hasLineBreakOrNul(value))
            refuse(at, "the value of " + it.key() + " holds a line break or a NUL", "give it on one line");
        if (e.kind == Kind::Srun && it.key() == "CUDA_VISIBLE_DEVICES")
            refuse(at, "Slurm sets CUDA_VISIBLE_DEVICES for --gres", "leave it out; ask for a GPU with \"--gres=gpu:1\" in srun_args");
        e.env[it.key()] = std::move(value);
        vars.optional(it.key());
    }
}

/// An ssh endpoint's host, user, port, identity file and options.
void readSsh(json::Object& o, Endpoint& e)
{
    if (!o.has("host"))
        refuse(o.pointer(), "an ssh endpoint needs \"host\"", "add \"host\": \"gpu-box.lan\"");
    e.host = wordAt(o, "host");
    if (e.host[0] == '-')
        refuse(o.at("host"), "host " + inQuotes(e.host) + " starts with \"-\"", "ssh would read it as an option; give the host's name");
    if (e.host.find_first_of(" \t") != std::string::npos)
        refuse(o.at("host"), "host " + inQuotes(e.host) + " holds a space", "give the host's name alone");
    if (o.has("user"))
        e.user = wordAt(o, "user");
    if (o.has("port"))
        e.port = intInRange(o, "port", 22, 1, 65535, "port");
    if (o.has("identity_file"))
        e.identityFile = wordAt(o, "identity_file");
    if (o.has("ssh_options")) {
        e.sshOptions = wordsAt(o, "ssh_options");
        checkSshOptions(e.sshOptions, o.at("ssh_options"));
    }
}

/// A command endpoint's program, with "{runner}" exactly once.
void readCommand(json::Object& o, Endpoint& e)
{
    if (!o.has("command"))
        refuse(o.pointer(), "a command endpoint needs \"command\"", "add \"command\": [\"sh\", \"-c\", \"exec \\\"$0\\\"\", \"{runner}\"]");
    e.command = wordsAt(o, "command");
    std::vector<size_t> at;
    for (size_t i = 0; i < e.command.size(); ++i)
        if (e.command[i] == "{runner}")
            at.push_back(i);
    if (at.empty())
        refuse(o.at("command"), "command has no \"{runner}\" element", "put \"{runner}\" where the runner program goes, as an element of its own");
    if (at.size() > 1)
        refuse(json::child(o.at("command"), at[1]), "command has \"{runner}\" twice (elements " + std::to_string(at[0]) + " and " + std::to_string(at[1]) + ")",
               "keep one");
    if (e.command[0].empty())
        refuse(json::child(o.at("command"), 0), "command's first element names no program", "give the program to start");
}

/// A local endpoint's "gpus": "all", or distinct CUDA device indices.
void readGpus(json::Object& o, const Json& g, const Endpoint& e, std::vector<int>& gpus, bool& allGpus)
{
    const std::string ptr = o.at("gpus");
    if (e.name == "local")
        refuse(ptr, "the endpoint \"local\" cannot list GPUs (it must stay one endpoint)", "give the GPUs an endpoint of their own, e.g. \"gpus\"");
    if (e.env.count("CUDA_VISIBLE_DEVICES"))
        refuse(json::child(o.at("env"), "CUDA_VISIBLE_DEVICES"), "gpus sets CUDA_VISIBLE_DEVICES for each GPU", "leave it out of env");
    if (g.is_string() && g.get<std::string>() == "all") {
        allGpus = true;
    } else if (g.is_array()) {
        if (g.empty() || g.size() > 64)
            refuse(ptr, "gpus lists " + std::to_string(g.size()) + " GPUs", "list 1 to 64 GPU indices, or write \"all\"");
        for (size_t i = 0; i < g.size(); ++i) {
            const std::int64_t index = json::asInteger(g[i], json::child(ptr, i));
            if (index < 0 || index > 1023)
                refuse(json::child(ptr, i), "GPU index " + std::to_string(index) + " is not from 0 to 1023", "give CUDA's device index");
            if (std::find(gpus.begin(), gpus.end(), int(index)) != gpus.end())
                refuse(json::child(ptr, i), "GPU " + std::to_string(index) + " is listed twice", "list each GPU once");
            gpus.push_back(int(index));
        }
    } else {
        refuse(ptr, "gpus must be \"all\" or an array of GPU indices, not " + json::describe(g), "write \"all\" or e.g. [0, 1]");
    }
}

Endpoint readEndpoint(json::Object& o, std::vector<int>& gpus, bool& allGpus)
{
    Endpoint e;
    e.name = o.string("name");
    if (!isName(e.name))
        refuse(o.at("name"), "the name " + inQuotes(e.name) + " is not 1 to 64 lower-case letters, digits, '.', '_' or '-' starting with a letter or digit",
               "rename it, e.g. \"gpu-box\"");
    const std::string kind = o.string("kind");
    if (kind == "local") e.kind = Kind::Local;
    else if (kind == "ssh") e.kind = Kind::Ssh;
    else if (kind == "srun") e.kind = Kind::Srun;
    else if (kind == "command") e.kind = Kind::Command;
    else refuse(o.at("kind"), "kind " + inQuotes(kind) + " is not one of local, ssh, srun, command", kind == "slurm" ? "Slurm's kind is srun" : "pick one");
    if (e.name == "local" && e.kind != Kind::Local)
        refuse(o.at("kind"), "the endpoint \"local\" may only be of kind local (it stands for this machine)", "give this endpoint another name");

    // Keys that belong to one kind are refused by name on the others.
    auto only = [&](std::initializer_list<const char*> keys, Kind k) {
        for (const char* key : keys)
            if (e.kind != k && o.has(key))
                refuse(o.at(key), std::string(key) + " applies to " + Endpoint::kindName(k) + " endpoints only, and this one is " + kind,
                       "leave it out");
    };
    only({"host", "user", "port", "identity_file", "ssh_options"}, Kind::Ssh);
    only({"srun_args"}, Kind::Srun);
    only({"command"}, Kind::Command);
    only({"gpus"}, Kind::Local);

    if (o.has("runner")) {
        e.runner = wordAt(o, "runner");
        if (e.runner[0] == '-')
            refuse(o.at("runner"), "runner " + inQuotes(e.runner) + " starts with \"-\"", "give the runner program's path");
    }
    if (const Json* env = o.optional("env"))
        readEnv(o, *env, e);
    if (e.kind == Kind::Ssh)
        readSsh(o, e);
    if (e.kind == Kind::Srun && o.has("srun_args")) {
        e.srunArgs = wordsAt(o, "srun_args");
        for (size_t i = 0; i < e.srunArgs.size(); ++i)
            if (e.srunArgs[i] == "--pty" || e.srunArgs[i].rfind("--pty=", 0) == 0)
                refuse(json::child(o.at("srun_args"), i), "a pseudo-terminal rewrites protocol lines", "leave --pty out");
    }
    if (e.kind == Kind::Command)
        readCommand(o, e);
    e.sharedFs = o.booleanOr("shared_fs", e.kind == Kind::Local || e.kind == Kind::Srun);
    e.startTimeoutS = intInRange(o, "start_timeout_s", e.kind == Kind::Srun ? 1800 : 120, 1, 86400, "seconds");
    e.idleTimeoutS = intInRange(o, "idle_timeout_s", 600, 1, 86400, "seconds");
    e.heartbeatTimeoutS = intInRange(o, "heartbeat_timeout_s", 5, 1, 600, "seconds");
    e.launchLatencyMs = intInRange(o, "launch_latency_ms", e.kind == Kind::Local ? 0 : 2000, 0, 60000, "milliseconds");
    if (o.has("sanitizer"))
        e.sanitizer = wordAt(o, "sanitizer");
    e.pool = o.booleanOr("pool", true);

    if (const Json* g = o.optional("gpus"))
        readGpus(o, *g, e, gpus, allGpus);
    o.finish();
    return e;
}

/// Why `name` is no endpoint, for "default" and "pools".
[[noreturn]] void noEndpoint(const RunnersConfig& c, const std::map<std::string, std::vector<int>>& gpuLists, const std::string& ptr,
                             const std::string& name)
{
    if (auto it = gpuLists.find(name); it != gpuLists.end()) {
        std::string names;
        for (int g : it->second)
            names += (names.empty() ? "" : ", ") + inQuotes(name + "/" + std::to_string(g));
        refuse(ptr, inQuotes(name) + " lists GPUs, so its endpoints are " + names,
               "name one of them, e.g. " + inQuotes(name + "/" + std::to_string(it->second.front())));
    }
    for (const Endpoint& t : c.allGpuTemplates)
        if (t.name == name)
            refuse(ptr, inQuotes(name) + " has gpus \"all\": its endpoints are known only once a runner there lists its GPUs",
                   "name another endpoint, or list the GPUs as indices");
    std::string names;
    for (const Endpoint& e : c.endpoints)
        names += (names.empty() ? "" : ", ") + e.name;
    refuse(ptr, "no endpoint is named " + inQuotes(name), "the endpoints are: " + names);
}

} // namespace

const Endpoint* RunnersConfig::find(const std::string& name) const
{
    auto it = std::find_if(endpoints.begin(), endpoints.end(), [&](const Endpoint& e) { return e.name == name; });
    return it == endpoints.end() ? nullptr : &*it;
}

Result<std::vector<Endpoint>> RunnersConfig::poolEndpoints(const std::string& poolName) const
{
    std::vector<Endpoint> out;
    if (poolName.empty()) {
        for (const Endpoint& e : endpoints)
            if (e.pool)
                out.push_back(e);
        return out;
    }
    auto it = pools.find(poolName);
    if (it == pools.end()) {
        std::string names;
        for (const auto& [name, members] : pools)
            names += (names.empty() ? "" : ", ") + name;
        return Error::failed("choose the runner pool", "no pool is named " + inQuotes(poolName), names.empty() ? "the file defines no pools; add one under \"pools\", or leave the pool name out" : "the pools are: " + names);
    }
    for (const std::string& name : it->second)
        if (const Endpoint* e = find(name))
            out.push_back(*e);
    return out;
}

Endpoint builtinLocalEndpoint()
{
    Endpoint e;
    e.pool = false;
    return e;
}

fs::path runnersConfigPath()
{
    return userConfigFile("KF_RUNNERS_FILE", "runners.json");
}

Result<RunnersConfig> parseRunnersConfig(std::string_view text, const std::string& origin)
{
    auto doc = json::parseText(text, origin);
    if (!doc)
        return doc.error();
    RunnersConfig out;
    try {
        json::Object o(*doc, "");
        const std::int64_t version = o.integer("schema_version");
        if (version > 1)
            refuse(o.at("schema_version"), "schema_version " + std::to_string(version) + " is newer than this KernelForge reads (1)",
                   "update KernelForge, or write the file for version 1");
        if (version != 1)
            refuse(o.at("schema_version"), "schema_version must be 1", "write \"schema_version\": 1");
        out.defaultEndpoint = o.stringOr("default", "local");
        std::map<std::string, std::string> firstAt;              // entry name -> its pointer
        std::map<std::string, std::vector<int>> gpuLists;        // entries with an array of gpus
        bool localDefined = false;
        if (const Json* list = o.optional("endpoints")) {
            const Json& arr = json::asArray(*list, o.at("endpoints"));
            if (arr.size() > 256)
                refuse(o.at("endpoints"), "the file lists " + std::to_string(arr.size()) + " endpoints", "keep at most 256");
            for (size_t i = 0; i < arr.size(); ++i) {
                const std::string ptr = json::child(o.at("endpoints"), i);
                json::Object eo(arr[i], ptr);
                std::vector<int> gpus;
                bool allGpus = false;
                Endpoint e = readEndpoint(eo, gpus, allGpus);
                if (auto [it, fresh] = firstAt.emplace(e.name, ptr); !fresh)
                    refuse(json::child(ptr, "name"), inQuotes(e.name) + " is named twice, at " + it->second + " and " + ptr,
                           "give each endpoint a name of its own");
                localDefined = localDefined || e.name == "local";
                if (allGpus) {
                    out.allGpuTemplates.push_back(std::move(e));
                } else if (!gpus.empty()) {
                    gpuLists[e.name] = gpus;
                    for (int g : gpus) {
                        Endpoint one = e;
                        one.name = e.name + "/" + std::to_string(g);
                        one.env["CUDA_VISIBLE_DEVICES"] = std::to_string(g);
                        out.endpoints.push_back(std::move(one));
                    }
                } else {
                    out.endpoints.push_back(std::move(e));
                }
            }
        }
        if (!localDefined)
            out.endpoints.insert(out.endpoints.begin(), builtinLocalEndpoint());
        if (const Json* pools = o.optional("pools")) {
            json::Object po(*pools, o.at("pools"));
            for (auto it = pools->begin(); it != pools->end(); ++it) {
                const std::string ptr = po.at(it.key());
                po.optional(it.key());
                if (!isName(it.key()))
                    refuse(ptr, "the pool name " + inQuotes(it.key()) + " is not 1 to 64 lower-case letters, digits, '.', '_' or '-'", "rename it");
                std::vector<std::string> members = json::asStringArray(it.value(), ptr);
                if (members.empty())
                    refuse(ptr, "pool " + inQuotes(it.key()) + " names no endpoint", "list its endpoints, or leave the pool out");
                for (size_t i = 0; i < members.size(); ++i) {
                    if (!out.find(members[i]))
                        noEndpoint(out, gpuLists, json::child(ptr, i), members[i]);
                    if (std::find(members.begin(), members.begin() + i, members[i]) != members.begin() + i)
                        refuse(json::child(ptr, i), inQuotes(members[i]) + " is in pool " + inQuotes(it.key()) + " twice", "list each endpoint once");
                }
                out.pools[it.key()] = std::move(members);
            }
        }
        o.finish();
        if (!out.find(out.defaultEndpoint))
            noEndpoint(out, gpuLists, "/default", out.defaultEndpoint);
    } catch (const json::SchemaError& e) {
        return Error::inFile(origin, e.pointer, kWhat, e.message, kFixHint);
    } catch (const Refusal& r) {
        return Error::inFile(origin, r.pointer.empty() ? "/" : r.pointer, kWhat, r.why, r.hint);
    }
    return out;
}

Result<RunnersConfig> readRunnersConfig(const fs::path& file)
{
    std::error_code ec;
    if (!fs::exists(file, ec))
        return parseRunnersConfig("{\"schema_version\": 1}", file.string());
    if (!fs::is_regular_file(file, ec) || fs::file_size(file, ec) > (1 << 20))
        return Error::inFile(file.string(), {}, kWhat, "not a regular file of at most 1 MiB", "give the path of a runners.json file");
    auto text = readFileBytes(file);
    if (!text)
        return text.error();
    return parseRunnersConfig(*text, file.string());
}

} // namespace kf
