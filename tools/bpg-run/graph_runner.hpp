// Runs a whole graph partition by partition with host buffers: the engine of
// bpg-run. Inputs come from .npy files or a deterministic fill; every
// partition is compiled by the dispatch rule (or a forced backend), timed,
// and compared with the reference backend on the same inputs.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "bpg/graph.hpp"
#include "host_buffer.hpp"
#include "run_files.hpp"

namespace bpg::tools {

struct run_options {
    backend_kind backend = backend_kind::auto_select;
    int repeat = 1;     // timed executions per partition (median reported)
    bool check = true;  // compare each partition with the reference backend
    partition_policy policy = partition_policy::fusion; // debug: one op per partition
};

struct partition_report {
    size_t id = 0;
    std::string pattern;
    std::vector<size_t> ops;
    std::string backend;
    std::string dispatch_reason;
    std::string description;
    double median_ms = 0, min_ms = 0;
    bool checked = false;
    double max_abs_err = 0, max_rel_err = 0; // against the reference backend
};

class graph_runner {
public:
    graph_runner(const graph &g, run_options opts);

    // Reads DIR/K.npy for each graph input K when present, else fills it;
    // an empty dir means no folder, and a dir that is not a folder is an
    // error. Returns the ids read from files.
    std::vector<size_t> load_inputs(const std::string &dir);
    // Compiles and executes every partition in order.
    std::vector<partition_report> run();
    // Writes every graph output K as K.npy, all or nothing; returns the ids.
    std::vector<size_t> write_outputs(output_files &out) const;

    const host_buffer &buffer(size_t id) const { return buffers_.at(id); }

private:
    const graph &g_;
    run_options opts_;
    std::map<size_t, host_buffer> buffers_;
};

} // namespace bpg::tools
