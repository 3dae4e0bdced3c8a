// The strict JSON reader every file format of ours goes through (engine/core/JsonReader.h): what
// it refuses, where it says the fault is, how much of the input a message repeats, and that
// reading stays a single pass over the text.
#include "engine/core/Echo.h"
#include "engine/core/JsonCost.h"
#include "engine/core/JsonReader.h"
#include "testutil.h"

#include <QTest>

#include <string>

using namespace kf;

class TestJsonReader : public QObject {
    Q_OBJECT
private slots:
    void refusesWithAPosition_data();
    void refusesWithAPosition();
    void readsWhatItShould_data();
    void readsWhatItShould();
    void echoesAreCapped_data();
    void echoesAreCapped();
    void aMegabyteKeyIsNotRepeated();
    void readingIsOnePass();
};

namespace {

std::string nested(int levels)
{
    return std::string(static_cast<size_t>(levels), '[') + std::string(static_cast<size_t>(levels), ']');
}

std::string repeatedPointer(const char* segment, int times)
{
    std::string p;
    for (int i = 0; i < times; ++i)
        p += segment;
    return p;
}

} // namespace

void TestJsonReader::refusesWithAPosition_data()
{
    QTest::addColumn<QByteArray>("text");
    QTest::addColumn<QString>("why");     // the start of Error::why
    QTest::addColumn<QString>("pointer"); // Error::pointer
    // Issue 41: nlohmann's lexer takes a NUL for the end of the input; d7527b5 accepted these.
    QTest::newRow("NUL bytes after the closing brace") << QByteArray("{}\0\0\0", 5)
                                                       << "line 1, column 3: invalid JSON: a NUL byte follows the end of the JSON value"
                                                       << "";
    QTest::newRow("a NUL on the next line, then another object")
        << QByteArray("{\"a\": 1}\n\0{\"a\": 2}", 18) << "line 2, column 1: invalid JSON: a NUL byte follows the end of the JSON value"
        << "";
    QTest::newRow("a letter after the closing brace") << QByteArray("{}\n  x") << "line 2, column 3: invalid JSON: syntax error" << "";
    QTest::newRow("a second object") << QByteArray("{} {}") << "line 1, column 4: invalid JSON: syntax error" << "";
    // A key given twice names the key, its place and its pointer (d7527b5 named only the key).
    QTest::newRow("a key given twice, nested") << QByteArray("{\"a\": [0, {\"b\": 1,\n  \"b\": 2}]}")
                                               << "line 2, column 3: invalid JSON: the key \"b\" appears twice in one object"
                                               << "/a/1/b";
    QTest::newRow("a key with an escaped quote given twice") << QByteArray("{\"q\\\"\": 1, \"q\\\"\": 2}")
                                                             << "line 1, column 12: invalid JSON: the key \"q\"\" appears twice"
                                                             << "/q\"";
    QTest::newRow("257 nested arrays") << QByteArray::fromStdString(nested(257))
                                       << "line 1, column 257: invalid JSON: values are nested more than 256 levels deep"
                                       << QString::fromStdString(repeatedPointer("/0", 256));
    QTest::newRow("a number out of range") << QByteArray("{\"x\": [1,\n 1e999]}")
                                           << "line 2, column 6: invalid JSON: number overflow parsing '1e999'" << "";
    QTest::newRow("a missing comma") << QByteArray("{\n  \"a\": 1\n  \"b\": 2\n}")
                                     << "line 3, column 5: invalid JSON: syntax error while parsing object - unexpected string "
                                        "literal; expected '}'"
                                     << "";
    QTest::newRow("empty text") << QByteArray() << "line 1, column 1: invalid JSON: syntax error" << "";
}

void TestJsonReader::refusesWithAPosition()
{
    QFETCH(QByteArray, text);
    QFETCH(QString, why);
    QFETCH(QString, pointer);
    auto r = json::parseText(std::string_view(text.constData(), static_cast<size_t>(text.size())), "x.json");
    QVERIFY2(!r, "refused text was read");
    QVERIFY2(qs(r.error().why).startsWith(why), r.error().why.c_str());
    QCOMPARE(qs(r.error().pointer), pointer);
    QCOMPARE(qs(r.error().file), QStringLiteral("x.json"));
}

void TestJsonReader::readsWhatItShould_data()
{
    QTest::addColumn<QByteArray>("text");
    QTest::addColumn<QString>("dump"); // the value read, as nlohmann writes it
    QTest::newRow("white space after the value") << QByteArray("{\"a\": [1, 2.5, \"x\", null, true]} \n\t\r\n")
                                                 << R"({"a":[1,2.5,"x",null,true]})";
    QTest::newRow("256 nested arrays") << QByteArray::fromStdString(nested(256)) << QString::fromStdString(nested(256));
    QTest::newRow("one key per object, same key in siblings") << QByteArray(R"([{"k": 1}, {"k": 2}, {"k": {"k": 3}}])")
                                                              << R"([{"k":1},{"k":2},{"k":{"k":3}}])";
    QTest::newRow("a NUL escaped inside a string") << QByteArray(R"({"a": "x\u0000y"})") << R"({"a":"x\u0000y"})";
    QTest::newRow("a scalar") << QByteArray(" -12 ") << "-12";
    QTest::newRow("the largest unsigned integer") << QByteArray("18446744073709551615") << "18446744073709551615";
}

