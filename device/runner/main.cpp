// kforge-runner: the only process that runs GPU work (ARCHITECTURE.md). Speaks JSON lines on
// stdin/stdout (engine/runner/Protocol.h); everything else it prints goes to stderr.
#include "device/runner/Channel.h"
#include "device/runner/Runner.h"

#include <iostream>

int main()
{
    // First: take stdout over before LibTorch or the driver can print to it.
    kf::device::Channel channel;
    std::ios::sync_with_stdio(false);
    kf::device::Runner runner(channel);
    runner.start();
    return runner.serve(std::cin);
}
