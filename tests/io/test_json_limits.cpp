// The JSON reader's stack use is bounded: deep and long documents are read
// (or refused) on a thread with a 256 KB stack, 1/32 of the usual 8 MB.
#include <exception>
#include <functional>
#include <pthread.h>
#include <string>

#include <gtest/gtest.h>

#include "bpg/json.hpp"
#include "io/json_precheck.hpp"
#include "support/expect_error.hpp"

namespace bpg::test {
namespace {

// Runs f on a new thread with a small stack and rethrows what it threw.
void on_small_stack(const std::function<void()> &f) {
    struct job {
        const std::function<void()> *f;
        std::exception_ptr thrown;
    } j {&f, nullptr};
    pthread_attr_t attr;
    ASSERT_EQ(pthread_attr_init(&attr), 0);
    ASSERT_EQ(pthread_attr_setstacksize(&attr, 256 * 1024), 0);
    pthread_t t;
    const int rc = pthread_create(&t, &attr, [](void *p) -> void * {
        auto *jp = static_cast<job *>(p);
        try {
            (*jp->f)();
        } catch (...) {
            jp->thrown = std::current_exception();
        }
        return nullptr;
    }, &j);
    pthread_attr_destroy(&attr);
    ASSERT_EQ(rc, 0);
    pthread_join(t, nullptr);
    if (j.thrown) std::rethrow_exception(j.thrown);
}

std::string nested(size_t levels, const std::string &open, const std::string &close, const std::string &core) {
    std::string text;
    for (size_t i = 0; i < levels; ++i) text += open;
    text += core;
    for (size_t i = 0; i < levels; ++i) text += close;
    return text;
}

const char *const relu_op = R"({"id": 0, "name": "r", "kind": "ReLUBackward", "attrs": {},
    "inputs": [{"id": 0, "dtype": "f32", "shape": [2], "stride": [1], "layout_type": "strided"},
               {"id": 1, "dtype": "f32", "shape": [2], "stride": [1], "layout_type": "strided"}],
    "outputs": [{"id": 2, "dtype": "f32", "shape": [2], "stride": [1], "layout_type": "strided"}]})";

TEST(JsonLimits, DeepDocumentsAreRefusedOnASmallStack) {
    on_small_stack([] {
        for (const char *open : {"[", "{\"k\": "}) {
            SCOPED_TRACE(open);
            const std::string close = open[0] == '[' ? "]" : "}";
            // 100000 levels segfaulted at the default 8 MB stack before the limit.
            expect_error([&] { parse_graph_json("{\"x\": " + nested(100000, open, close, "1") + ", \"graph\": []}"); },
                    status::invalid_argument, {"limit of 64 levels"});
        }
    });
}

TEST(JsonLimits, DepthUpToTheLimitIsRead) {
    static_assert(io::max_json_depth == 64, "the limit is documented in include/bpg/json.hpp and docs/json.md");
    on_small_stack([] {
        // The top-level object is level 1; an ignored key holds 63 more.
        const std::string text = std::string("{\"graph\": [") + relu_op + "], \"x\": " + nested(63, "[", "]", "1") + "}";
        const graph_document doc = parse_graph_json(text);
        ASSERT_EQ(doc.ops.size(), 1u);
        EXPECT_EQ(make_graph(doc).get_ops().size(), 1u);
    });
}

TEST(JsonLimits, LongArraysAreRead) {
    on_small_stack([] {
        std::string big = "[0";
        for (int i = 1; i < 1000000; ++i) big += ",1";
        big += "]";
        EXPECT_EQ(parse_graph_json("{\"graph\": [], \"x\": " + big + "}").ops.size(), 0u);
        // A million-value attribute is read (the op rules judge it in make_graph).
        std::string op = relu_op;
        op.replace(op.find("\"attrs\": {}"), 11, "\"attrs\": {\"scales\": {\"type\": \"f32[]\", \"value\": " + big + "}}");
        EXPECT_EQ(parse_graph_json("{\"graph\": [" + op + "]}").ops.size(), 1u);
    });
}

} // namespace
} // namespace bpg::test
