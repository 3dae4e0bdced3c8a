// kforge-runner: the only process that runs GPU work (docs/runner-protocol.md). Speaks JSON lines on
// stdin/stdout (engine/protocol/Protocol.h); everything else it prints goes to stderr.
#include "device/runner/Channel.h"
#include "device/runner/Runner.h"

#include <csignal>
#include <algorithm>
#include <execinfo.h>
#include <ucontext.h>
#include <iostream>
#include <sys/prctl.h>
#include <unistd.h>

namespace {

// A crash of the runner's own code (not a candidate's kernel, whose faults come back as CUDA
// errors) leaves its call stack on stderr, where the supervisor quotes the last lines.
void crashed(int sig, siginfo_t*, void* context)
{
    void* frames[64];
    int n = ::backtrace(frames, 64);
    // The faulting instruction and the return address on the stack (a call through a null
    // pointer leaves no frame that backtrace() can walk).
    const auto* uc = static_cast<const ucontext_t*>(context);
    frames[0] = reinterpret_cast<void*>(uc->uc_mcontext.gregs[REG_RIP]);
    frames[1] = *reinterpret_cast<void* const*>(uc->uc_mcontext.gregs[REG_RSP]);
    n = std::max(n, 2);
    const char head[] = "kforge-runner: crashed; call stack (addr2line -f -C -e kforge-runner <offset>):\n";
    (void)!::write(2, head, sizeof head - 1);
    ::backtrace_symbols_fd(frames, n, 2);
    std::signal(sig, SIG_DFL);
    std::raise(sig);
}

} // namespace

int main()
{
    struct sigaction sa {};
    sa.sa_sigaction = crashed;
    sa.sa_flags = SA_SIGINFO;
    for (int sig : {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT})
        ::sigaction(sig, &sa, nullptr);
    // A runner stuck in a hung kernel never reads end-of-input; if whoever owns it is killed
    // outright, die with it instead of holding the GPU. (Checked after the call: the parent may
    // already be gone.)
    const pid_t parent = ::getppid();
    ::prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (::getppid() != parent)
        return 0;
    // First: take stdout over before LibTorch or the driver can print to it.
    kf::device::Channel channel;
    std::ios::sync_with_stdio(false);
    kf::device::Runner runner(channel);
    runner.start();
    return runner.serve(std::cin);
}
