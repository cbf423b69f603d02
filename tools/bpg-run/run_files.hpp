// The files of one bpg-run: the --inputs folder it reads and the --outputs
// files it writes all or nothing. Every problem is a bpg::error naming the
// path (never a std::filesystem exception).
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace bpg::tools {

// Throws unless dir names an existing folder (a file or a missing path given
// to --inputs is a mistake, not a request for the built-in fill).
void require_input_folder(const std::string &dir);

// Whether anything is at path (a file, a folder, a dangling link): what the
// user put there must be read, not skipped. Throws if it cannot be looked up.
bool entry_present(const std::string &path);

// Output files written to temporary names in the folder and renamed into
// place by commit() only when all were written. A failure, or destruction
// before commit(), removes the temporaries and the folders this made.
class output_files {
public:
    // Checks at once that dir is a folder or can be made one, so that a bad
    // --outputs fails before the graph runs.
    explicit output_files(std::string dir);
    ~output_files();
    output_files(const output_files &) = delete;
    output_files &operator=(const output_files &) = delete;

    void add(const std::string &name, const std::vector<uint8_t> &bytes);
    void commit();
    const std::string &dir() const { return dir_; }

private:
    void make_folder();
    void roll_back() noexcept;

    std::string dir_;
    bool folder_ready_ = false;
    std::vector<std::string> made_dirs_;                    // outermost first
    std::vector<std::pair<std::string, std::string>> files_; // temporary, final
    size_t renamed_ = 0;                                    // files_[0, renamed_) are in place
    bool committed_ = false;
};

} // namespace bpg::tools
