// The encoding check the editor and every compile share (engine/compile/SourceEncoding.h): what a
// Windows editor's "Unicode", a Latin-1 comment or a binary file look like, and the one sentence
// each gets, in the editor's banner and in `kforge compile` alike (sourceProblem).
#include "engine/compile/Compiler.h"
#include "engine/compile/SourceEncoding.h"
#include "testutil.h"

#include <QStringEncoder>
#include <QTest>

#include <string>
#include <string_view>

using namespace kf;

Q_DECLARE_METATYPE(kf::SourceEncoding)

class TestSourceEncoding : public QObject {
    Q_OBJECT

    static std::string_view view(const QByteArray& b) { return {b.constData(), size_t(b.size())}; }

private slots:
    void detectsWhatTheFileIs_data()
    {
        QTest::addColumn<QByteArray>("bytes");
        QTest::addColumn<kf::SourceEncoding>("encoding");
        QTest::addColumn<int>("line");   // of the byte at fault (1 for a byte-order mark)
        QTest::addColumn<int>("column");
        QTest::addColumn<QString>("problem");   // a part of encodingProblem(); empty: none
        const QString comment = QStringLiteral("// caf\u00e9\n__global__ void k() {}\n");
        auto utf16 = [&](QStringConverter::Encoding e) { return QByteArray(QStringEncoder(e, QStringEncoder::Flag::WriteBom)(comment)); };
        QTest::newRow("UTF-16 LE with BOM (Windows \"Unicode\")")
            << utf16(QStringConverter::Utf16LE) << SourceEncoding::Utf16Le << 1 << 1 << "is saved as UTF-16 LE, not UTF-8";
        QTest::newRow("UTF-16 BE with BOM")
            << utf16(QStringConverter::Utf16BE) << SourceEncoding::Utf16Be << 1 << 1 << "is saved as UTF-16 BE, not UTF-8";
        QTest::newRow("UTF-32 LE with BOM")
            << utf16(QStringConverter::Utf32LE) << SourceEncoding::Utf32Le << 1 << 1 << "is saved as UTF-32 LE, not UTF-8";
        QTest::newRow("UTF-32 BE with BOM")
            << utf16(QStringConverter::Utf32BE) << SourceEncoding::Utf32Be << 1 << 1 << "is saved as UTF-32 BE, not UTF-8";
        QTest::newRow("UTF-8 with BOM (kept on save)")
            << QByteArray("\xEF\xBB\xBF") + comment.toUtf8() << SourceEncoding::Utf8Bom << 1 << 1 << "";
        QTest::newRow("a NUL byte on line 2")
            << QByteArray("__global__ void k() {}\nint x;\0 int y;\n", 38) << SourceEncoding::NulByte << 2 << 7
            << "holds a NUL byte at line 2, column 7";
        QTest::newRow("UTF-16 LE without BOM (NULs)")
            << QByteArray("/\0/\0", 4) << SourceEncoding::NulByte << 1 << 2 << "UTF-16 without a byte-order mark?";
        QTest::newRow("Latin-1 e-acute in a comment")
            << QByteArray("__global__ void k() {}\n// caf\xE9\n") << SourceEncoding::InvalidUtf8 << 2 << 7
            << "is not UTF-8: the byte 0xE9 at line 2, column 7 is not part of a UTF-8 character (Latin-1 or Windows-1252 text?)";
        QTest::newRow("a UTF-8 sequence cut off by the end of the file")
            << QByteArray("// \xE2\x82") << SourceEncoding::InvalidUtf8 << 1 << 4 << "0xE2";
        QTest::newRow("an overlong slash (C0 AF)")
            << QByteArray("// \xC0\xAF\n") << SourceEncoding::InvalidUtf8 << 1 << 4 << "0xC0";
        QTest::newRow("a UTF-16 surrogate in UTF-8 (ED A0 80)")
            << QByteArray("// \xED\xA0\x80\n") << SourceEncoding::InvalidUtf8 << 1 << 4 << "0xED";
        QTest::newRow("above U+10FFFF (F4 90 80 80)")
            << QByteArray("// \xF4\x90\x80\x80\n") << SourceEncoding::InvalidUtf8 << 1 << 4 << "0xF4";
        QTest::newRow("valid UTF-8 with multibyte characters")
            << QStringLiteral("// \u00e9 \u20ac \U0001F600 \u6f22\n__global__ void k() {}\n").toUtf8() << SourceEncoding::Utf8 << 1 << 1 << "";
        QTest::newRow("plain ASCII") << QByteArray("__global__ void k() {}\n") << SourceEncoding::Utf8 << 1 << 1 << "";
        QTest::newRow("an empty file") << QByteArray() << SourceEncoding::Utf8 << 1 << 1 << "";
    }
    void detectsWhatTheFileIs()
    {
        QFETCH(QByteArray, bytes);
        QFETCH(kf::SourceEncoding, encoding);
        QFETCH(int, line);
        QFETCH(int, column);
        QFETCH(QString, problem);
        const EncodingCheck c = checkSourceEncoding(view(bytes));
        QCOMPARE(qs(std::string(encodingName(c.encoding))), qs(std::string(encodingName(encoding))));
        QCOMPARE(c.line, line);
        QCOMPARE(c.column, column);
        QCOMPARE(c.isUtf8(), problem.isEmpty());
        const QString said = qs(encodingProblem(c));
        QVERIFY2(problem.isEmpty() ? said.isEmpty() : said.contains(problem), qPrintable(said));
        QCOMPARE(int(c.bomSize()), encoding == SourceEncoding::Utf8Bom ? 3
                                   : encoding == SourceEncoding::Utf16Le || encoding == SourceEncoding::Utf16Be ? 2
                                   : encoding == SourceEncoding::Utf32Le || encoding == SourceEncoding::Utf32Be ? 4
                                                                                                                 : 0);
    }

