// The launch-plan expression language: values, precedence, functions and every error a user can
// make, each with the column it points at.
#include "engine/task/Expr.h"
#include "testutil.h"

#include <QTest>

using namespace kf;

class TestExpr : public QObject {
    Q_OBJECT
private slots:
    void evaluates_data();
    void evaluates();
    void errors_data();
    void errors();
    void symbolsAreListed();
    void evalIntRejectsReals();
};

void TestExpr::evaluates_data()
{
    QTest::addColumn<QString>("text");
    QTest::addColumn<bool>("isInt");
    QTest::addColumn<double>("expected");
    QTest::newRow("ceil_div tail") << "ceil_div(N, 256)" << true << 4.0;           // N = 1000
    QTest::newRow("ceil_div exact") << "ceil_div(1024, 256)" << true << 4.0;
    QTest::newRow("precedence") << "2 + 3 * 4" << true << 14.0;
    QTest::newRow("parentheses") << "(2 + 3) * 4" << true << 20.0;
    QTest::newRow("integer division truncates") << "7 / 2" << true << 3.0;
    QTest::newRow("real division") << "7.0 / 2" << false << 3.5;
    QTest::newRow("modulo") << "N % 256" << true << 232.0;
    QTest::newRow("unary minus") << "-B + 10" << true << 3.0;                      // B = 7
    QTest::newRow("round_up") << "round_up(N, 128)" << true << 1024.0;
    QTest::newRow("min max") << "max(32, min(1024, next_pow2(N)))" << true << 1024.0;
    QTest::newRow("next_pow2 exact") << "next_pow2(1024)" << true << 1024.0;
    QTest::newRow("next_pow2 of 1") << "next_pow2(1)" << true << 1.0;
    QTest::newRow("log2 floor") << "log2(1000)" << true << 9.0;
    QTest::newRow("parameter real") << "eps * 2" << false << 2e-6;
    QTest::newRow("exponent literal") << "1e-6 + 0" << false << 1e-6;
    QTest::newRow("comparison") << "N % 8 == 0 && B >= 1" << true << 1.0;
    QTest::newRow("comparison false") << "N < 10 || B > 100" << true << 0.0;
    QTest::newRow("not") << "!(N == 1000)" << true << 0.0;
    QTest::newRow("bytes formula") << "2 * B * N * 2 + N * 2" << true << 30000.0;
    QTest::newRow("int of real") << "int(N * 0.5)" << true << 500.0;
    QTest::newRow("sqrt") << "sqrt(16)" << false << 4.0;
    QTest::newRow("abs") << "abs(3 - N)" << true << 997.0;
    QTest::newRow("short-circuit avoids division by zero") << "0 && (1 / 0)" << true << 0.0;
    QTest::newRow("large product stays exact") << "N * N * N * N * 1000" << true << 1e15;
    // The nesting limit is 200 of what a reader counts (d7527b5 refused 100 parentheses).
    QTest::newRow("200 nested parentheses") << QString(200, QLatin1Char('(')) + "N" + QString(200, QLatin1Char(')')) << true
                                            << 1000.0;
    QTest::newRow("200 nested calls") << QString("abs(").repeated(200) + "N" + QString(200, QLatin1Char(')')) << true << 1000.0;
    QTest::newRow("200 unary operators") << QString(200, QLatin1Char('-')) + "N" << true << 1000.0;
}

void TestExpr::evaluates()
{
    QFETCH(QString, text);
    QFETCH(bool, isInt);
    QFETCH(double, expected);
    auto e = Expr::parse(text.toStdString());
    KF_VERIFY_OK(e);
    Env env{{"N", Value::integer(1000)}, {"B", Value::integer(7)}, {"eps", Value::real(1e-6)}};
    auto v = e->eval(env);
    KF_VERIFY_OK(v);
    QCOMPARE(v->isInt, isInt);
    if (isInt)
        QCOMPARE(static_cast<double>(v->i), expected);
    else
        QVERIFY(qAbs(v->d - expected) <= 1e-12 * qMax(1.0, qAbs(expected)));
}

