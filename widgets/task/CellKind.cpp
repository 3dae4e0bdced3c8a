#include "widgets/task/CellKind.h"

#include <QStringList>

namespace kf::ui {

namespace {

using Json = nlohmann::json;

QString scalarText(const Json& v)
{
    if (v.is_string())
        return QString::fromStdString(v.get<std::string>());
    return QString::fromStdString(v.dump());
}

Json integerOrString(const QString& t)
{
    bool ok = false;
    qlonglong i = t.toLongLong(&ok);
    if (ok)
        return Json(static_cast<std::int64_t>(i));
    return Json(t.toStdString());
}

Json numberOrString(const QString& t)
{
    bool ok = false;
    qlonglong i = t.toLongLong(&ok);
    if (ok)
        return Json(static_cast<std::int64_t>(i));
    double d = t.toDouble(&ok);
    if (ok)
        return Json(d);
    return Json(t.toStdString());
}

// Commas inside parentheses belong to a function call ("ceil_div(N, 256)"), not to the list.
QStringList splitTopLevel(const QString& text)
{
    QStringList parts;
    int depth = 0;
    QString current;
    for (QChar c : text) {
        if (c == u'(')
            ++depth;
        else if (c == u')')
            depth = std::max(0, depth - 1);
        if (c == u',' && depth == 0) {
            parts << current.trimmed();
            current.clear();
        } else {
            current += c;
        }
    }
    parts << current.trimmed();
    return parts;
}

} // namespace

QString cellText(const Json* value, CellKind kind)
{
    if (!value || value->is_null())
        return {};
    switch (kind) {
    case CellKind::Json:
        return QString::fromStdString(value->dump());
    case CellKind::List:
    case CellKind::Expr:
        if (value->is_array()) {
            QStringList items;
            for (const auto& item : *value)
                items << scalarText(item);
            return items.join(QStringLiteral(", "));
        }
        return scalarText(*value);
    default:
        return scalarText(*value);
    }
}

std::optional<Json> cellValue(const QString& raw, CellKind kind)
{
    const QString text = raw.trimmed();
    switch (kind) {
    case CellKind::Text:
        if (raw.isEmpty())
            return std::nullopt;
        return Json(raw.toStdString());
    case CellKind::Integer:
        // 4.5 stays a number and "abc" a string: the validator's sentence then says which.
        if (text.isEmpty())
            return std::nullopt;
        return numberOrString(text);
    case CellKind::Number:
        if (text.isEmpty())
            return std::nullopt;
        return numberOrString(text);
    case CellKind::Bool:
        if (text.isEmpty())
            return std::nullopt;
        if (text == u"true")
            return Json(true);
        if (text == u"false")
            return Json(false);
        return Json(text.toStdString());
    case CellKind::List: {
        Json a = Json::array();
        if (text.isEmpty())
            return a;
        for (const QString& item : splitTopLevel(text))
            a.push_back(integerOrString(item));
        return a;
    }
    case CellKind::Expr: {
        if (text.isEmpty())
            return std::nullopt;
        const QStringList parts = splitTopLevel(text);
        if (parts.size() == 1)
            return integerOrString(parts.front());
        Json a = Json::array();
        for (const QString& item : parts)
            a.push_back(integerOrString(item));
        return a;
    }
    case CellKind::Json: {
        if (text.isEmpty())
            return std::nullopt;
        Json parsed = Json::parse(text.toStdString(), nullptr, /*allow_exceptions=*/false);
        if (parsed.is_discarded())
            return Json(text.toStdString());
        return parsed;
    }
    }
    return std::nullopt;
}

} // namespace kf::ui
