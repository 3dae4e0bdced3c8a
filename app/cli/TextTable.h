#pragma once
// A plain-text table for terminal reports: columns sized to their widest cell (counted in UTF-8
// code points, so "±" and "×" line up), numbers right-aligned.

#include <ostream>
#include <string>
#include <vector>

namespace kf::cli {

class TextTable {
public:
    enum class Align { Left, Right };
    struct Column {
        std::string title;
        Align align = Align::Left;
    };

    explicit TextTable(std::vector<Column> columns);
    /// Missing cells print empty; extra cells are ignored.
    void addRow(std::vector<std::string> cells);
    /// Every line starts with `indent`; trailing blanks are trimmed.
    void print(std::ostream& out, const std::string& indent = "  ") const;

    /// Display width of `s`: UTF-8 code points.
    static std::size_t width(const std::string& s);
    /// Cuts `s` to at most `max` code points, ending in "…" when cut.
    static std::string truncate(const std::string& s, std::size_t max);

private:
    std::vector<Column> m_columns;
    std::vector<std::vector<std::string>> m_rows;
};

} // namespace kf::cli
