#include "bpg/threading.hpp"

#include <memory>
#include <mutex>
#include <string>

#include <omp.h>
#include <tbb/global_control.h>
#include <tbb/info.h>

#include "bpg/status.hpp"

namespace bpg {

namespace {
std::mutex mu;
std::unique_ptr<tbb::global_control> tbb_limit; // alive while a limit is set
int omp_default = 0;
} // namespace

void set_max_threads(int n) {
    if (n < 0) throw error(status::invalid_argument, "set_max_threads: " + std::to_string(n) + " must be >= 0");
    std::lock_guard<std::mutex> lock(mu);
    if (omp_default == 0) omp_default = omp_get_max_threads();
    tbb_limit.reset();
    if (n > 0) tbb_limit = std::make_unique<tbb::global_control>(tbb::global_control::max_allowed_parallelism, size_t(n));
    omp_set_num_threads(n > 0 ? n : omp_default);
}

int get_max_threads() {
    return int(tbb::global_control::active_value(tbb::global_control::max_allowed_parallelism));
}

} // namespace bpg
