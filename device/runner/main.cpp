// kforge-runner: the only process that runs GPU work (docs/runner-protocol.md). Speaks JSON lines on
// stdin/stdout (engine/protocol/Protocol.h); everything else it prints goes to stderr.
#include "device/runner/Channel.h"
#include "device/runner/Runner.h"

#include <csignal>
#include <iostream>
#include <sys/prctl.h>
#include <unistd.h>

int main()
{
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
