// libFuzzer target: the oneDNN Graph JSON importer and everything a parsed
// graph goes through before it runs (schemas, finalize, partitioning,
// compile, and for small tensors execute on zeroed buffers).
//
// Inputs that start with a byte below 0x10 are recipes for deep, long and
// duplicate-key documents (json_generator.hpp); others are the text itself.
//
// The promise being tested: any input either works or throws bpg::error.
// Any other exception escapes this function, which libFuzzer reports as a
// crash, as it does for ASan/UBSan findings.
#include <cstdint>
#include <string>
#include <vector>

#include "bpg/json.hpp"
#include "bpg/threading.hpp"
#include "fuzz_budget.hpp"
#include "json_generator.hpp"

namespace {

bool small_and_concrete(const bpg::logical_tensor &lt) {
    if (!lt.has_known_shape() || lt.get_layout_type() != bpg::layout_type::strided) return false;
    try {
        return lt.element_count() <= bpg::fuzz::max_elements_to_run
                && lt.get_mem_size() <= size_t(bpg::fuzz::max_elements_to_run) * 8;
    } catch (const bpg::error &) {
        return false;
    }
}

void compile_and_run(const bpg::partition &p) {
    using namespace bpg;
    engine eng;
    stream strm(eng);
    for (const logical_tensor &in : p.get_input_ports())
        if (!small_and_concrete(in)) return;
    const compiled_partition cp = p.compile(p.get_input_ports(), p.get_output_ports(), eng);
    std::vector<std::vector<uint8_t>> memory;
    std::vector<tensor> ins, outs;
    auto bind = [&](const logical_tensor &lt, std::vector<tensor> &to) {
        if (!small_and_concrete(lt)) return false;
        memory.emplace_back(lt.get_mem_size() + 1, 0);
        to.emplace_back(lt, eng, memory.back().data());
        return true;
    };
    for (const logical_tensor &in : cp.get_inputs())
        if (!bind(in, ins)) return;
    for (const logical_tensor &out : cp.get_outputs())
        if (!bind(out, outs)) return;
    cp.execute(strm, ins, outs);
}

} // namespace

// Inputs are tiny; one thread keeps executions fast and reproducible.
extern "C" int LLVMFuzzerInitialize(int *, char ***) {
    bpg::set_max_threads(1);
    return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    const std::string text = bpg::fuzz::json_generator(data, size).text();
    try {
        const bpg::graph_document doc = bpg::parse_graph_json(text);
        // What we write we must read back.
        bpg::parse_graph_json(bpg::write_graph_json(doc));
        const bpg::graph g = bpg::make_graph(doc);
        for (const bpg::partition &p : g.get_partitions()) {
            try {
                compile_and_run(p);
            } catch (const bpg::error &) {
                // A partition the graph allows may still fail to compile.
            }
        }
    } catch (const bpg::error &) {
    }
    return 0;
}
