#!/usr/bin/env python3
"""Whether two bpg-run binaries give the same tbb InterpolateBackprop outputs,
byte for byte, at 1 and 3 threads: the interpolate counterpart of
same-bits.sh, for a kernel change meant to keep the bits. Full-mantissa
diff_dst (rough_npy.py), every kernel layout (planar small planes, planar
rows, channels-last runs, 1-D, 3-D), f32, bf16, f16.
    python3 scripts/same-bits-interp.py OLD_BPG_RUN NEW_BPG_RUN
"""
import itertools
import json
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))

# (format, N, C, diff_src spatial, diff_dst spatial, mode, coordinate mode)
CASES = [
    ('NCX', 2, 100, [7, 7], [14, 14], 'linear', 'half_pixel'),      # small planes
    ('NCX', 2, 100, [14, 14], [7, 7], 'linear', 'half_pixel'),
    ('NCX', 3, 67, [7, 6], [13, 14], 'nearest', 'asymmetric'),
    ('NCX', 2, 100, [7, 7], [14, 14], 'linear', 'align_corners'),
    ('NCX', 2, 200, [14, 14], [28, 28], 'linear', 'half_pixel'),
    ('NCX', 2, 200, [16, 16], [32, 32], 'nearest', 'half_pixel'),
    ('NCX', 2, 40, [14, 14], [28, 28], 'linear', 'half_pixel'),     # planar rows
    ('NCX', 2, 40, [28, 28], [14, 14], 'linear', 'half_pixel'),
    ('NCX', 2, 8, [33, 31], [66, 62], 'linear', 'half_pixel'),
    ('NCX', 2, 8, [33, 31], [66, 62], 'nearest', 'half_pixel'),
    ('NCX', 2, 8, [20, 21], [37, 30], 'linear', 'align_corners'),
    ('NCX', 2, 4, [7, 5], [3, 13], 'linear', 'half_pixel'),
    ('NXC', 2, 64, [7, 7], [14, 14], 'linear', 'half_pixel'),       # channels-last
    ('NXC', 2, 64, [14, 14], [7, 7], 'linear', 'half_pixel'),
    ('NXC', 2, 40, [9, 11], [18, 22], 'nearest', 'half_pixel'),
    ('NXC', 2, 48, [9, 11], [17, 23], 'linear', 'align_corners'),
    ('NXC', 2, 32, [10, 56], [20, 112], 'linear', 'align_corners'),  # near 2x: the weighted walk
    ('NXC', 1, 24, [12, 10], [18, 15], 'linear', 'pytorch_half_pixel'),
    ('NXC', 2, 3, [5, 7], [10, 14], 'linear', 'half_pixel'),
    ('NCX', 2, 8, [5, 6, 7], [10, 12, 14], 'linear', 'half_pixel'),  # 3-D
    ('NXC', 2, 32, [5, 6, 7], [10, 12, 14], 'linear', 'half_pixel'),
    ('NCX', 3, 16, [40], [81], 'linear', 'half_pixel'),              # 1-D
    ('NXC', 3, 16, [40], [81], 'linear', 'half_pixel'),
]


def dense_strides(shape):
    strides, s = [], 1
    for extent in reversed(shape):
        strides.insert(0, s)
        s *= extent
    return strides


def tensor(tid, shape):
    return {'id': tid, 'dtype': 'f32', 'shape': shape, 'stride': dense_strides(shape),
            'layout_type': 'strided', 'property_type': 'undef'}


def graph(fmt, n, c, src_sp, dst_sp, mode, coord):
    def full(sp):
        return [n, c] + sp if fmt == 'NCX' else [n] + sp + [c]
    attrs = {'sizes': {'type': 's64[]', 'value': dst_sp},
             'coordinate_transformation_mode': {'type': 'string', 'value': coord},
             'mode': {'type': 'string', 'value': mode},
             'data_format': {'type': 'string', 'value': fmt}}
    op = {'id': 0, 'name': 'interp', 'kind': 'InterpolateBackward', 'attrs': attrs,
          'inputs': [tensor(0, full(src_sp)), tensor(1, full(dst_sp))], 'outputs': [tensor(2, full(src_sp))]}
    return {'version': '3.7.0', 'engine_kind': 'cpu', 'fpmath_mode': 'strict', 'input_ports': [0, 1],
            'output_ports': [2], 'graph': [op]}, full(src_sp), full(dst_sp)


def run(binary, graph_path, inputs, outputs, dt, threads):
    os.makedirs(outputs)
    r = subprocess.run([binary, graph_path, '--backend', 'tbb', '--no-check', '--dt', dt, '--threads',
                        str(threads), '--inputs', inputs, '--outputs', outputs],
                       capture_output=True, text=True)
    if r.returncode != 0:
        raise RuntimeError('%s failed: %s' % (binary, r.stdout + r.stderr))
    with open(os.path.join(outputs, '2.npy'), 'rb') as f:
        return f.read()


def main():
    old, new = sys.argv[1], sys.argv[2]
    differ = cases = 0
    with tempfile.TemporaryDirectory() as work:
        for k, (fmt, n, c, src_sp, dst_sp, mode, coord) in enumerate(CASES):
            g, src_shape, dst_shape = graph(fmt, n, c, src_sp, dst_sp, mode, coord)
            gpath = os.path.join(work, 'g%d.json' % k)
            with open(gpath, 'w') as f:
                json.dump(g, f)
            inputs = os.path.join(work, 'in%d' % k)
            os.makedirs(inputs)
            for tid, shape in ((0, src_shape), (1, dst_shape)):
                subprocess.run([sys.executable, os.path.join(HERE, 'rough_npy.py'), os.path.join(inputs, '%d.npy' % tid),
                                ','.join(map(str, shape)), 'data', str(tid + 1)], check=True)
            for dt, threads in itertools.product(('f32', 'bf16', 'f16'), (1, 3)):
                tag = '%s %s %s->%s %s %s %s threads=%d' % (fmt, n, src_sp, dst_sp, mode, coord, dt, threads)
                out = os.path.join(work, 'out%d_%s_%d' % (k, dt, threads))
                a = run(old, gpath, inputs, out + 'a', dt, threads)
                b = run(new, gpath, inputs, out + 'b', dt, threads)
                cases += 1
                if a != b:
                    differ += 1
                    print('DIFFERENT:', tag)
    print('same-bits-interp: %d cases, %s' % (cases, 'all the same' if differ == 0 else '%d differ' % differ))
    return 1 if differ else 0


if __name__ == '__main__':
    sys.exit(main())
