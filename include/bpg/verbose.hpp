// Verbose logging in the manner of ONEDNN_VERBOSE. Lines go to stderr:
//   level 1: one line per compiled partition and one per execution
//     bpg_verbose,compile,<pattern>,<ops>,<backend>,<ports>,<attrs>,<ms>
//     bpg_verbose,exec,<pattern>,<ops>,<backend>,<ports>,<attrs>,<ms>
//   level 2: also every dispatch and fusion decision, with its reason
//     bpg_verbose,dispatch,<pattern>,<ops>,<backend>,<reason>
//     bpg_verbose,fusion,<pattern>,<ops>,<fused|not_fused>,<reason>
// The level comes from the environment variable BPG_VERBOSE (read once, at
// the first use) unless set_verbose() was called. docs/verbose.md shows the fields.
#pragma once

#pragma GCC visibility push(default)
namespace bpg {

void set_verbose(int level); // 0 off, 1, 2; overrides BPG_VERBOSE
int get_verbose();

} // namespace bpg
#pragma GCC visibility pop
