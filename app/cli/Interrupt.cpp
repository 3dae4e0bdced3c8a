#include "Interrupt.h"

#include <atomic>
#include <csignal>

namespace kf::cli {

namespace {

std::atomic<CancelToken*> g_token{nullptr};
std::atomic_bool g_interrupted{false};

extern "C" void onInterrupt(int)
{
    g_interrupted.store(true);
    if (CancelToken* t = g_token.load())
        t->cancel();
}

} // namespace

struct InterruptGuard::Saved {
    struct sigaction oldInt {};
    struct sigaction oldTerm {};
};

InterruptGuard::InterruptGuard(CancelToken* token) : m_saved(new Saved)
{
    g_token.store(token);
    struct sigaction sa {};
    sa.sa_handler = &onInterrupt;
    sigemptyset(&sa.sa_mask);
    sa.sa_flags = SA_RESTART | SA_RESETHAND;   // a second Ctrl-C ends us the hard way
    ::sigaction(SIGINT, &sa, &m_saved->oldInt);
    ::sigaction(SIGTERM, &sa, &m_saved->oldTerm);
}

InterruptGuard::~InterruptGuard()
{
    ::sigaction(SIGINT, &m_saved->oldInt, nullptr);
    ::sigaction(SIGTERM, &m_saved->oldTerm, nullptr);
    g_token.store(nullptr);
    delete m_saved;
}

bool InterruptGuard::interrupted()
{
    return g_interrupted.load();
}

} // namespace kf::cli
