# SPDX-License-Identifier: Apache-2.0
"""Reads an lcpsim recording with nothing but the generated lcpsim_pb2 and
protobuf's varint decoder, as any Python program could: each entry is a
varint length, then that many bytes of an lcpsim.v1.RecordEntry.

usage: read_recording.py FILE
prints: entries=N headers=H scenes=S states=T first_step=A last_step=B magic=M version=V
"""
import sys

from google.protobuf.internal.decoder import _DecodeVarint32

from lcpsim.v1 import lcpsim_pb2


def entries(data):
    position = 0
    while position < len(data):
        length, position = _DecodeVarint32(data, position)
        entry = lcpsim_pb2.RecordEntry()
        entry.ParseFromString(data[position:position + length])
        position += length
        yield entry


def main(path):
    with open(path, "rb") as f:
        data = f.read()
    counts = {"header": 0, "scene": 0, "state": 0}
    steps = []
    header = None
    total = 0
    for entry in entries(data):
        kind = entry.WhichOneof("entry")
        counts[kind] += 1
        total += 1
        if kind == "header":
            header = entry.header
        elif kind == "state":
            steps.append(entry.state.step_count)
    print("entries=%d headers=%d scenes=%d states=%d first_step=%d last_step=%d magic=%s "
          "version=%d" % (total, counts["header"], counts["scene"], counts["state"],
                          steps[0] if steps else -1, steps[-1] if steps else -1,
                          header.magic if header else "-",
                          header.format_version if header else 0))


if __name__ == "__main__":
    main(sys.argv[1])
