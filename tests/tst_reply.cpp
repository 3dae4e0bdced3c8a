// Reading a model's reply (engine/synth/Reply.h): fenced blocks as Markdown writes them, exactly one
// code block and at most one plan in a kernel reply, a task block or questions in an interview
// reply, and a sentence for the model for every reply that cannot be used.
#include "testutil.h"

#include "engine/synth/Reply.h"

#include <QtTest>

using namespace kf::synth;

class TestReply : public QObject {
    Q_OBJECT
private slots:
    void blocks_data()
    {
        QTest::addColumn<QString>("reply");
        QTest::addColumn<QStringList>("languages");
        QTest::addColumn<QStringList>("texts");
        QTest::newRow("two blocks") << "a\n```cuda\nint x;\n```\nb\n```json\n{}\n```\n" << QStringList{"cuda", "json"}
                                    << QStringList{"int x;\n", "{}\n"};
        QTest::newRow("tildes and info") << "~~~ C++ {.numberLines}\nint y;\n~~~\n" << QStringList{"c++"} << QStringList{"int y;\n"};
        QTest::newRow("longer fence holds a shorter one") << "````cuda\n```\nnot a close\n````\n" << QStringList{"cuda"}
                                                          << QStringList{"```\nnot a close\n"};
        QTest::newRow("indented up to three") << "   ```cuda\nz\n   ```\n" << QStringList{"cuda"} << QStringList{"z\n"};
        QTest::newRow("four spaces is not a fence") << "    ```cuda\nz\n" << QStringList{} << QStringList{};
        QTest::newRow("crlf") << "```json\r\n{}\r\n```\r\n" << QStringList{"json"} << QStringList{"{}\n"};
        QTest::newRow("unclosed runs to the end") << "```cuda\nint x;\n" << QStringList{"cuda"} << QStringList{"int x;\n"};
        QTest::newRow("a tilde fence is not closed by backticks") << "~~~json\n```\n~~~\n" << QStringList{"json"} << QStringList{"```\n"};
    }
    void blocks()
    {
        QFETCH(QString, reply);
        QFETCH(QStringList, languages);
        QFETCH(QStringList, texts);
        const auto b = fencedBlocks(reply.toStdString());
        QCOMPARE(int(b.size()), languages.size());
        for (int i = 0; i < languages.size(); ++i) {
            QCOMPARE(QString::fromStdString(b[size_t(i)].language), languages[i]);
            QCOMPARE(QString::fromStdString(b[size_t(i)].text), texts[i]);
        }
    }

    void kernelReplies_data()
    {
        QTest::addColumn<QString>("reply");
        QTest::addColumn<QString>("error");     // empty: reads
        QTest::addColumn<bool>("planInline");
        QTest::newRow("code and plan") << "```cuda\nk\n```\n```json\n{}\n```" << "" << false;
        QTest::newRow("cu and plan in the source") << "```cu\n/* ```json\n{}\n``` */\nk\n```" << "" << true;
        QTest::newRow("no code") << "```json\n{}\n```" << "no ```cuda block" << false;
        QTest::newRow("prose only") << "I cannot do that." << "no ```cuda block" << false;
        QTest::newRow("two code blocks") << "```cuda\na\n```\n```cpp\nb\n```" << "2 ```cuda blocks" << false;
        QTest::newRow("two plans") << "```cuda\na\n```\n```json\n{}\n```\n```json\n{}\n```" << "2 ```json blocks" << false;
        QTest::newRow("empty code") << "```cuda\n  \n```" << "empty" << false;
    }
    void kernelReplies()
    {
        QFETCH(QString, reply);
        QFETCH(QString, error);
        QFETCH(bool, planInline);
        auto r = kernelReply(reply.toStdString());
        QCOMPARE(r.ok(), error.isEmpty());
        if (!r.ok()) {
            QVERIFY2(r.error().why.find(error.toStdString()) != std::string::npos, r.error().why.c_str());
            return;
        }
        QCOMPARE(r->planJson.empty(), planInline);
    }

    void specReplies_data()
    {
        QTest::addColumn<QString>("reply");
        QTest::addColumn<bool>("hasTask");
        QTest::addColumn<int>("questions");
        QTest::addColumn<int>("assumptions");
        QTest::addColumn<QString>("error");
        QTest::newRow("task and assumptions") << "```json\n{}\n```\nASSUMPTION: fp32\n- assumption: N < 2^31" << true << 0 << 2 << "";
        QTest::newRow("questions") << "QUESTION: dtype?\n* Question: size?\nQUESTION:\n" << false << 2 << 0 << "";
        QTest::newRow("neither") << "Sure, I'll do it." << false << 0 << 0 << "neither";
        QTest::newRow("two tasks") << "```json\n{}\n```\n```json\n{}\n```" << true << 0 << 0 << "2 ```json blocks";
    }
    void specReplies()
    {
        QFETCH(QString, reply);
        QFETCH(bool, hasTask);
        QFETCH(int, questions);
        QFETCH(int, assumptions);
        QFETCH(QString, error);
        auto r = specReply(reply.toStdString());
        QCOMPARE(r.ok(), error.isEmpty());
        if (!r.ok()) {
            QVERIFY2(r.error().why.find(error.toStdString()) != std::string::npos, r.error().why.c_str());
            return;
        }
        QCOMPARE(r->taskJson.has_value(), hasTask);
        QCOMPARE(int(r->questions.size()), questions);
        QCOMPARE(int(r->assumptions.size()), assumptions);
    }
};

QTEST_GUILESS_MAIN(TestReply)
#include "tst_reply.moc"
