// Umbrella header.
#pragma once
#include "bpg/graph.hpp"
#include "bpg/status.hpp"
#include "bpg/tensor.hpp"
#include "bpg/threading.hpp"
#include "bpg/version.hpp"
