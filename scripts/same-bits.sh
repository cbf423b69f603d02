#!/usr/bin/env bash
# Whether two bpg-run binaries give the same tbb BatchNormTrainingBackprop
# outputs, byte for byte: for a kernel change meant to keep the bits (the
# tests compare the kernels with the reference within tolerances, and with
# themselves across thread counts and instruction sets, not with an older
# build). On full-mantissa inputs (scripts/rough_npy.py), so that a changed
# summation order shows. Every layout path of the BN kernels: planar long and
# short rows, channels-last on the register blocks, any K and K < 16, sizes
# that stream, many channels in few rows (blocks, slices); plain and with a
# fused ReLU; training and use_global_stats; f32, bf16, f16. ~3 minutes.
#   bash scripts/same-bits.sh OLD_BPG_RUN NEW_BPG_RUN
set -uo pipefail
old="$1"; new="$2"
here="$(cd "$(dirname "$0")" && pwd)"
# oneDNN's conformance graphs: BPG_CONFORMANCE_DIR, else beside the source tree.
json="${BPG_CONFORMANCE_DIR:-$here/../../shared/conformance/onednn-graph-json}"
[ -d "$json" ] || { echo "same-bits.sh: no conformance graphs in $json; set BPG_CONFORMANCE_DIR" >&2; exit 2; }
work="$(mktemp -d)"; trap 'rm -rf "$work"' EXIT
fail=0; cases=0
for s in 2x40x7x7 3x20x14x14 2x17x31x33 2x64x9x9 2x48x11x13 3x80x5x7 2x3x33x31 2x7x19x17 2x15x9x11 \
         1x16x300x300 1x64x128x128 1x3x700x900 168x512x7x7 6x4096x2x2 2x640x5x5; do
  C="$(echo "$s" | cut -dx -f2)"; shape="$(echo "$s" | tr x ,)"
  for tag in "" "*acdb"; do
    for graph in bnorm_bwd bn_bwd_relu_bwd_fusion; do
      rm -rf "$work/in"; mkdir -p "$work/in"
      if [ "$graph" = bnorm_bwd ]; then  # src, diff_dst, mean, variance, gamma
        shapes="0:$s$tag+1:$s$tag+2:$C+3:$C+4:$C"; op=0
        ids="0:data 1:data 2:stat 3:var 4:stat"
      else  # relu input, relu diff_dst, BN diff_dst, mean, variance, gamma
        shapes="0:$s$tag+1:$s$tag+3:$s$tag+4:$C+5:$C+6:$C"; op=1
        ids="0:data 1:data 3:data 4:stat 5:var 6:stat"
      fi
      seed=1
      for id_kind in $ids; do
        id="${id_kind%%:*}"; kind="${id_kind#*:}"; dims="$shape"; [ "$kind" = data ] || dims="$C"
        python3 "$here/rough_npy.py" "$work/in/$id.npy" "$dims" "$kind" "$seed"; seed=$((seed + 1))
      done
      for dt in f32 bf16 f16; do
        for attrs in "" "--op-attrs=$op:use_global_stats:true"; do
          rm -rf "$work/old" "$work/new"; mkdir -p "$work/old" "$work/new"
          args=(--backend tbb --no-check --dt "$dt" "--in-shapes=$shapes" --inputs "$work/in")
          [ -n "$attrs" ] && args+=("$attrs")
          "$old" "$json/$graph.json" "${args[@]}" --outputs "$work/old" > "$work/old.log" 2>&1 || { echo "old failed: $graph $s$tag $dt $attrs"; fail=1; }
          "$new" "$json/$graph.json" "${args[@]}" --outputs "$work/new" > "$work/new.log" 2>&1 || { echo "new failed: $graph $s$tag $dt $attrs"; fail=1; }
          cases=$((cases + 1))
          if [ -z "$(ls "$work/new")" ] || ! diff -rq "$work/old" "$work/new" > /dev/null; then
            echo "DIFFERENT: $graph $s$tag $dt $attrs"; fail=1
          fi
        done
      done
    done
  done
done
echo "same-bits: $cases cases, $([ $fail = 0 ] && echo 'all the same' || echo 'some differ')"
exit $fail
