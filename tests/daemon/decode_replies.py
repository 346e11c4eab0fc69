#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
"""Decodes every reply of a dump with Python's protobuf, which refuses a
string field that is not UTF-8: the file holds replies as a 4-byte
little-endian length, then the bytes. Usage: decode_replies.py DUMP COUNT
(COUNT: how many replies the dump must hold). Exit status 0 when every
one decodes and has a status."""
import struct
import sys

from lcpsim.v1 import lcpsim_pb2


def main():
    path, expected = sys.argv[1], int(sys.argv[2])
    count = not_ok = 0
    with open(path, "rb") as dump:
        data = dump.read()
    at = 0
    while at < len(data):
        (length,) = struct.unpack_from("<I", data, at)
        at += 4
        reply = lcpsim_pb2.Reply()
        try:
            reply.ParseFromString(data[at:at + length])
        except Exception as error:  # DecodeError, or UnicodeDecodeError in pure Python
            print(f"reply {count} does not decode in Python: {error}", file=sys.stderr)
            return 1
        if not reply.HasField("status"):
            print(f"reply {count} has no status", file=sys.stderr)
            return 1
        not_ok += reply.status.code != lcpsim_pb2.Status.OK
        at += length
        count += 1
    if count != expected:
        print(f"{count} replies in the dump, {expected} expected", file=sys.stderr)
        return 1
    print(f"Python's protobuf decoded all {count} replies ({not_ok} not OK)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
