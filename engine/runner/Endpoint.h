#pragma once
// A runner endpoint (docs/runners.md): a command that speaks the runner protocol on stdio. The
// local kforge-runner, `ssh host kforge-runner` (a GPU on another machine), `srun … kforge-runner`
// (a Slurm cluster schedules the GPU) or any command template around {runner}. An endpoint is only
// a way to start a process; the supervisor speaks the protocol with whatever it starts.

#include <map>
#include <string>
#include <vector>

namespace kf {

struct Endpoint {
    enum class Kind { Local, Ssh, Srun, Command };

    std::string name = "local";                 ///< [a-z0-9][a-z0-9._-]{0,63}
    Kind kind = Kind::Local;
    /// The runner program on the endpoint's host. Empty: local and srun use
    /// RunnerSupervisor::defaultRunnerPath() (passed to argv() as `localRunner`), ssh uses
    /// "kforge-runner" (found on the remote PATH).
    std::string runner;
    std::map<std::string, std::string> env;     ///< set for the runner (on the remote host for ssh)

    // ssh
    std::string host;
    std::string user;
    int port = 0;                               ///< 0: ssh's default
    std::string identityFile;
    std::vector<std::string> sshOptions;        ///< extra ssh arguments, before "--"
    // srun
    std::vector<std::string> srunArgs;
    // command: an argv with exactly one element "{runner}"
    std::vector<std::string> command;

    /// The runner sees the client's files at the same paths (task folders, dump folders). Default:
    /// true for local and srun, false for ssh and command.
    bool sharedFs = true;
    int startTimeoutS = 120;                    ///< until hello; srun default 1800 (queueing)
    int idleTimeoutS = 600;
    int heartbeatTimeoutS = 5;
    int launchLatencyMs = 0;                    ///< added to every watchdog budget; default 2000 when remote
    std::string sanitizer;                      ///< compute-sanitizer's path on that host, or empty (found there)
    bool pool = true;                           ///< included by `--pool FILE`

    /// Whether the runner runs behind a connection or a scheduler (ssh, srun, command) rather than
    /// as our own child process: then a lost connection is told apart from a crash.
    bool remote() const { return kind != Kind::Local; }

    /// The process to start, argv[0] first (a name found on PATH, or a path). Local: {runner}.
    /// ssh: ssh -T -o BatchMode=yes -o ServerAliveInterval=2 -o ServerAliveCountMax=2
    ///   -o ConnectTimeout=10 -o ControlMaster=no [-p port] [-l user] [-i file] <sshOptions> -- host
    ///   'exec env NAME=value … runner' — the remote command is ONE word, quoted with shellQuote,
    ///   because ssh joins its words and hands them to the remote shell; env travels inside it
    ///   (ssh forwards no environment); exec, a shell built-in, comes first (`env … exec` would
    ///   look for a program named exec). srun: srun --ntasks=1 --nodes=1 --kill-on-bad-exit=1 -u
    ///   <srunArgs> [env NAME=value …] runner. command: the array with "{runner}" replaced.
    std::vector<std::string> argv(const std::string& localRunner) const;
    /// "NAME=value" entries for the child's own environment: local and command, which start here
    /// (ssh and srun carry env in argv). A non-empty `sanitizer` adds KF_COMPUTE_SANITIZER, here
    /// and in argv.
    std::vector<std::string> childEnv() const;
    /// "local", "ssh", "srun", "command".
    static const char* kindName(Kind kind);
    /// "box (ssh gpu-box.lan)", "cluster (srun)", "local" — for sentences and the status bar.
    std::string describe() const;
};

/// Quotes `word` for a POSIX shell so that `sh -c` sees exactly `word` (single quotes, ' as '\'').
std::string shellQuote(const std::string& word);

} // namespace kf
