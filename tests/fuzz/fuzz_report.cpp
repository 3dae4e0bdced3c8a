// Reports and evidence: a report of any kind (a file given to `promote --evidence`, a stored
// correctness.json), read, summarised as the tables do, and written back. The same bytes are
// also read as the torch.compile harness's result and merged into every performance report of
// the document: a merged report must still read.
#include "engine/core/JsonReader.h"
#include "engine/protocol/CompileBaseline.h"
#include "engine/protocol/RunReport.h"
#include "engine/protocol/Signature.h"

#include <cstddef>
#include <cstdint>
#include <string_view>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size)
{
    const std::string_view text(reinterpret_cast<const char*>(data), size);
    auto j = kf::json::parseText(text, "fuzz report");
    if (!j)
        return 0;
    const auto harness = kf::protocol::readHarnessResult(text, "fuzz harness result");
    // The signature member is outside input too: a fixed key, so its check runs to the HMAC.
    static const kf::protocol::SigningKey key{std::string(32, 'k'), "0123456789abcdef", "fuzz-key"};
    (void)kf::protocol::checkSignature(j.value(), &key);
    for (const kf::protocol::RunReport& r : kf::protocol::reportsOfDocument(j.value())) {
        (void)r.header().title();
        (void)kf::protocol::checkSignature(r.document(), &key);
        if (r.verify()) {
            for (const auto& s : r.verify()->shapes) {
                (void)s.summary();
                for (const auto& t : s.trials) {
                    (void)t.evidence();
                    (void)t.failureKind();
                }
            }
            auto back = kf::protocol::VerifyReport::fromJson(r.verify()->toJson());
            if (!back)
                __builtin_trap();
        }
        if (r.bench()) {
            for (const auto& s : r.bench()->shapes)
                (void)s.allFlags();
            auto back = kf::protocol::BenchReport::fromJson(r.bench()->toJson());
            if (!back)
                __builtin_trap();
            if (harness) {
                nlohmann::json merged = r.document();
                kf::protocol::mergeCompileBaseline(merged, harness.value());
                if (!kf::protocol::BenchReport::fromJson(merged))
                    __builtin_trap();
            }
        }
        if (r.profile())
            (void)r.profile()->toJson();
    }
    return 0;
}
