#!/usr/bin/env python3
"""Writes a .npy file of f32 values with full mantissas (seeded, reproducible).

bpg-run's own fill (multiples of 1/64) sums exactly in any order, so a change
of summation order does not show in its outputs; these values do.
    rough_npy.py FILE SHAPE(2,3,5) KIND(data|stat|var) SEED
data: uniform in [-2, 2]; stat: [-0.5, 0.5]; var: [0.3, 3] (always positive).
"""
import random
import struct
import sys

path, shape_text, kind, seed = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
shape = [int(x) for x in shape_text.split(',')]
low, high = {'data': (-2.0, 2.0), 'stat': (-0.5, 0.5), 'var': (0.3, 3.0)}[kind]
rng = random.Random(seed)
count = 1
for extent in shape:
    count *= extent
values = [rng.uniform(low, high) for _ in range(count)]
dims = '%d,' % shape[0] if len(shape) == 1 else ', '.join(str(extent) for extent in shape)
header = "{'descr': '<f4', 'fortran_order': False, 'shape': (%s), }" % dims
header += ' ' * ((64 - (10 + len(header) + 1) % 64) % 64) + '\n'  # data starts on a 64-byte boundary
with open(path, 'wb') as out:
    out.write(b'\x93NUMPY\x01\x00' + struct.pack('<H', len(header)) + header.encode())
    out.write(struct.pack('<%df' % count, *values))
