#include "run_files.hpp"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <unistd.h>

#include "bpg/status.hpp"
#include "io/file_bytes.hpp"

namespace bpg::tools {

namespace fs = std::filesystem;

namespace {

[[noreturn]] void fail(const std::string &what) { throw error(status::invalid_argument, what); }

// The entry's status, of the link itself or (follow) of what it names;
// not_found when absent.
fs::file_status look_up(const fs::path &p, const std::string &who, bool follow = false) {
    std::error_code ec;
    const fs::file_status st = follow ? fs::status(p, ec) : fs::symlink_status(p, ec);
    if (st.type() == fs::file_type::not_found) return st;
    if (ec) fail(who + ": cannot look it up: " + ec.message());
    return st;
}

// The folders to make for dir, outermost first; throws if the nearest
// existing ancestor is not a folder.
std::vector<fs::path> missing_folders(const std::string &dir) {
    const std::string who = "--outputs " + dir;
    std::vector<fs::path> missing;
    for (fs::path p = fs::path(dir).lexically_normal(); !p.empty(); p = p.parent_path()) {
        if (p.has_filename() == false && p != p.root_path()) continue; // "out/" -> "out"
        const fs::file_status st = look_up(p, who, true);
        if (st.type() == fs::file_type::not_found) {
            missing.insert(missing.begin(), p);
            if (p == p.parent_path()) break;
            continue;
        }
        if (!fs::is_directory(st))
            fail(who + ": " + (missing.empty() ? "is not a folder" : p.string() + " is not a folder"));
        break;
    }
    return missing;
}

} // namespace

void require_input_folder(const std::string &dir) {
    const fs::file_status st = look_up(dir, "--inputs " + dir, true);
    if (st.type() == fs::file_type::not_found) fail("--inputs " + dir + ": no such folder");
    if (!fs::is_directory(st)) fail("--inputs " + dir + ": is not a folder");
}

bool entry_present(const std::string &path) { return look_up(path, path).type() != fs::file_type::not_found; }

output_files::output_files(std::string dir) : dir_(std::move(dir)) { missing_folders(dir_); }

output_files::~output_files() {
    if (!committed_) roll_back();
}

void output_files::make_folder() {
    for (const fs::path &p : missing_folders(dir_)) {
        std::error_code ec;
        if (fs::create_directory(p, ec)) made_dirs_.push_back(p.string()); // false: made meanwhile by another
        else if (ec) fail("--outputs " + dir_ + ": cannot create the folder " + p.string() + ": " + ec.message());
    }
    folder_ready_ = true;
}

void output_files::add(const std::string &name, const std::vector<uint8_t> &bytes) {
    if (!folder_ready_) make_folder();
    const std::string final_path = dir_ + "/" + name;
    // rename() cannot put a file in place of a folder; say so before writing.
    const fs::file_status st = look_up(final_path, final_path, true);
    if (st.type() != fs::file_type::not_found && !fs::is_regular_file(st))
        fail(final_path + ": " + (fs::is_directory(st) ? "is a folder" : "is not a regular file")
                + "; the output file cannot replace it");
    const std::string temp = dir_ + "/." + name + ".bpg-run-" + std::to_string(::getpid()) + ".tmp";
    files_.emplace_back(temp, final_path);
    io::write_file_bytes(temp, bytes);
}

void output_files::commit() {
    for (; renamed_ < files_.size(); ++renamed_) {
        const auto &[temp, final_path] = files_[renamed_];
        if (std::rename(temp.c_str(), final_path.c_str()) != 0)
            fail(final_path + ": cannot move the written file into place: " + std::strerror(errno));
    }
    committed_ = true;
}

// Files already renamed are removed too: a failed run leaves no outputs.
void output_files::roll_back() noexcept {
    std::error_code ec;
    for (size_t i = 0; i < files_.size(); ++i) fs::remove(i < renamed_ ? files_[i].second : files_[i].first, ec);
    for (auto it = made_dirs_.rbegin(); it != made_dirs_.rend(); ++it) fs::remove(*it, ec); // only if empty
}

} // namespace bpg::tools
