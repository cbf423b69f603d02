// JSON checked with nlohmann's SAX parser (iterative, no tree) before the
// real parse (src/io/json_precheck.hpp).
#include "io/json_precheck.hpp"

#include <set>
#include <type_traits>
#include <vector>

#include <nlohmann/json.hpp>

#include "bpg/status.hpp"

namespace bpg::io {
namespace {

using json = nlohmann::ordered_json;

// Follows the document as a stack of open arrays and objects; stops at the
// first problem and keeps its message.
class structure_checker {
public:
    std::string problem;

    bool null() { return value(); }
    bool boolean(bool) { return value(); }
    bool number_integer(json::number_integer_t) { return value(); }
    bool number_unsigned(json::number_unsigned_t) { return value(); }
    bool number_float(json::number_float_t, const json::string_t &) { return value(); }
    bool string(json::string_t &) { return value(); }
    bool binary(json::binary_t &) { return value(); }
    bool start_object(std::size_t) { return open(true); }
    bool start_array(std::size_t) { return open(false); }
    bool end_object() { return close(); }
    bool end_array() { return close(); }

    bool key(json::string_t &k) {
        frame &f = frames_.back();
        if (!f.keys.insert(k).second) {
            const std::string at = path(frames_.size() - 1);
            problem = (at.empty() ? "top-level object" : at) + ": duplicate key \"" + k
                    + "\" (a key may appear once in an object)";
            return false;
        }
        f.key = k;
        return true;
    }

    template <typename Exception>
    bool parse_error(std::size_t, const std::string &, const Exception &e) {
        if constexpr (std::is_same_v<Exception, json::parse_error>)
            problem = "not valid JSON: syntax error at byte " + std::to_string(e.byte) + " (" + e.what() + ")";
        else // a number literal too large for any JSON number type (1e400)
            problem = std::string("not valid JSON: ") + e.what();
        return false;
    }

private:
    struct frame {
        bool object;
        size_t count = 0;          // elements started so far (arrays)
        std::string key;           // the current key (objects)
        std::set<std::string> keys; // keys seen (objects)
    };
    std::vector<frame> frames_;

    // A value starts: in an array it is the next element.
    bool value() {
        if (!frames_.empty() && !frames_.back().object) ++frames_.back().count;
        return true;
    }

    bool open(bool object) {
        value();
        if (int(frames_.size()) + 1 > max_json_depth) {
            problem = path(frames_.size()) + ": arrays and objects nest deeper than the limit of "
                    + std::to_string(max_json_depth) + " levels";
            return false;
        }
        frames_.push_back(frame {object, 0, {}, {}});
        return true;
    }

    bool close() {
        frames_.pop_back();
        return true;
    }

    // Where the current element of each of the first n open containers is:
    // graph[0].attrs. Long paths keep their first and last steps.
    std::string path(size_t n) const {
        std::vector<std::string> steps;
        for (size_t i = 0; i < n; ++i) {
            const frame &f = frames_[i];
            steps.push_back(f.object ? (i == 0 ? "" : ".") + f.key : "[" + std::to_string(f.count - 1) + "]");
        }
        std::string text;
        for (size_t i = 0; i < steps.size(); ++i) {
            if (steps.size() > 10 && i == 6) {
                text += "...";
                i = steps.size() - 3;
                if (steps[i][0] == '.') steps[i].erase(0, 1);
            }
            text += steps[i];
        }
        return text;
    }
};

} // namespace

void precheck_json(const std::string &text, const std::string &where) {
    structure_checker checker;
    if (!json::sax_parse(text, &checker))
        throw error(status::invalid_argument, where + ": " + checker.problem);
}

} // namespace bpg::io
