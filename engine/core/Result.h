#pragma once
// Results at the engine boundary: a value or an Error that says what was attempted, why it
// failed and what the user can do about it (in the spirit of Qt Creator's Result<T>).

#include <cassert>
#include <string>
#include <utility>
#include <variant>

namespace kf {

/// Made by its named constructors, so every error says at least what was attempted and why:
/// `Error::failed("load libnvrtc", "…", "install …")`, `Error::inFile(path, "/shapes/0", …)`,
/// `.withKind(kRunnerLost)`. A default-constructed Error is only a placeholder to assign to.
struct Error {
    std::string what;     ///< what was attempted: "read task file", "load libnvrtc"
    std::string why;      ///< why it failed, one sentence
    std::string hint;     ///< what the user can do; may be empty
    std::string file;     ///< the file involved, if any
    std::string pointer;  ///< JSON pointer inside `file`, if any
    /// Empty, or a cause outside the user's code that tools treat apart (exit 3, not 1):
    /// kGpuOutOfMemory, kRunnerLost, kConnectionLost, kRunnerStart.
    std::string kind;

    Error() = default;
    /// `what` was attempted and failed because of `why`; `hint` says what to do about it.
    static Error failed(std::string what, std::string why, std::string hint = {})
    {
        return Error(std::move(what), std::move(why), std::move(hint), {}, {});
    }
    /// As failed(), about `file` (and the JSON pointer `pointer` in it; may be empty).
    static Error inFile(std::string file, std::string pointer, std::string what, std::string why, std::string hint = {})
    {
        return Error(std::move(what), std::move(why), std::move(hint), std::move(file), std::move(pointer));
    }
    /// This error with Error::kind `k` (kGpuOutOfMemory, kRunnerLost, …).
    Error withKind(std::string k) const
    {
        Error e = *this;
        e.kind = std::move(k);
        return e;
    }
    /// This error about `f` (and the JSON pointer `p` in it).
    Error inFileAt(std::string f, std::string p = {}) const
    {
        Error e = *this;
        e.file = std::move(f);
        e.pointer = std::move(p);
        return e;
    }

    /// "file: at /pointer: why (hint)" style sentence for terminals and status bars.
    std::string message() const;

private:
    Error(std::string w, std::string y, std::string h, std::string f, std::string p)
        : what(std::move(w)), why(std::move(y)), hint(std::move(h)), file(std::move(f)), pointer(std::move(p))
    {
    }
};

/// Error::kind of a GPU that has too little free memory (other processes hold it).
inline constexpr const char* kGpuOutOfMemory = "gpu_out_of_memory";
/// The runner's process went away for a reason outside the candidate (killed by someone else,
/// SIGTERM, SIGHUP): a pool runs the item again elsewhere.
inline constexpr const char* kRunnerLost = "runner_lost";
/// A remote endpoint's connection broke (ssh ended with 255, no message within the heartbeat timeout).
inline constexpr const char* kConnectionLost = "connection_lost";
/// The runner could not be started or never said hello.
inline constexpr const char* kRunnerStart = "runner_start";

template <class T>
class [[nodiscard]] Result {
public:
    Result(T value) : m_v(std::in_place_index<0>, std::move(value)) {}
    Result(Error error) : m_v(std::in_place_index<1>, std::move(error)) {}

    bool ok() const { return m_v.index() == 0; }
    explicit operator bool() const { return ok(); }

    T& value() & { assert(ok()); return std::get<0>(m_v); }
    const T& value() const& { assert(ok()); return std::get<0>(m_v); }
    T&& value() && { assert(ok()); return std::get<0>(std::move(m_v)); }
    T* operator->() { return &value(); }
    const T* operator->() const { return &value(); }
    T& operator*() & { return value(); }
    const T& operator*() const& { return value(); }

    const Error& error() const { assert(!ok()); return std::get<1>(m_v); }

private:
    std::variant<T, Error> m_v;
};

template <>
class [[nodiscard]] Result<void> {
public:
    Result() = default;
    Result(Error error) : m_error(std::move(error)), m_ok(false) {}
    bool ok() const { return m_ok; }
    explicit operator bool() const { return m_ok; }
    const Error& error() const { assert(!m_ok); return m_error; }

private:
    Error m_error;
    bool m_ok = true;
};

} // namespace kf
