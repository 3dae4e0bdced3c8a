#include "engine/cast/ScriptSyntax.h"

#include "engine/cast/ScriptLexer.h"

#include <set>

namespace kf::cast::script {

namespace {

/// Recursive descent over one logical line. Each level of expression and each link of a chain
/// (`.name`, `(...)`, `[...]`) counts toward kMaxScriptNesting, so the trees it builds are shallow.
class Parser {
public:
    explicit Parser(const Line& l) : m_line(l) {}

    bool atEnd() const { return m_pos >= m_line.toks.size(); }
    const Token& peek(std::size_t ahead = 0) const
    {
        static const Token end;
        return m_pos + ahead < m_line.toks.size() ? m_line.toks[m_pos + ahead] : end;
    }
    bool isOp(std::string_view op, std::size_t ahead = 0) const
    {
        return peek(ahead).kind == Token::Kind::Op && peek(ahead).text == op;
    }
    bool isName(std::string_view name) const { return peek().kind == Token::Kind::Name && peek().text == name; }
    int line() const { return atEnd() ? (m_line.toks.empty() ? m_line.line : m_line.toks.back().line) : peek().line; }
    std::string describe() const
    {
        if (atEnd())
            return "the end of the line";
        const Token& t = peek();
        return t.kind == Token::Kind::Str ? "a string" : "'" + t.text + "'";
    }
    [[noreturn]] void fail(const std::string& why) const { script::fail(line(), why); }
    void expect(std::string_view op, std::string_view what)
    {
        if (!isOp(op))
            fail("expected '" + std::string(op) + "' " + std::string(what) + ", found " + describe());
        ++m_pos;
    }
    void expectEnd()
    {
        if (!atEnd())
            fail("unexpected " + describe());
    }
    Token take() { return m_line.toks[m_pos++]; }

    /// Items separated by commas: one expression, or a tuple when there is a comma.
    Node exprList()
    {
        Node first = expr();
        if (!isOp(","))
            return first;
        Node t{Node::Kind::Tuple, first.line};
        t.children.push_back(std::move(first));
        while (isOp(",")) {
            ++m_pos;
            if (atEnd() || isOp("=") || isOp(")"))
                break;
            t.children.push_back(expr());
        }
        return t;
    }

    Node expr()
    {
        Deeper d(*this);
        if (isOp("-")) {
            const int at = line();
            ++m_pos;
            Node n = expr();
            if (n.kind == Node::Kind::Int && n.integer != INT64_MIN) {
                n.integer = -n.integer;
            } else if (n.kind == Node::Kind::Float) {
                n.number = -n.number;
            } else {
                script::fail(at, "a unary minus applies to something other than a number literal");
            }
            return n;
        }
        Node n = primary();
        return postfix(std::move(n));
    }

    /// Skips to the matching closer of the bracket just taken.
    void skipBalanced()
    {
        int depth = 1;
        while (!atEnd() && depth > 0) {
            const Token& t = take();
            if (t.kind == Token::Kind::Op && (t.text == "(" || t.text == "[" || t.text == "{"))
                ++depth;
            else if (t.kind == Token::Kind::Op && (t.text == ")" || t.text == "]" || t.text == "}"))
                --depth;
        }
    }

private:
    struct Deeper {
        explicit Deeper(Parser& p) : m_p(p)
        {
            if (++m_p.m_depth > kMaxScriptNesting)
                m_p.fail("an expression nests more than " + std::to_string(kMaxScriptNesting) + " deep");
        }
        ~Deeper() { --m_p.m_depth; }
        Parser& m_p;
    };

    Node primary()
    {
        const int at = line();
        if (atEnd())
            fail("expected an expression, found the end of the line");
        const Token& t = peek();
        if (t.kind == Token::Kind::Name) {
            ++m_pos;
            if (t.text == "True" || t.text == "False")
                return Node{Node::Kind::Bool, at, {}, 0, 0.0, t.text == "True"};
            if (t.text == "None")
                return Node{Node::Kind::None, at};
            return Node{Node::Kind::Name, at, t.text};
        }
        if (t.kind == Token::Kind::Int || t.kind == Token::Kind::Float || t.kind == Token::Kind::Str) {
            Token v = take();
            if (v.kind == Token::Kind::Int)
                return Node{Node::Kind::Int, at, v.text, v.integer};
            if (v.kind == Token::Kind::Float)
                return Node{Node::Kind::Float, at, v.text, 0, v.number};
            return Node{Node::Kind::Str, at, v.text};
        }
        if (isOp("(") || isOp("[")) {
            const bool list = isOp("[");
            const char* close = list ? "]" : ")";
            ++m_pos;
            Node seq{list ? Node::Kind::List : Node::Kind::Tuple, at};
            bool comma = false;
            while (!isOp(close)) {
                seq.children.push_back(expr());
                if (!isOp(","))
                    break;
                comma = true;
                ++m_pos;
            }
            expect(close, list ? "to close the list" : "to close the parenthesis");
            if (!list && seq.children.size() == 1 && !comma)
                return std::move(seq.children.front());   // (x) is x
            return seq;
        }
        fail("expected an expression, found " + describe());
    }

