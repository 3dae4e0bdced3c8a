// The server-sent events reader (engine/synth/Sse.h): every rule of the event-stream format the
// model connection relies on, each stream also fed split at every byte boundary and byte by byte
// (the same events must come out), and the bounds on a line and on an event's data.
#include "testutil.h"

#include "engine/synth/ModelClient.h"
#include "engine/synth/Sse.h"

#include <QtTest>

#include <string>
#include <vector>

using namespace kf;
using namespace kf::synth;

namespace {

// "event|data|id" per dispatched event, data with \n shown as "\\n".
std::string show(const SseEvent& e)
{
    std::string data;
    for (char c : e.data)
        data += c == '\n' ? std::string("\\n") : std::string(1, c);
    return e.event + "|" + data + "|" + e.id;
}

struct Outcome {
    QStringList events;
    bool ok = true;
};

// Feeds `pieces` in order, then finish().
Outcome run(const std::vector<std::string>& pieces)
{
    Outcome out;
    SseParser parser;
    auto onEvent = [&](const SseEvent& e) { out.events << qs(show(e)); };
    for (const auto& p : pieces) {
        if (!parser.feed(p, onEvent)) {
            out.ok = false;
            return out;
        }
    }
    out.ok = parser.finish(onEvent).ok();
    return out;
}

} // namespace

class TestSse : public QObject {
    Q_OBJECT
private slots:
    void rules_data();
    void rules();
    void bounds_data();
    void bounds();
    void errorIsFinal();
    void retryField();
};

void TestSse::rules_data()
{
    QTest::addColumn<QByteArray>("stream");
    QTest::addColumn<QStringList>("events");

    QTest::newRow("one event, LF") << QByteArray("data: hello\n\n") << QStringList{"message|hello|"};
    QTest::newRow("CRLF line ends") << QByteArray("data: a\r\n\r\ndata: b\r\n\r\n")
                                    << QStringList{"message|a|", "message|b|"};
    QTest::newRow("CR line ends") << QByteArray("data: a\r\rdata: b\r\r") << QStringList{"message|a|", "message|b|"};
    QTest::newRow("mixed line ends") << QByteArray("data: a\r\ndata: b\rdata: c\n\r\n")
                                     << QStringList{"message|a\\nb\\nc|"};
    QTest::newRow("one leading space stripped, not two") << QByteArray("data:  two\ndata:none\n\n")
                                                         << QStringList{"message| two\\nnone|"};
    QTest::newRow("multi-line data joined with LF") << QByteArray("data: {\"a\":\ndata: 1}\n\n")
                                                    << QStringList{"message|{\"a\":\\n1}|"};
    QTest::newRow("empty data line is data") << QByteArray("data\n\n") << QStringList{"message||"};
    QTest::newRow("event name") << QByteArray("event: message_start\ndata: {}\n\nevent: ping\ndata: x\n\n")
                                << QStringList{"message_start|{}|", "ping|x|"};
    QTest::newRow("event name does not carry over") << QByteArray("event: a\ndata: 1\n\ndata: 2\n\n")
                                                    << QStringList{"a|1|", "message|2|"};
    QTest::newRow("id persists") << QByteArray("id: 7\ndata: a\n\ndata: b\n\nid\ndata: c\n\n")
                                 << QStringList{"message|a|7", "message|b|7", "message|c|"};
    QTest::newRow("comments ignored") << QByteArray(": keep-alive\n:\ndata: x\n: inside\n\n")
                                      << QStringList{"message|x|"};
    QTest::newRow("comment-only stream") << QByteArray(": ping\n\n: ping\n\n") << QStringList{};
    QTest::newRow("event without data not dispatched")
        << QByteArray("event: ping\n\nevent: x\nid: 3\n\ndata: y\n\n") << QStringList{"message|y|3"};
    QTest::newRow("unknown fields ignored") << QByteArray("foo: bar\nretry: x\ndata: z\n\n")
                                            << QStringList{"message|z|"};
    QTest::newRow("field without colon") << QByteArray("data\ndata\n\n") << QStringList{"message|\\n|"};
    QTest::newRow("colon in value kept") << QByteArray("data: a: b:c\n\n") << QStringList{"message|a: b:c|"};
    QTest::newRow("unterminated last event dropped") << QByteArray("data: a\n\ndata: b\n")
                                                     << QStringList{"message|a|"};
    QTest::newRow("last line without end dropped") << QByteArray("data: a\n\ndata: b")
                                                   << QStringList{"message|a|"};
    QTest::newRow("blank lines between events") << QByteArray("\n\n\ndata: a\n\n\n\ndata: b\n\n")
                                                << QStringList{"message|a|", "message|b|"};
    QTest::newRow("OpenAI [DONE]") << QByteArray("data: {\"x\":1}\n\ndata: [DONE]\n\n")
                                   << QStringList{"message|{\"x\":1}|", "message|[DONE]|"};
    QTest::newRow("UTF-8 passes through") << QByteArray("data: \xc3\xa9t\xc3\xa9\n\n")
                                          << QStringList{QString::fromUtf8("message|\xc3\xa9t\xc3\xa9|")};
    QTest::newRow("empty stream") << QByteArray() << QStringList{};
}

