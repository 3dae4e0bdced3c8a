#pragma once
// The canonical task.json being edited: one nlohmann::json that the form and the JSON text
// both write into. Edits address values by JSON pointer and leave every other key untouched,
// so keys the form does not show survive any number of form edits.
//
// GUI thread only. Owned by TaskEditor; the form, its table models and the text pane hold a
// non-owning pointer and must not outlive it.

#include <nlohmann/json.hpp>

#include <QObject>

#include <string>

namespace kf::ui {

class TaskDocument : public QObject {
    Q_OBJECT
public:
    /// Who made a change: observers skip refreshing the widget the user is typing in.
    enum class Source { Load, Form, Text };
    Q_ENUM(Source)

    explicit TaskDocument(QObject* parent = nullptr);

    const nlohmann::json& json() const { return m_json; }
    /// The value at `pointer`, or nullptr when it (or a parent) is missing or not traversable.
    const nlohmann::json* find(const std::string& pointer) const;

    /// Replaces the whole document; emits changed() unless it is equal to the current one.
    void reset(nlohmann::json doc, Source source);
    /// Writes `value` at `pointer`, creating missing parent objects.
    void setValue(const std::string& pointer, nlohmann::json value, Source source = Source::Form);
    /// Removes the key or array element at `pointer`; missing values are ignored.
    void erase(const std::string& pointer, Source source = Source::Form);

signals:
    void changed(kf::ui::TaskDocument::Source source);

private:
    nlohmann::json m_json = nlohmann::json::object();
};

} // namespace kf::ui
