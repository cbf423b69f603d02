// The mutations of replay_main.cpp: a few byte-level edits of a seed, chosen
// by a seeded generator (the same inputs on every run), and the libFuzzer
// dictionary format (`name="value"` lines, \\ \" \xAB escapes) they insert from.
#pragma once

#include <algorithm>
#include <cstdint>
#include <fstream>
#include <random>
#include <string>
#include <vector>

namespace bpg::fuzz {

using bytes = std::vector<uint8_t>;

// The quoted value of each dictionary line; lines without one are skipped.
inline std::vector<bytes> read_dictionary(const std::string &path) {
    std::vector<bytes> words;
    std::ifstream in(path);
    std::string line;
    while (std::getline(in, line)) {
        const size_t open = line.find('"');
        const size_t close = line.rfind('"');
        if (line.empty() || line[0] == '#' || open == std::string::npos || close <= open) continue;
        bytes w;
        for (size_t i = open + 1; i < close; ++i) {
            if (line[i] != '\\' || i + 1 >= close) {
                w.push_back(uint8_t(line[i]));
            } else if (line[i + 1] == 'x' && i + 3 < close) {
                w.push_back(uint8_t(std::stoi(line.substr(i + 2, 2), nullptr, 16)));
                i += 3;
            } else {
                w.push_back(uint8_t(line[++i]));
            }
        }
        words.push_back(w);
    }
    return words;
}

// Numbers at the edges of what readers check: signs, zero, 2^31, 2^63, huge
// exponents.
inline const std::vector<std::string> &edge_numbers() {
    static const std::vector<std::string> n {"0", "-1", "1", "65536", "2147483647", "2147483648",
            "-9223372036854775808", "9223372036854775807", "18446744073709551616", "1e308", "-0.0", "3"};
    return n;
}

// One to four stacked edits of `seed`: bit flips, edge bytes, erased,
// duplicated or replaced ranges, dictionary words, edge numbers in place of
// the text's numbers, a splice with another seed. At most max_len bytes.
inline bytes mutate(const bytes &seed, const std::vector<bytes> &all_seeds, const std::vector<bytes> &dictionary,
        size_t max_len, std::mt19937 &rng) {
    static const uint8_t edge_bytes[] = {0, 1, 0x7f, 0x80, 0xff, '0', '9', '-', '"', '{', '}', '[', ']', ',', ':'};
    bytes b = seed;
    auto pick = [&](size_t n) { return n == 0 ? size_t(0) : size_t(rng() % n); };
    // JSON text mostly keeps its syntax (numbers and strings swapped), so that the
    // edited graph gets past the parser.
    const bool json_text = !seed.empty() && (seed[0] == '{' || seed[0] == '[');
    const int edits = 1 + int(rng() % (json_text ? 2 : 4));
    for (int e = 0; e < edits; ++e) {
        const size_t pos = pick(b.size() + 1);
        const size_t len = 1 + pick(std::min<size_t>(16, b.size() - std::min(pos, b.size()) + 1));
        switch (json_text && rng() % 4 != 0 ? 6 + rng() % 3 : rng() % 10) {
        case 0:
            if (pos < b.size()) b[pos] ^= uint8_t(1u << (rng() % 8));
            break;
        case 1:
            if (pos < b.size()) b[pos] = edge_bytes[pick(sizeof edge_bytes)];
            break;
        case 2:
            b.erase(b.begin() + long(pos), b.begin() + long(std::min(b.size(), pos + len)));
            break;
        case 3: {
            const bytes copy(b.begin() + long(pos), b.begin() + long(std::min(b.size(), pos + len)));
            b.insert(b.begin() + long(pick(b.size() + 1)), copy.begin(), copy.end());
            break;
        }
        case 4:
        case 5:
            if (!dictionary.empty()) {
                const bytes &w = dictionary[pick(dictionary.size())];
                if (rng() % 2) b.erase(b.begin() + long(pos), b.begin() + long(std::min(b.size(), pos + len)));
                b.insert(b.begin() + long(pos), w.begin(), w.end());
            }
            break;
        case 6:
        case 7: { // the first number at or after pos (a JSON shape, an id, an attribute)
            size_t at = pos;
            while (at < b.size() && !(b[at] >= '0' && b[at] <= '9')) ++at;
            if (at == b.size()) break;
            size_t end = at;
            while (end < b.size() && ((b[end] >= '0' && b[end] <= '9') || b[end] == '.')) ++end;
            const std::string &n = edge_numbers()[pick(edge_numbers().size())];
            b.erase(b.begin() + long(at), b.begin() + long(end));
            b.insert(b.begin() + long(at), n.begin(), n.end());
            break;
        }
        case 8: { // the first quoted string at or after pos, for a dictionary word
            const size_t open = size_t(std::find(b.begin() + long(pos), b.end(), '"') - b.begin());
            if (open >= b.size() || dictionary.empty()) break;
            const size_t close = size_t(std::find(b.begin() + long(open) + 1, b.end(), '"') - b.begin());
            if (close >= b.size()) break;
            const bytes &w = dictionary[pick(dictionary.size())];
            b.erase(b.begin() + long(open), b.begin() + long(close) + 1);
            b.insert(b.begin() + long(open), w.begin(), w.end());
            break;
        }
        default: {
            const bytes &other = all_seeds[pick(all_seeds.size())];
            const size_t from = pick(other.size() + 1);
            b.resize(pos);
            b.insert(b.end(), other.begin() + long(from), other.end());
            break;
        }
        }
        if (b.size() > max_len) b.resize(max_len);
    }
    return b;
}

} // namespace bpg::fuzz