void TestSse::rules()
{
    QFETCH(QByteArray, stream);
    QFETCH(QStringList, events);
    const std::string s = stream.toStdString();

    const Outcome whole = run({s});
    QVERIFY(whole.ok);
    QCOMPARE(whole.events, events);

    for (size_t cut = 0; cut <= s.size(); ++cut) {
        const Outcome split = run({s.substr(0, cut), s.substr(cut)});
        QVERIFY(split.ok);
        QVERIFY2(split.events == events, qPrintable(QString("split at byte %1").arg(cut)));
    }
    std::vector<std::string> bytes;
    for (char c : s)
        bytes.emplace_back(1, c);
    const Outcome oneByOne = run(bytes);
    QVERIFY(oneByOne.ok);
    QCOMPARE(oneByOne.events, events);
}

void TestSse::bounds_data()
{
    QTest::addColumn<QByteArray>("stream");
    QTest::addColumn<bool>("ok");
    QTest::addColumn<int>("events");
    const QByteArray mib(1024 * 1024, 'x');

    QTest::newRow("line of 1 MiB is fine") << QByteArray("data:" + mib.left(mib.size() - 5) + "\n\n") << true << 1;
    QTest::newRow("line past 1 MiB") << QByteArray("data: " + mib + "\n\n") << false << 0;
    QTest::newRow("line past 1 MiB without an end") << QByteArray(mib + mib) << false << 0;
    QTest::newRow("comment past 1 MiB") << QByteArray(":" + mib + "\n") << false << 0;
    QByteArray four;
    for (int i = 0; i < 4; ++i)
        four += "data:" + mib.left(mib.size() - 8) + "\n";
    QTest::newRow("data of 4 MiB in lines is fine") << QByteArray(four + "\n") << true << 1;
    QTest::newRow("data past 4 MiB") << QByteArray(four + "data: " + mib.left(100) + "\n\n") << false << 0;
    QByteArray manySmall;
    for (int i = 0; i < 5; ++i)
        manySmall += "data:" + mib.left(mib.size() / 2) + "\n\n";
    QTest::newRow("many events under the bound") << manySmall << true << 5;
}

void TestSse::bounds()
{
    QFETCH(QByteArray, stream);
    QFETCH(bool, ok);
    QFETCH(int, events);
    // Fed in 64 KiB pieces, as a network would deliver it.
    SseParser parser;
    int seen = 0;
    Result<void> r;
    const std::string s = stream.toStdString();
    for (size_t at = 0; at < s.size() && r.ok(); at += 65536)
        r = parser.feed(std::string_view(s).substr(at, 65536), [&](const SseEvent&) { ++seen; });
    if (r.ok())
        r = parser.finish([&](const SseEvent&) { ++seen; });
    QCOMPARE(r.ok(), ok);
    QCOMPARE(seen, events);
    if (!ok)
        QCOMPARE(QString::fromStdString(r.error().kind), QString(kModelMalformed));
}

void TestSse::errorIsFinal()
{
    SseLimits limits;
    limits.maxLineBytes = 8;
    SseParser parser(limits);
    int seen = 0;
    auto count = [&](const SseEvent&) { ++seen; };
    QVERIFY(!parser.feed("data: 123456789\n\n", count).ok());
    QVERIFY(!parser.feed("data: 1\n\n", count).ok());
    QVERIFY(!parser.finish(count).ok());
    QCOMPARE(seen, 0);
}

void TestSse::retryField()
{
    SseParser parser;
    std::vector<long long> retries;
    auto r = parser.feed("retry: 1500\ndata: a\n\nretry: 1x\ndata: b\n\n",
                         [&](const SseEvent& e) { retries.push_back(e.retryMs); });
    QVERIFY(r.ok());
    QCOMPARE(retries.size(), size_t(2));
    QCOMPARE(retries[0], 1500LL);
    QCOMPARE(retries[1], -1LL);
    QCOMPARE(parser.events(), size_t(2));
}

QTEST_GUILESS_MAIN(TestSse)
#include "tst_sse.moc"
