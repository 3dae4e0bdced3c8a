#include "widgets/task/JsonTableModel.h"

#include "widgets/task/TaskDocument.h"

#include "engine/core/JsonReader.h"

#include <QBrush>
#include <QColor>

namespace kf::ui {

using Json = nlohmann::json;

namespace {

// One reference token of a JSON pointer as written: "~1" reads "/", "~0" reads "~" (RFC 6901).
std::string unescapeToken(const std::string& s)
{
    std::string out;
    for (size_t i = 0; i < s.size(); ++i) {
        if (s[i] == '~' && i + 1 < s.size()) {
            out += s[i + 1] == '1' ? '/' : '~';
            ++i;
        } else {
            out += s[i];
        }
    }
    return out;
}

bool hasPathPrefix(const std::string& pointer, const std::string& prefix)
{
    return pointer.compare(0, prefix.size(), prefix) == 0 &&
           (pointer.size() == prefix.size() || pointer[prefix.size()] == '/');
}

} // namespace

JsonTableModel::JsonTableModel(TaskDocument* doc, QObject* parent) : QAbstractTableModel(parent), m_doc(doc)
{
    connect(m_doc, &TaskDocument::changed, this, [this] {
        if (!m_writing)
            refresh();
    });
}

void JsonTableModel::setRows(const std::string& rowsPointer, Mode mode)
{
    if (rowsPointer == m_rowsPointer && mode == m_mode) {
        refresh();
        return;
    }
    beginResetModel();
    m_rowsPointer = rowsPointer;
    m_mode = mode;
    m_keys = currentKeys();
    m_errorRow = m_errorColumn = -1;
    endResetModel();
}

void JsonTableModel::setColumns(std::vector<JsonColumn> columns)
{
    bool same = columns.size() == m_columns.size();
    for (size_t i = 0; same && i < columns.size(); ++i)
        same = columns[i].key == m_columns[i].key && columns[i].header == m_columns[i].header;
    if (same)
        return;
    beginResetModel();
    m_columns = std::move(columns);
    m_errorRow = m_errorColumn = -1;
    endResetModel();
}

void JsonTableModel::setNewRow(Json value, QString memberPrefix)
{
    m_newRow = std::move(value);
    m_memberPrefix = std::move(memberPrefix);
}

std::vector<std::string> JsonTableModel::currentKeys() const
{
    std::vector<std::string> keys;
    const Json* rows = m_rowsPointer.empty() ? nullptr : m_doc->find(m_rowsPointer);
    if (!rows)
        return keys;
    switch (m_mode) {
    case Mode::Elements:
        if (rows->is_array())
            for (size_t i = 0; i < rows->size(); ++i)
                keys.push_back(std::to_string(i));
        break;
    case Mode::Members:
        if (rows->is_object())
            for (auto it = rows->begin(); it != rows->end(); ++it)
                keys.push_back(it.key());
        break;
    case Mode::Single:
        if (rows->is_object())
            keys.push_back({});
        break;
    }
    return keys;
}

void JsonTableModel::refresh()
{
    std::vector<std::string> keys = currentKeys();
    if (keys != m_keys) {
        beginResetModel();
        m_keys = std::move(keys);
        m_errorRow = m_errorColumn = -1;
        endResetModel();
    } else if (!m_keys.empty() && !m_columns.empty()) {
        emit dataChanged(index(0, 0), index(rowCount() - 1, columnCount() - 1));
    }
}

std::string JsonTableModel::rowPointer(int row) const
{
    if (row < 0 || row >= static_cast<int>(m_keys.size()))
        return {};
    if (m_mode == Mode::Single)
        return m_rowsPointer;
    return kf::json::child(m_rowsPointer, m_keys[row]); // the key escaped as RFC 6901 asks
}

QModelIndex JsonTableModel::indexForPointer(const std::string& pointer, int* column) const
{
    if (column)
        *column = -1;
    if (m_rowsPointer.empty() || !hasPathPrefix(pointer, m_rowsPointer) || m_keys.empty())
        return {};
    int row = -1;
    std::string rest;
    if (m_mode == Mode::Single) {
        row = 0;
        rest = pointer.substr(m_rowsPointer.size());
    } else {
        if (pointer.size() == m_rowsPointer.size())
            return {};
        const std::string tail = pointer.substr(m_rowsPointer.size() + 1);
        const size_t slash = tail.find('/');
        const std::string key = unescapeToken(tail.substr(0, slash));
        for (size_t i = 0; i < m_keys.size(); ++i)
            if (m_keys[i] == key)
                row = static_cast<int>(i);
        if (row < 0)
            return {};
        rest = slash == std::string::npos ? std::string() : tail.substr(slash);
    }
    int best = -1;
    size_t bestLength = 0;
    for (size_t c = 0; c < m_columns.size(); ++c) {
        const std::string& key = m_columns[c].key;
        if (!key.empty() && hasPathPrefix(rest, key) && key.size() >= bestLength) {
            best = static_cast<int>(c);
            bestLength = key.size();
        }
    }
    if (column)
        *column = best;
    return index(row, best < 0 ? 0 : best);
}

void JsonTableModel::setErrorCell(int row, int column, const QString& message)
{
    clearError();
    if (row < 0 || row >= rowCount())
        return;
    m_errorRow = row;
    m_errorColumn = column;
    m_errorMessage = message;
    emit dataChanged(index(row, 0), index(row, columnCount() - 1), {Qt::BackgroundRole, Qt::ToolTipRole});
}

void JsonTableModel::clearError()
{
    const int row = m_errorRow;
    m_errorRow = m_errorColumn = -1;
    m_errorMessage.clear();
    if (row >= 0 && row < rowCount() && columnCount() > 0)
        emit dataChanged(index(row, 0), index(row, columnCount() - 1), {Qt::BackgroundRole, Qt::ToolTipRole});
}

int JsonTableModel::rowCount(const QModelIndex& parent) const
{
    return parent.isValid() ? 0 : static_cast<int>(m_keys.size());
}

int JsonTableModel::columnCount(const QModelIndex& parent) const
{
    return parent.isValid() ? 0 : static_cast<int>(m_columns.size());
}

const Json* JsonTableModel::cellValue(int row, int column) const
{
    return m_doc->find(rowPointer(row) + m_columns[column].key);
}

QVariant JsonTableModel::data(const QModelIndex& index, int role) const
{
    if (!checkIndex(index, CheckIndexOption::IndexIsValid | CheckIndexOption::ParentIsInvalid))
        return {};
    const JsonColumn& col = m_columns[index.column()];
    const bool isError = index.row() == m_errorRow && (m_errorColumn < 0 || m_errorColumn == index.column());
    switch (role) {
    case Qt::DisplayRole:
    case Qt::EditRole:
        if (m_mode == Mode::Members && col.key.empty())
            return QString::fromStdString(m_keys[index.row()]);
        return cellText(cellValue(index.row(), index.column()), col.kind);
    case Qt::BackgroundRole:
        if (isError)
            return QBrush(QColor(255, 205, 205));
        return {};
    case Qt::ToolTipRole:
        // Long descriptions and args are elided in narrow columns; the tooltip shows them whole.
        if (isError)
            return m_errorMessage;
        return data(index, Qt::DisplayRole);
    case ChoicesRole:
        return col.choices;
    default:
        return {};
    }
}

bool JsonTableModel::setData(const QModelIndex& index, const QVariant& value, int role)
{
    if (role != Qt::EditRole || !checkIndex(index, CheckIndexOption::IndexIsValid | CheckIndexOption::ParentIsInvalid))
        return false;
    const JsonColumn& col = m_columns[index.column()];
    const QString text = value.toString();
    if (m_mode == Mode::Members && col.key.empty()) {
        // Renaming a member moves its value to the new key; the row order follows the keys.
        const std::string newKey = text.trimmed().toStdString();
        const std::string oldKey = m_keys[index.row()];
        const Json* rows = m_doc->find(m_rowsPointer);
        if (newKey.empty() || newKey == oldKey || !rows || rows->contains(newKey))
            return false;
        Json renamed = *rows;
        renamed[newKey] = renamed[oldKey];
        renamed.erase(oldKey);
        m_doc->setValue(m_rowsPointer, std::move(renamed));
        return true;
    }
    const std::string pointer = rowPointer(index.row()) + col.key;
    m_writing = true;
    if (auto v = kf::ui::cellValue(text, col.kind))
        m_doc->setValue(pointer, std::move(*v));
    else
        m_doc->erase(pointer);
    m_writing = false;
    emit dataChanged(index, index);
    return true;
}

QVariant JsonTableModel::headerData(int section, Qt::Orientation orientation, int role) const
{
    if (role != Qt::DisplayRole)
        return {};
    if (orientation == Qt::Horizontal)
        return section >= 0 && section < columnCount() ? m_columns[section].header : QVariant();
    return section + 1;
}

Qt::ItemFlags JsonTableModel::flags(const QModelIndex& index) const
{
    if (!index.isValid())
        return Qt::NoItemFlags;
    return Qt::ItemIsSelectable | Qt::ItemIsEnabled | Qt::ItemIsEditable;
}

bool JsonTableModel::insertRows(int row, int count, const QModelIndex& parent)
{
    if (parent.isValid() || count < 1 || row < 0 || row > rowCount() || m_rowsPointer.empty())
        return false;
    const Json* existing = m_doc->find(m_rowsPointer);
    switch (m_mode) {
    case Mode::Elements: {
        Json rows = existing && existing->is_array() ? *existing : Json::array();
        beginInsertRows({}, row, row + count - 1);
        m_writing = true;
        for (int i = 0; i < count; ++i)
            rows.insert(rows.begin() + row, m_newRow);
        m_doc->setValue(m_rowsPointer, std::move(rows));
        m_writing = false;
        m_keys = currentKeys();
        endInsertRows();
        return true;
    }
    case Mode::Members: {
        // New names sort among the old ones, so the rows cannot stay where they were asked for.
        Json rows = existing && existing->is_object() ? *existing : Json::object();
        for (int i = 0, n = 1; i < count; ++n) {
            const std::string name = m_memberPrefix.toStdString() + std::to_string(n);
            if (!rows.contains(name)) {
                rows[name] = m_newRow;
                ++i;
            }
        }
        m_doc->setValue(m_rowsPointer, std::move(rows));
        return true;
    }
    case Mode::Single:
        if (rowCount() > 0 || count != 1)
            return false;
        m_doc->setValue(m_rowsPointer, m_newRow);
        return true;
    }
    return false;
}

bool JsonTableModel::removeRows(int row, int count, const QModelIndex& parent)
{
    if (parent.isValid() || count < 1 || row < 0 || row + count > rowCount())
        return false;
    Json rows = *m_doc->find(m_rowsPointer);
    beginRemoveRows({}, row, row + count - 1);
    m_writing = true;
    if (m_mode == Mode::Elements) {
        rows.erase(rows.begin() + row, rows.begin() + row + count);
        m_doc->setValue(m_rowsPointer, std::move(rows));
    } else if (m_mode == Mode::Members) {
        for (int i = row; i < row + count; ++i)
            rows.erase(m_keys[i]);
        m_doc->setValue(m_rowsPointer, std::move(rows));
    } else {
        m_doc->erase(m_rowsPointer);
    }
    m_writing = false;
    m_keys = currentKeys();
    m_errorRow = m_errorColumn = -1;
    endRemoveRows();
    return true;
}

} // namespace kf::ui
