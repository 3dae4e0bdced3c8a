#include "engine/protocol/Verdict.h"

#include "engine/protocol/Report.h"

namespace kf::protocol {

const char* verdictName(Verdict v)
{
    switch (v) {
    case Verdict::Pass: return "pass";
    case Verdict::Fail: return "fail";
    case Verdict::Ok: return "ok";
    case Verdict::NoCounters: return "no_counters";
    case Verdict::Error: return "error";
    }
    return "error";
}

std::optional<Verdict> parseVerdict(std::string_view word)
{
    for (Verdict v : {Verdict::Pass, Verdict::Fail, Verdict::Ok, Verdict::NoCounters, Verdict::Error})
        if (word == verdictName(v))
            return v;
    return std::nullopt;
}

bool verdictFitsKind(Verdict v, ReportKind kind)
{
    switch (kind) {
    case ReportKind::Correctness: return v == Verdict::Pass || v == Verdict::Fail || v == Verdict::Error;
    case ReportKind::Performance: return v == Verdict::Ok || v == Verdict::Fail || v == Verdict::Error;
    case ReportKind::Profile: return v == Verdict::Ok || v == Verdict::NoCounters || v == Verdict::Error;
    }
    return false;
}

} // namespace kf::protocol
