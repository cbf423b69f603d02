#include "backends/dnnl/dnnl_common.hpp"

#include <cstdint>
#include <memory>

#include "backends/dnnl/openmp_team.hpp"
#include "bpg/status.hpp"
#include "core/allocate.hpp"

namespace bpg::backends::dnnl_impl {

const dnnl::engine &cpu_engine() {
    static const dnnl::engine eng(dnnl::engine::kind::cpu, 0);
    return eng;
}

std::optional<dnnl::memory::data_type> to_dnnl(data_type dt) {
    switch (dt) {
        case data_type::f32: return dnnl::memory::data_type::f32;
        case data_type::bf16: return dnnl::memory::data_type::bf16;
        default: return std::nullopt;
    }
}

dnnl::memory::desc permuted_desc(const core::tensor_desc &t, const std::vector<int> &order,
        dnnl::memory::data_type dt) {
    dnnl::memory::dims d, s;
    for (int a : order) {
        d.push_back(t.shape[size_t(a)]);
        s.push_back(t.strides[size_t(a)]);
    }
    return dnnl::memory::desc(d, dt, s);
}

std::string dims_text(const dims &d) {
    std::string s;
    for (dim x : d) s += (s.empty() ? "" : "x") + std::to_string(x);
    return s;
}

std::string strides_text(const dims &s) {
    std::string r = "[";
    for (size_t i = 0; i < s.size(); ++i) r += (i ? "," : "") + std::to_string(s[i]);
    return r + "]";
}

bool same_strides(const core::tensor_desc &a, const core::tensor_desc &b) {
    if (a.shape != b.shape || a.strides.size() != b.strides.size()) return false;
    for (size_t k = 0; k < a.shape.size(); ++k)
        if (a.shape[k] > 1 && a.strides[k] != b.strides[k]) return false;
    return true;
}

dnnl::primitive_attr user_scratchpad_attr() {
    dnnl::primitive_attr attr;
    attr.set_scratchpad_mode(dnnl::scratchpad_mode::user);
    return attr;
}

void execute_on_cpu(const dnnl::primitive &p, std::unordered_map<int, dnnl::memory> &args,
        const dnnl::memory::desc &scratchpad_md) {
    const size_t bytes = scratchpad_md.get_size();
    if (bytes > 0) {
        // One buffer per calling thread: two concurrent executions never
        // share it, and a thread's repeated calls do not allocate. 64-byte
        // aligned as oneDNN's own allocations are.
        thread_local core::aligned_buffer buffer;
        thread_local size_t capacity = 0;
        if (capacity < bytes) {
            buffer.reset();
            capacity = 0;
            buffer = core::allocate(bytes, "the oneDNN scratchpad");
            capacity = bytes;
        }
        args[DNNL_ARG_SCRATCHPAD] = dnnl::memory(scratchpad_md, cpu_engine(), buffer.get());
    }
    try {
        const openmp_team_for_call team;
        dnnl::stream s(cpu_engine());
        p.execute(s, args);
        s.wait();
    } catch (const dnnl::error &e) {
        // oneDNN's own allocations (memory objects, stream) cannot go through
        // core::allocate; their failure at least keeps its status.
        throw error(e.status == dnnl_out_of_memory ? status::out_of_memory : status::runtime_error,
                std::string("oneDNN primitive execution failed: ") + e.what());
    }
}

std::string permuted_text(const core::tensor_desc &t, const std::vector<int> &order) {
    dims d, s;
    for (int a : order) {
        d.push_back(t.shape[size_t(a)]);
        s.push_back(t.strides[size_t(a)]);
    }
    return dims_text(d) + strides_text(s);
}

} // namespace bpg::backends::dnnl_impl