    Node postfix(Node n)
    {
        const int depth = m_depth;
        while (isOp(".") || isOp("(") || isOp("[")) {
            if (++m_depth > kMaxScriptNesting)
                fail("a chain of attributes, calls and indexes is longer than " + std::to_string(kMaxScriptNesting));
            const int at = line();
            if (isOp(".")) {
                ++m_pos;
                if (peek().kind != Token::Kind::Name)
                    fail("expected a name after '.', found " + describe());
                Node a{Node::Kind::Attr, at, take().text};
                a.children.push_back(std::move(n));
                n = std::move(a);
            } else if (isOp("[")) {
                ++m_pos;
                skipBalanced();   // indexing is refused whatever the index
                Node s{Node::Kind::Subscript, at};
                s.children.push_back(std::move(n));
                n = std::move(s);
            } else {
                ++m_pos;
                Node c{Node::Kind::Call, at};
                c.children.push_back(std::move(n));
                while (!isOp(")")) {
                    if (peek().kind == Token::Kind::Name && isOp("=", 1)) {
                        std::string key = take().text;
                        ++m_pos;
                        c.keywords.push_back(std::move(key));
                        c.children.push_back(expr());
                    } else {
                        if (!c.keywords.empty())
                            fail("a positional argument follows a keyword argument");
                        c.children.push_back(expr());
                    }
                    if (!isOp(","))
                        break;
                    ++m_pos;
                }
                expect(")", "to close the call");
                n = std::move(c);
            }
        }
        m_depth = depth;
        return n;
    }