void TestExpr::errors_data()
{
    QTest::addColumn<QString>("text");
    QTest::addColumn<QString>("message");
    // Parse errors
    QTest::newRow("unclosed parenthesis") << "ceil_div(N, 256" << "column 16: expected ',' or ')' in the arguments of ceil_div";
    QTest::newRow("dangling operator") << "N +" << "column 4: expression ends where a value was expected";
    QTest::newRow("stray character") << "N $ 2" << "column 3: unexpected '$'";
    QTest::newRow("empty") << "" << "column 1: expression ends where a value was expected";
    QTest::newRow("bad number") << "12abc" << "column 1: malformed number '12abc'";
    QTest::newRow("unclosed group") << "(N + 1" << "column 7: expected ')' to close the '(' at column 1";
    // Evaluation errors
    QTest::newRow("unknown symbol") << "ceil_div(M, 256)" << "column 10: unknown symbol 'M'; known symbols: B, N";
    QTest::newRow("division by zero") << "N / (B - 7)" << "column 3: division by zero";
    QTest::newRow("modulo by zero") << "N % 0" << "column 3: modulo by zero";
    QTest::newRow("overflow") << "N * 9223372036854775807" << "column 3: integer overflow";
    QTest::newRow("unknown function") << "floor(N)" << "column 1: unknown function 'floor'; available: ceil_div, round_up, min, max, abs, next_pow2, log2, sqrt, float, int";
    QTest::newRow("arity") << "ceil_div(N)" << "column 1: ceil_div takes 2 arguments, got 1";
    QTest::newRow("non-positive divisor") << "ceil_div(N, 0)" << "column 1: ceil_div: the divisor must be positive, got 0";
    // Hostile input (issue 23): limits instead of a stack overflow.
    // The limit counts what a reader counts: the 201st parenthesis, call or unary operator (each
    // parenthesis tripped it twice on d7527b5: 100 of them said "200 levels").
    const QString tooDeep = "the expression nests deeper than 200 levels (parentheses, calls and unary operators)";
    QTest::newRow("1000 nested parentheses") << QString(1000, QLatin1Char('(')) + "N" + QString(1000, QLatin1Char(')'))
                                             << "column 201: " + tooDeep;
    QTest::newRow("201 nested parentheses") << QString(201, QLatin1Char('(')) + "N" + QString(201, QLatin1Char(')'))
                                            << "column 201: " + tooDeep;
    QTest::newRow("201 nested calls") << QString("abs(").repeated(201) + "N" + QString(201, QLatin1Char(')'))
                                      << "column 804: " + tooDeep;
    QTest::newRow("50000 unary minus") << QString(50000, '-') + "N" << "column 4097: the expression is longer than 4096 characters";
    QTest::newRow("2000 unary minus") << QString(2000, '-') + "N" << "column 201: " + tooDeep;
    QTest::newRow("a chain of 3000 additions") << QString("N") + QString("+1").repeated(3000)
                                               << "column 4097: the expression is longer than 4096 characters";
}

void TestExpr::errors()
{
    QFETCH(QString, text);
    QFETCH(QString, message);
    Env env{{"N", Value::integer(1000)}, {"B", Value::integer(7)}};
    auto e = Expr::parse(text.toStdString());
    std::string why;
    if (!e) {
        why = e.error().why;
    } else {
        auto v = e->eval(env);
        QVERIFY2(!v, "expected an error");
        why = v.error().why;
    }
    QCOMPARE(qs(why), message);
}

void TestExpr::symbolsAreListed()
{
    auto e = Expr::parse("ceil_div(B * D, BLOCK) + B");
    KF_VERIFY_OK(e);
    QCOMPARE(e->symbols(), (std::vector<std::string>{"B", "BLOCK", "D"}));
}

void TestExpr::evalIntRejectsReals()
{
    auto e = Expr::parse("N * 0.5");
    KF_VERIFY_OK(e);
    auto v = e->evalInt({{"N", Value::integer(3)}});
    QVERIFY(!v);
    QVERIFY(v.error().why.find("not an integer") != std::string::npos);
}

QTEST_GUILESS_MAIN(TestExpr)
#include "tst_expr.moc"