void TestJsonReader::readsWhatItShould()
{
    QFETCH(QByteArray, text);
    QFETCH(QString, dump);
    auto r = json::parseText(text.toStdString(), "x.json");
    KF_VERIFY_OK(r);
    QCOMPARE(qs(r->dump()), dump);
}

void TestJsonReader::echoesAreCapped_data()
{
    QTest::addColumn<QString>("sentence");
    QTest::addColumn<QString>("shown");
    const QString a79(79, 'a');
    QTest::newRow("a short name is kept") << "name \"abc\" is taken" << "name \"abc\" is taken";
    QTest::newRow("80 characters are kept") << "name \"" + QString(80, 'a') + "\" is taken" << "name \"" + QString(80, 'a') + "\" is taken";
    QTest::newRow("81 characters are cut") << "name \"" + QString(81, 'a') + "\" is taken"
                                           << "name \"" + a79 + "…\" (81 characters) is taken";
    QTest::newRow("a megabyte name") << "name \"" + QString(1000000, 'a') + "\" is taken"
                                     << "name \"" + a79 + "…\" (1 000 000 characters) is taken";
    QTest::newRow("never half a UTF-8 character") << "name \"" + QString(100, QChar(0x00e9)) + "\""
                                                   << "name \"" + QString(79, QChar(0x00e9)) + "…\" (100 characters)";
    QTest::newRow("a long pointer") << "at /" + QString(300, 'p') + ": x" << "at /" + QString(198, 'p') + "… (301 characters): x";
    QTest::newRow("clipped once is clipped") << "name \"" + a79 + "…\" (81 characters) is taken"
                                             << "name \"" + a79 + "…\" (81 characters) is taken";
    QTest::newRow("an unclosed quote is a word") << "name \"" + QString(250, 'b') << "name \"" + QString(199, 'b') + "… (250 characters)";
}

void TestJsonReader::echoesAreCapped()
{
    QFETCH(QString, sentence);
    QFETCH(QString, shown);
    QCOMPARE(qs(clipEchoes(sentence.toStdString())), shown);
    // Error::message applies it to what it repeats of the input; json::fail to every schema
    // message; parseText to its own.
    Error e = Error::inFile("f.json", {}, "read", sentence.toStdString());
    QCOMPARE(qs(e.message()), "f.json: " + shown);
    try {
        json::fail("/x", sentence.toStdString());
    } catch (const json::SchemaError& s) {
        QCOMPARE(qs(s.message), shown);
    }
}

// Issue 41: d7527b5 repeated a key given twice in full, twice (in the pointer and the sentence).
void TestJsonReader::aMegabyteKeyIsNotRepeated()
{
    const std::string key(1000000, 'k');
    auto dup = json::parseText("{\"" + key + "\": 1, \"" + key + "\": 2}", "x.json");
    QVERIFY(!dup);
    const std::string sentence = dup.error().message();
    QVERIFY2(sentence.size() < 600, sentence.substr(0, 600).c_str());
    QVERIFY2(dup.error().why.find("…\" (1 000 000 characters) appears twice") != std::string::npos, dup.error().why.substr(0, 600).c_str());
    QCOMPARE(dup.error().pointer, "/" + key); // the pointer itself stays whole: it locates the key
}

// Reading was quadratic in an array of objects: nlohmann's callback parser rescans the enclosing
// array at the end of every object (300 000 test shapes took 17 s). A timing assertion would fail
// on a slow or busy machine and pass a mildly quadratic reader on a fast one, so this checks the
// structure that makes reading linear instead: every byte is taken from the text once, our own
// builder handles one event per value, key and closing bracket (the count is exact, so a reader
// that went back to another parse path fails here), and no pass over the text for a line and
// column runs unless the text is refused, and then one. tests/bench/bench_json measures the time.
void TestJsonReader::readingIsOnePass()
{
    const size_t objects = 20000;
    std::string text = "[";
    for (size_t i = 0; i < objects; ++i)
        text += (i ? ",\n" : "") + std::string(R"({"B": )") + std::to_string(i) + R"(, "D": 7, "label": "s"})";
    text += "]";
    json::ParseCost cost;
    auto r = json::parseText(text, "shapes.json", &cost);
    KF_VERIFY_OK(r);
    QCOMPARE(r->size(), objects);
    QCOMPARE(cost.bytesRead, text.size());
    // The array: open and close. Each object: open, close, and a key and a value per member.
    QCOMPARE(cost.events, 2 + objects * (2 + 2 * 3));
    QCOMPARE(cost.positionPasses, size_t(0));

    text.insert(text.size() - 1, ",{\"B\": 1, \"B\": 2}");
    json::ParseCost refused;
    auto dup = json::parseText(text, "shapes.json", &refused);
    QVERIFY(!dup);
    QCOMPARE(qs(dup.error().pointer), QString("/%1/B").arg(objects));
    QCOMPARE(refused.positionPasses, size_t(1));
    QVERIFY2(refused.bytesRead <= text.size(), "a byte was read twice");
}

QTEST_GUILESS_MAIN(TestJsonReader)
#include "tst_jsonreader.moc"
