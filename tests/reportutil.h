#pragma once
// Reports written as JSON in a test, read the way the product reads them (protocol::RunReport).
// A fixture that the reader refuses is a broken test, so it stops the test run with the reason.
#include "engine/protocol/RunReport.h"

#include <QtGlobal>

#include <nlohmann/json.hpp>

namespace kf::test {

inline kf::protocol::RunReport report(const nlohmann::json& j)
{
    auto r = kf::protocol::RunReport::fromJson(j, "test fixture");
    if (!r)
        qFatal("a test's report fixture does not read: %s", r.error().message().c_str());
    return std::move(r.value());
}

} // namespace kf::test
