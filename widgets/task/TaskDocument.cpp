#include "widgets/task/TaskDocument.h"

namespace kf::ui {

using Json = nlohmann::json;

TaskDocument::TaskDocument(QObject* parent) : QObject(parent) {}

const Json* TaskDocument::find(const std::string& pointer) const
{
    try {
        Json::json_pointer p(pointer);
        if (!m_json.contains(p))
            return nullptr;
        return &m_json.at(p);
    } catch (const Json::exception&) {
        return nullptr;
    }
}

void TaskDocument::reset(Json doc, Source source)
{
    if (doc == m_json)
        return;
    m_json = std::move(doc);
    emit changed(source);
}

void TaskDocument::setValue(const std::string& pointer, Json value, Source source)
{
    if (const Json* old = find(pointer); old && *old == value)
        return;
    // operator[] creates missing objects on the way. A pointer that cannot be walked (through
    // a string, say) is dropped: the form only offers fields whose parents it shows.
    try {
        m_json[Json::json_pointer(pointer)] = std::move(value);
    } catch (const Json::exception&) {
        return;
    }
    emit changed(source);
}

void TaskDocument::erase(const std::string& pointer, Source source)
{
    if (pointer.empty() || !find(pointer))
        return;
    Json::json_pointer p(pointer);
    Json& parent = m_json.at(p.parent_pointer());
    const std::string last = p.back();
    if (parent.is_object())
        parent.erase(last);
    else if (parent.is_array())
        parent.erase(parent.begin() + static_cast<std::ptrdiff_t>(std::stoul(last)));
    emit changed(source);
}

} // namespace kf::ui
