"""Reading and writing hulk weight files byte by byte, for tests that craft bad ones."""

import struct

import numpy as np


# The weight file format (csrc/nn/serialize.cpp, versions 1 and 2, little-endian):
#   8 bytes magic "HULKGNN\0"; u32 version; u32 n + n bytes config ("key=value\n" lines;
#   version 2 states the layer stack as layers=..., version 1 the paper's shape as hidden=...);
#   u32 tensor count; per tensor: u32 n + n bytes name; i64 rows; i64 cols; rows*cols f32.

def parse_model_file(raw):
    assert raw[:8] == b"HULKGNN\0"
    version, n = struct.unpack_from("<II", raw, 8)
    off = 16
    config = raw[off:off + n].decode()
    off += n
    (count,) = struct.unpack_from("<I", raw, off)
    off += 4
    tensors = []
    for _ in range(count):
        (k,) = struct.unpack_from("<I", raw, off)
        name = raw[off + 4:off + 4 + k].decode()
        off += 4 + k
        rows, cols = struct.unpack_from("<qq", raw, off)
        off += 16
        data = np.frombuffer(raw, "<f4", rows * cols, off).reshape(rows, cols).copy()
        off += 4 * rows * cols
        tensors.append((name, data))
    assert off == len(raw)
    return version, config, tensors


def write_model_file(version, config, tensors, magic=b"HULKGNN\0"):
    out = bytearray(magic)
    cfg = config.encode()
    out += struct.pack("<II", version, len(cfg)) + cfg
    out += struct.pack("<I", len(tensors))
    for name, data in tensors:
        nb = name.encode()
        out += struct.pack("<I", len(nb)) + nb + struct.pack("<qq", *data.shape)
        out += np.ascontiguousarray(data, "<f4").tobytes()
    return bytes(out)
