#include "engine/runner/Endpoint.h"

#include <filesystem>

namespace kf {

namespace {

/// What the runner's environment gets: the endpoint's env, plus KF_COMPUTE_SANITIZER when the
/// endpoint names compute-sanitizer's path on its host (the runner's findTool reads that variable).
std::map<std::string, std::string> runnerEnv(const Endpoint& e)
{
    std::map<std::string, std::string> env = e.env;
    if (!e.sanitizer.empty())
        env.emplace("KF_COMPUTE_SANITIZER", e.sanitizer);
    return env;
}

bool isPlainWordChar(char c)
{
    // Characters no POSIX shell treats specially anywhere in a word. '=' is left out (a first word
    // NAME=value would be an assignment), '~' and '#' too (special at the start of a word).
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '-' || c == '.'
        || c == '/' || c == ':' || c == '@' || c == '%' || c == '+' || c == ',';
}

} // namespace

std::string shellQuote(const std::string& word)
{
    bool plain = !word.empty();
    for (char c : word)
        plain = plain && isPlainWordChar(c);
    if (plain)
        return word;
    std::string out = "'";
    for (char c : word) {
        if (c == '\'')
            out += "'\\''"; // close the quote, an escaped quote, open again
        else
            out += c;
    }
    out += '\'';
    return out;
}

std::vector<std::string> Endpoint::argv(const std::string& localRunner) const
{
    const std::string program = runner.empty() ? (kind == Kind::Ssh ? std::string("kforge-runner") : localRunner) : runner;
    const std::map<std::string, std::string> vars = runnerEnv(*this);
    switch (kind) {
    case Kind::Local: return {program};
    case Kind::Ssh: {
        std::vector<std::string> a = {"ssh", "-T", "-o", "BatchMode=yes", "-o", "ServerAliveInterval=2", "-o", "ServerAliveCountMax=2",
                                      "-o", "ConnectTimeout=10", "-o", "ControlMaster=no"};
        if (port > 0)
            a.insert(a.end(), {"-p", std::to_string(port)});
        if (!user.empty())
            a.insert(a.end(), {"-l", user});
        if (!identityFile.empty())
            a.insert(a.end(), {"-i", identityFile});
        a.insert(a.end(), sshOptions.begin(), sshOptions.end());
        a.insert(a.end(), {"--", host});
        // One word: ssh joins its words with spaces and the remote login shell splits them again.
        // `exec env NAME=value … runner`: env(1) is a program, so it comes after exec (the other
        // way round, env would look for a program called "exec").
        std::string remote = "exec ";
        if (!vars.empty()) {
            remote += "env ";
            for (const auto& [name, value] : vars)
                remote += shellQuote(name + "=" + value) + " ";
        }
        remote += shellQuote(program);
        a.push_back(std::move(remote));
        return a;
    }
    case Kind::Srun: {
        std::vector<std::string> a = {"srun", "--ntasks=1", "--nodes=1", "--kill-on-bad-exit=1", "-u"};
        a.insert(a.end(), srunArgs.begin(), srunArgs.end());
        if (!vars.empty()) {
            a.push_back("env");
            for (const auto& [name, value] : vars)
                a.push_back(name + "=" + value);
        }
        a.push_back(program);
        return a;
    }
    case Kind::Command: {
        std::vector<std::string> a = command;
        for (std::string& word : a)
            if (word == "{runner}")
                word = program;
        return a;
    }
    }
    return {program};
}

std::vector<std::string> Endpoint::childEnv() const
{
    // ssh and srun carry the environment in argv; local and command start their process here.
    if (kind == Kind::Ssh || kind == Kind::Srun)
        return {};
    std::vector<std::string> out;
    for (const auto& [name, value] : runnerEnv(*this))
        out.push_back(name + "=" + value);
    return out;
}

const char* Endpoint::kindName(Kind kind)
{
    switch (kind) {
    case Kind::Local: return "local";
    case Kind::Ssh: return "ssh";
    case Kind::Srun: return "srun";
    case Kind::Command: return "command";
    }
    return "local";
}

std::string Endpoint::describe() const
{
    switch (kind) {
    case Kind::Local: return name == "local" ? name : name + " (local)";
    case Kind::Ssh: {
        std::string where = (user.empty() ? "" : user + "@") + host;
        if (port > 0)
            where += ":" + std::to_string(port);
        return name + " (ssh " + where + ")";
    }
    case Kind::Srun: return name + " (srun)";
    case Kind::Command: {
        const std::string program = command.empty() ? std::string() : std::filesystem::path(command.front()).filename().string();
        return name + " (command " + program + ")";
    }
    }
    return name;
}

} // namespace kf
