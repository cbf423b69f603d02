// docs/ cannot drift from the code: every op's page names each attribute of
// its schema and each allowed value, and the divergences page covers every
// point the issue lists.
#include <gtest/gtest.h>

#include "graph/op_schema.hpp"
#include "tools/tool_runner.hpp"

namespace bpg::test {
namespace {

std::string doc(const std::string &name) { return read_text(std::string(BPG_SOURCE_DIR) + "/docs/" + name); }

std::string page_of(op::kind k) {
    switch (k) {
        case op::kind::InterpolateBackprop: return doc("ops/interpolate_backprop.md");
        case op::kind::BatchNormTrainingBackprop: return doc("ops/batchnorm_training_backprop.md");
        case op::kind::ReLUBackprop: return doc("ops/relu_backprop.md");
        case op::kind::BatchNormTrainingBackpropSums:
        case op::kind::BatchNormTrainingBackpropFromSums:
        case op::kind::BatchNormForwardSums: return doc("ops/batchnorm_training_backprop_split.md");
        default: break; // oneDNN kinds bpg does not implement have no page
    }
    return "";
}

TEST(Docs, EveryOpPageNamesEveryAttributeAndAllowedValue) {
    for (op::kind k : all_op_kinds()) {
        const std::string page = page_of(k);
        ASSERT_FALSE(page.empty()) << to_string(k);
        for (const std::string &name : op_kind_names(k))
            EXPECT_NE(page.find("`" + name + "`"), std::string::npos) << to_string(k) << " page lacks name " << name;
        for (const graph_impl::attr_spec &a : graph_impl::schema_of(k).attrs) {
            EXPECT_NE(page.find("| `" + std::string(to_string(a.name)) + "` |"), std::string::npos)
                    << to_string(k) << " page lacks a table row for attribute " << to_string(a.name);
            for (const std::string &v : a.allowed)
                EXPECT_NE(page.find("`" + v + "`"), std::string::npos)
                        << to_string(k) << " page lacks value " << v << " of " << to_string(a.name);
        }
        for (const graph_impl::port_spec &p : graph_impl::schema_of(k).inputs)
            EXPECT_NE(page.find(std::string("`") + p.name + "`"), std::string::npos) << p.name;
        for (const graph_impl::port_spec &p : graph_impl::schema_of(k).outputs)
            EXPECT_NE(page.find(std::string("`") + p.name + "`"), std::string::npos) << p.name;
    }
}

TEST(Docs, DivergencesCoverEveryListedPointForEveryLibrary) {
    const std::string page = doc("divergences.md");
    for (const char *section : {"## Nearest ties", "## align_corners", "## scales versus the shape ratio",
                 "one-output BN quirk", "## Rank limits"}) {
        const size_t at = page.find(section);
        ASSERT_NE(at, std::string::npos) << section;
        const std::string body = page.substr(at, page.find("\n## ", at + 1) - at);
        for (const char *who : {"| bpg |", "| oneDNN", "| DirectML |", "| PyTorch |"})
            EXPECT_NE(body.find(who), std::string::npos) << section << " lacks a row for " << who;
    }
}

TEST(Docs, EveryPageOfTheIndexExists) {
    for (const char *p : {"divergences.md", "dml.md", "dispatch.md", "verbose.md", "benchmarks.md", "adding-an-op.md"}) {
        EXPECT_NE(doc("README.md").find(std::string("(") + p + ")"), std::string::npos) << p;
        EXPECT_FALSE(doc(p).empty()) << p;
    }
}

} // namespace
} // namespace bpg::test
