// Signed documents (engine/protocol/Signature.h): the user's key is made private and refused when
// others could read or replace it; a signature survives the way reports are stored (pretty-printed
// and read back) and tells an edit, a removal and another key apart.
#include "engine/protocol/Signature.h"
#include "testutil.h"

#include <QTemporaryDir>
#include <QTest>

#include <filesystem>
#include <fstream>
#include <sys/stat.h>

using namespace kf;
using namespace kf::protocol;
namespace fs = std::filesystem;

class TestSignature : public QObject {
    Q_OBJECT
    QByteArray m_savedKey;
private slots:
    void initTestCase() { m_savedKey = qgetenv("KF_REPORT_KEY"); }
    void cleanupTestCase() { qputenv("KF_REPORT_KEY", m_savedKey); }
    void aNewKeyIsPrivateAndStable();
    void unsafeKeysAreRefused_data();
    void unsafeKeysAreRefused();
    void signaturesSurviveStorageAndCatchChanges_data();
    void signaturesSurviveStorageAndCatchChanges();
};

void TestSignature::aNewKeyIsPrivateAndStable()
{
    QTemporaryDir tmp;
    const fs::path file = fs::path(tmp.path().toStdString()) / "cfg" / "KernelForge" / "report-key";
    qputenv("KF_REPORT_KEY", QByteArray::fromStdString(file.string()));
    auto made = loadSigningKey(true);
    KF_VERIFY_OK(made);
    QCOMPARE(made->id.size(), std::size_t(16));
    QCOMPARE(made->secret.size(), std::size_t(32));
    struct stat st {};
    QCOMPARE(::stat(file.c_str(), &st), 0);
    QCOMPARE(int(st.st_mode & 0777), 0600);
    QCOMPARE(::stat(file.parent_path().c_str(), &st), 0);
    QCOMPARE(int(st.st_mode & 0777), 0700);
    auto again = loadSigningKey(false);
    KF_VERIFY_OK(again);
    QCOMPARE(again->id, made->id);
    for (const auto& e : fs::directory_iterator(file.parent_path())) // no temporary left behind
        QCOMPARE(QString::fromStdString(e.path().filename().string()), QString("report-key"));
}

void TestSignature::unsafeKeysAreRefused_data()
{
    QTest::addColumn<QString>("change");
    QTest::addColumn<QString>("inWhy");
    QTest::newRow("readable by others") << "chmod-644" << "other users can read or write it";
    QTest::newRow("a symbolic link") << "symlink" << "symbolic link";
    QTest::newRow("its folder writable by others") << "folder-777" << "writable by other users";
    QTest::newRow("not a key") << "garbage" << "64 lowercase hex digits";
    QTest::newRow("a folder") << "folder" << "not a regular file";
}

void TestSignature::unsafeKeysAreRefused()
{
    QFETCH(QString, change);
    QFETCH(QString, inWhy);
    QTemporaryDir tmp;
    const fs::path dir = fs::path(tmp.path().toStdString()) / "keys";
    const fs::path file = dir / "report-key";
    qputenv("KF_REPORT_KEY", QByteArray::fromStdString(file.string()));
    KF_VERIFY_OK(loadSigningKey(true));
    const std::string c = change.toStdString();
    if (c == "chmod-644") {
        fs::permissions(file, fs::perms::owner_read | fs::perms::owner_write | fs::perms::group_read | fs::perms::others_read);
    } else if (c == "symlink") {
        fs::rename(file, dir / "real-key");
        fs::create_symlink(dir / "real-key", file);
    } else if (c == "folder-777") {
        fs::permissions(dir, fs::perms::all);
    } else if (c == "garbage") {
        std::ofstream(file, std::ios::trunc) << "not a key\n";
    } else if (c == "folder") {
        fs::remove(file);
        fs::create_directory(file);
    }
    auto key = loadSigningKey(false);
    QVERIFY2(!key, "an unsafe key was used");
    QVERIFY2(QString::fromStdString(key.error().why).contains(inWhy), key.error().message().c_str());
    QVERIFY(!key.error().hint.empty() || c == "folder");
}

void TestSignature::signaturesSurviveStorageAndCatchChanges_data()
{
    QTest::addColumn<QString>("change");
    QTest::addColumn<int>("state");
    QTest::newRow("as stored") << "none" << int(SignatureState::Valid);
    QTest::newRow("a number edited") << "number" << int(SignatureState::Altered);
    QTest::newRow("a key added") << "added" << int(SignatureState::Altered);
    QTest::newRow("the signature removed") << "removed" << int(SignatureState::Unsigned);
    QTest::newRow("another key's id") << "other-key" << int(SignatureState::OtherKey);
    QTest::newRow("a signature that is not hex") << "malformed" << int(SignatureState::Malformed);
}

void TestSignature::signaturesSurviveStorageAndCatchChanges()
{
    QFETCH(QString, change);
    QFETCH(int, state);
    QTemporaryDir tmp;
    qputenv("KF_REPORT_KEY", QByteArray::fromStdString((fs::path(tmp.path().toStdString()) / "k" / "report-key").string()));
    auto key = loadSigningKey(true);
    KF_VERIFY_OK(key);
    nlohmann::json report = {{"kind", "performance"}, {"speedup", 1.2345678901234567}, {"nan", NAN}, {"big", 18446744073709551615ull},
                             {"text", "caf\xc3\xa9"}, {"shapes", {{{"N", 4099}, {"median_ms", 0.1}}}}};
    KF_VERIFY_OK(signDocument(report, key.value()));
    // Stored the way reports are: pretty-printed, read back.
    nlohmann::json stored = nlohmann::json::parse(report.dump(2, ' ', false, nlohmann::json::error_handler_t::replace));
    const std::string c = change.toStdString();
    if (c == "number") stored["shapes"][0]["median_ms"] = 0.01;
    else if (c == "added") stored["recheck"] = true;
    else if (c == "removed") stored.erase("signature");
    else if (c == "other-key") stored["signature"]["key_id"] = "0123456789abcdef";
    else if (c == "malformed") stored["signature"]["value"] = "forged";
    const SignatureCheck check = checkSignature(stored, &key.value());
    QVERIFY2(int(check.state) == state, check.detail.c_str());
}

QTEST_GUILESS_MAIN(TestSignature)
#include "tst_signature.moc"
