#include "TextTable.h"

#include <algorithm>

namespace kf::cli {

TextTable::TextTable(std::vector<Column> columns) : m_columns(std::move(columns)) {}

void TextTable::addRow(std::vector<std::string> cells)
{
    cells.resize(m_columns.size());
    m_rows.push_back(std::move(cells));
}

std::size_t TextTable::width(const std::string& s)
{
    // Continuation bytes (10xxxxxx) do not start a code point.
    return static_cast<std::size_t>(std::count_if(s.begin(), s.end(), [](char c) { return (static_cast<unsigned char>(c) & 0xC0) != 0x80; }));
}

std::string TextTable::truncate(const std::string& s, std::size_t max)
{
    if (width(s) <= max || max == 0)
        return s;
    std::string out;
    std::size_t points = 0;
    for (char c : s) {
        bool starts = (static_cast<unsigned char>(c) & 0xC0) != 0x80;
        if (starts && ++points > max - 1)
            break;
        out += c;
    }
    return out + "…";
}

void TextTable::print(std::ostream& out, const std::string& indent) const
{
    std::vector<std::size_t> widths(m_columns.size());
    for (std::size_t c = 0; c < m_columns.size(); ++c) {
        widths[c] = width(m_columns[c].title);
        for (const auto& row : m_rows)
            widths[c] = std::max(widths[c], width(row[c]));
    }
    auto line = [&](const std::vector<std::string>& cells, bool header) {
        std::string text = indent;
        for (std::size_t c = 0; c < m_columns.size(); ++c) {
            const std::size_t pad = widths[c] - width(cells[c]);
            // Titles are left-aligned so the header reads naturally above right-aligned numbers.
            const bool right = !header && m_columns[c].align == Align::Right;
            if (c > 0)
                text += "  ";
            if (right)
                text.append(pad, ' ');
            text += cells[c];
            if (!right)
                text.append(pad, ' ');
        }
        while (!text.empty() && text.back() == ' ')
            text.pop_back();
        out << text << '\n';
    };
    std::vector<std::string> titles;
    for (const auto& col : m_columns)
        titles.push_back(col.title);
    line(titles, true);
    for (const auto& row : m_rows)
        line(row, false);
}

} // namespace kf::cli