    const Line& m_line;
    std::size_t m_pos = 0;
    int m_depth = 0;
};

Stmt statement(const Line& l)
{
    static const std::set<std::string, std::less<>> unsupported = {
        "if", "elif", "else", "for", "while", "with", "try", "except", "finally", "raise", "assert", "del",
        "break", "continue", "global", "nonlocal", "import", "from", "lambda", "yield", "class", "def", "async", "await"};
    Parser p(l);
    Stmt s;
    s.line = l.line;
    if (p.peek().kind == Token::Kind::Name && unsupported.count(p.peek().text) && !p.isOp("=", 1)) {
        s.kind = Stmt::Kind::Unsupported;
        s.keyword = p.peek().text;
        return s;
    }
    if (p.isName("return")) {
        p.take();
        s.kind = Stmt::Kind::Return;
        if (!p.atEnd())
            s.value = p.exprList();
        p.expectEnd();
        return s;
    }
    Node lhs = p.exprList();
    if (p.isOp(":") && lhs.kind == Node::Kind::Name) {
        // An annotated assignment, `x : Tensor = value`: the type is skipped.
        while (!p.atEnd() && !p.isOp("="))
            p.take();
        if (p.atEnd()) {
            s.kind = Stmt::Kind::Expr;   // a bare declaration binds nothing
            s.value = Node{Node::Kind::None, l.line};
            return s;
        }
    }
    if (!p.isOp("=")) {
        p.expectEnd();
        s.kind = Stmt::Kind::Expr;
        s.value = std::move(lhs);
        return s;
    }
    p.take();
    auto target = [&](const Node& n) {
        if (n.kind != Node::Kind::Name)
            p.fail(n.kind == Node::Kind::Attr ? "assigns to the attribute " + dottedName(n) : "assigns to something that is not a name");
        s.targets.push_back(n.text);
    };
    if (lhs.kind == Node::Kind::Tuple)
        for (const Node& n : lhs.children)
            target(n);
    else
        target(lhs);
    s.kind = Stmt::Kind::Assign;
    s.value = p.exprList();
    p.expectEnd();
    return s;
}

} // namespace

std::string dottedName(const Node& n)
{
    std::string out;
    const Node* at = &n;
    while (at->kind == Node::Kind::Attr && !at->children.empty()) {
        out = "." + at->text + out;
        at = &at->children.front();
    }
    return at->kind == Node::Kind::Name ? at->text + out : std::string();
}

namespace {

/// forward's parameters (with their annotations) from its def line.
void readSignature(const Line& def, Forward& f)
{
    Parser p(def);
    p.take();
    p.take();
    p.expect("(", "after def forward");
    while (!p.isOp(")")) {
        if (p.peek().kind != Token::Kind::Name)
            p.fail("expected a parameter name, found " + p.describe());
        Param param{p.peek().text, {}, p.peek().line};
        p.take();
        for (const char* part : {":", "="}) {
            if (!p.isOp(part))
                continue;
            p.take();
            int depth = 0;
            while (!p.atEnd() && (depth > 0 || (!p.isOp(",") && !p.isOp(")") && !p.isOp("=")))) {
                const Token& t = p.take();
                if (t.kind == Token::Kind::Op && (t.text == "[" || t.text == "("))
                    ++depth;
                else if (t.kind == Token::Kind::Op && (t.text == "]" || t.text == ")"))
                    --depth;
                if (part[0] == ':')
                    param.annotation += t.text;
            }
        }
        f.params.push_back(std::move(param));
        if (!p.isOp(","))
            break;
        p.take();
    }
    p.expect(")", "to close forward's parameters");
    if (p.isOp("->")) {
        p.take();
        while (!p.atEnd() && !(p.isOp(":") && p.peek(1).kind == Token::Kind::End))
            p.take();
    }
    p.expect(":", "to end the def line");
    p.expectEnd();
}

/// forward's body: the lines of lines[d + 1, end) indented deeper than the def, one statement each.
void readBody(const std::vector<Line>& lines, std::size_t d, std::size_t end, Forward& f)
{
    const Line& def = lines[d];
    // The body: the lines indented deeper than the def, up to the next member.
    int bodyIndent = -1;
    bool inBlock = false;
    for (std::size_t b = d + 1; b < end && lines[b].indent > def.indent; ++b) {
        const Line& l = lines[b];
        if (bodyIndent < 0)
            bodyIndent = l.indent;
        if (l.indent < bodyIndent) {
            f.body.push_back(Stmt{Stmt::Kind::Broken, l.line, {}, {}, {}, "the indentation does not match the lines before"});
            break;
        }
        if (l.indent > bodyIndent) {
            if (!inBlock)
                f.body.push_back(Stmt{Stmt::Kind::Broken, l.line, {}, {}, {}, "the line is indented deeper than the lines before"});
            inBlock = true;
            continue;
        }
        Stmt s;
        try {
            s = statement(l);
        } catch (const ScriptError& e) {
            s = Stmt{Stmt::Kind::Broken, e.line, {}, {}, {}, e.why};
        }
        inBlock = s.kind == Stmt::Kind::Unsupported || s.kind == Stmt::Kind::Broken;
        f.body.push_back(std::move(s));
    }
}

} // namespace

Forward parseForward(std::string_view code, std::string_view className)
{
    if (code.size() > kMaxScriptBytes)
        fail(0, "the code is " + std::to_string(code.size()) + " bytes, more than the " +
                    std::to_string(kMaxScriptBytes) + " a reference may have");
    const std::vector<Line> lines = logicalLines(code);
    auto is = [](const Token& t, std::string_view name) { return t.kind == Token::Kind::Name && t.text == name; };
    for (std::size_t c = 0; c < lines.size(); ++c) {
        const Line& head = lines[c];
        if (head.indent != 0 || head.toks.size() < 2 || !is(head.toks[0], "class") || head.toks[1].kind != Token::Kind::Name)
            continue;
        if (!className.empty() && head.toks[1].text != className)
            continue;
        std::size_t end = c + 1;
        while (end < lines.size() && lines[end].indent > 0)
            ++end;
        const int memberIndent = end > c + 1 ? lines[c + 1].indent : 0;
        for (std::size_t d = c + 1; d < end; ++d) {
            const Line& def = lines[d];
            if (def.indent != memberIndent || def.toks.size() < 2 || !is(def.toks[0], "def") || !is(def.toks[1], "forward"))
                continue;
            Forward f;
            f.className = head.toks[1].text;
            f.line = def.line;
            readSignature(def, f);
            readBody(lines, d, end, f);
            return f;
        }
        fail(head.line, "class " + head.toks[1].text + " has no forward method");
    }
    if (!className.empty())
        fail(0, "the code defines no class " + std::string(className));
    fail(0, "the code defines no module class with a forward method");
}

} // namespace kf::cast::script
