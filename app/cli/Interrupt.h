#pragma once
// Ctrl-C and SIGTERM for commands that run a child process (the runner, the importer's Python):
// while an InterruptGuard lives, the first signal is recorded (and cancels `token`, when given)
// instead of ending kforge, so the command stops its child's process group and cleans up; a
// second signal ends kforge the hard way.

#include "engine/compile/CompileTypes.h"

namespace kf::cli {

class InterruptGuard {
public:
    explicit InterruptGuard(CancelToken* token = nullptr);
    ~InterruptGuard();
    InterruptGuard(const InterruptGuard&) = delete;
    InterruptGuard& operator=(const InterruptGuard&) = delete;

    /// A signal arrived while a guard was alive.
    static bool interrupted();

private:
    struct Saved;
    Saved* m_saved;
};

} // namespace kf::cli