    // `kforge compile` and the workbench's builds say the same: a file NVRTC would misread is an
    // error at its byte; Latin-1 NVRTC reads as bytes, so the build goes on with a warning.
    void compileSaysTheSameSentence_data()
    {
        QTest::addColumn<QByteArray>("bytes");
        QTest::addColumn<bool>("refused");
        QTest::addColumn<QString>("message");   // empty: neither an error nor a warning
        QTest::newRow("UTF-16 LE with BOM") << QByteArray("\xFF\xFE/\0/\0", 6) << true
                                            << "the file is saved as UTF-16 LE, not UTF-8; save it as UTF-8";
        QTest::newRow("UTF-32 BE with BOM") << QByteArray("\0\0\xFE\xFF\0\0\0/", 8) << true << "the file is saved as UTF-32 BE";
        QTest::newRow("a NUL byte") << QByteArray("int x;\0", 7) << true << "the file holds a NUL byte at line 1, column 7";
        QTest::newRow("Latin-1 e-acute") << QByteArray("// caf\xE9\n") << false << "the file is not UTF-8: the byte 0xE9 at line 1, column 7";
        QTest::newRow("UTF-8 with BOM") << QByteArray("\xEF\xBB\xBF// ok\n") << false << "";
    }
    void compileSaysTheSameSentence()
    {
        QFETCH(QByteArray, bytes);
        QFETCH(bool, refused);
        QFETCH(QString, message);
        const auto problem = sourceProblem(view(bytes), "kernel.cu");
        const auto warning = sourceWarning(view(bytes), "kernel.cu");
        QCOMPARE(problem.has_value(), refused);
        QCOMPARE(warning.has_value(), !refused && !message.isEmpty());
        const auto& d = problem ? problem : warning;
        if (!d)
            return;
        QVERIFY2(qs(d->message).startsWith(message), d->message.c_str());
        const EncodingCheck c = checkSourceEncoding(view(bytes));
        QVERIFY2(qs(d->message).contains(qs(encodingProblem(c))), d->message.c_str());   // the editor's words
        QCOMPARE(d->line, c.line);
        QCOMPARE(d->column, c.column);
    }
};

QTEST_APPLESS_MAIN(TestSourceEncoding)
#include "tst_sourceencoding.moc"
