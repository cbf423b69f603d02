// libFuzzer target: the .npy reader, and for arrays it accepts, the copy into
// a strided tensor and back (which must give the same bytes for the dtypes
// that map one to one).
//
// Any input either parses or throws bpg::error; anything else (another
// exception, an ASan/UBSan finding, a round trip that changes the data) is a
// crash for libFuzzer.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "fuzz_budget.hpp"
#include "io/npy.hpp"

namespace {

bpg::data_type tensor_type_of(const std::string &descr) {
    if (descr == "<f2") return bpg::data_type::f16;
    if (descr == "<i4") return bpg::data_type::s32;
    return bpg::data_type::f32;
}

// Same data, except that a float NaN may come back as another NaN (the copy
// goes through double, which quiets signalling NaNs).
bool same_data(const bpg::io::npy_array &a, const bpg::io::npy_array &b) {
    if (a.data.size() != b.data.size()) return false;
    if (a.descr != "<f4") return a.data == b.data;
    for (size_t i = 0; i + 4 <= a.data.size(); i += 4) {
        float x, y;
        std::memcpy(&x, &a.data[i], 4);
        std::memcpy(&y, &b.data[i], 4);
        if (std::memcmp(&x, &y, 4) != 0 && !(std::isnan(x) && std::isnan(y))) return false;
    }
    return true;
}

// Through a tensor laid out channels-last-like (reversed strides), to walk
// the strided paths; "<f4" and "<f2" and "<i4" come back bit for bit.
void round_trip(const bpg::io::npy_array &a) {
    using namespace bpg;
    const dims &shape = a.shape;
    int64_t count = 1;
    for (int64_t d : shape) count *= d; // parse_npy checked the product
    if (count > fuzz::max_elements_to_run) return;
    // An empty array may have huge dims whose strides overflow: dense_strides
    // saturates them. Otherwise the product of the dims is count, small.
    dims strides = dense_strides(shape);
    if (count > 0) {
        int64_t s = 1;
        for (size_t i = 0; i < shape.size(); ++i) {
            strides[i] = s;
            s *= shape[i];
        }
    }
    const logical_tensor lt(0, tensor_type_of(a.descr), shape, strides);
    std::vector<uint8_t> buffer(lt.get_mem_size() + 1);
    io::npy_to_buffer(a, lt, buffer.data(), "fuzz");
    const io::npy_array back = io::buffer_to_npy(lt, buffer.data());
    if (a.descr != "<f8" && !same_data(a, back)) std::abort();
    io::parse_npy(io::serialize_npy(back), "fuzz round trip");
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    const std::vector<uint8_t> bytes(data, data + size);
    try {
        round_trip(bpg::io::parse_npy(bytes, "fuzz"));
    } catch (const bpg::error &) {
    }
    return 0;
}
