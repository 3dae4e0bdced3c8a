#pragma once
// Small helpers shared by the Qt tests.
#include "engine/core/Result.h"
#include "engine/protocol/Verdict.h"
#include "testpaths.h"

#include <QString>
#include <QTest>

#include <string>

#define KF_VERIFY_OK(expr)                                                                       \
    do {                                                                                         \
        const auto& kf_r_ = (expr);                                                              \
        QVERIFY2(kf_r_.ok(), kf_r_.ok() ? "" : kf_r_.error().message().c_str());                 \
    } while (0)

inline QString qs(const std::string& s) { return QString::fromStdString(s); }
/// A verdict as the word reports carry ("pass"), for comparisons in tests.
inline QString qs(kf::protocol::Verdict v) { return QString::fromLatin1(kf::protocol::verdictName(v)); }
