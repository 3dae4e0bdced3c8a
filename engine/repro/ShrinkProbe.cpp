#include "engine/repro/ShrinkProbe.h"

namespace kf {

Result<std::vector<ProbeOutcome>> probeOutcomes(const protocol::RunReport& report, std::size_t shapes)
{
    if (report.isError() || !report.verify())
        return Error::failed("probe shapes", report.header().errorSentence());
    std::vector<ProbeOutcome> out;
    for (const protocol::CorrectnessShape& s : report.verify()->shapes) {
        ProbeOutcome o;
        if (const protocol::Trial* t = s.firstFailingTrial())
            o = {true, t->failureKind(), t->failure};
        out.push_back(o);
    }
    if (out.size() != shapes)
        return Error::failed("probe shapes", "the runner reported " + std::to_string(out.size()) + " shapes for " +
                                         std::to_string(shapes));
    return out;
}

} // namespace kf
