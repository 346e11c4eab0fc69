# SPDX-License-Identifier: Apache-2.0
"""Recordings of lcpsimd (`lcpsimd --record FILE`, Client.record): a file of lcpsim.v1
RecordEntry messages, each preceded by its length as a protobuf varint. The first entry is a
RecordHeader, a GetSceneReply follows it and follows again whenever the scene changes, and the
States come in step order (docs/protocol.md, "Record").

    import lcpsim
    for entry in lcpsim.read_recording("run.lcprec"):
        if entry.WhichOneof("entry") == "state":
            print(entry.state.time, entry.state.step_count)
"""
from lcpsim.v1 import lcpsim_pb2 as pb

RECORDING_MAGIC = "lcpsim-recording"
RECORDING_FORMAT_VERSION = 1


def _read_varint(stream):
    """The next varint of the stream, or None at its end (a varint cut short raises)."""
    value = 0
    for shift in range(0, 70, 7):
        byte = stream.read(1)
        if not byte:
            if shift == 0:
                return None
            raise ValueError("a recording entry's length is cut short")
        value |= (byte[0] & 0x7F) << shift
        if not byte[0] & 0x80:
            return value
    raise ValueError("a recording entry's length is longer than 10 bytes")


def read_recording(path, allow_truncated=True):
    """Yields the RecordEntry messages of the recording at `path` (a file name or a binary file
    object), reading as it goes. The first must be a RecordHeader of format 1 (ValueError
    otherwise). A last entry cut short (a daemon killed while writing) ends the reading, or
    raises ValueError with allow_truncated=False."""
    stream = open(path, "rb") if isinstance(path, (str, bytes)) or hasattr(path, "__fspath__") \
        else path
    try:
        first = True
        while True:
            try:
                length = _read_varint(stream)
            except ValueError:
                if allow_truncated:
                    return
                raise
            if length is None:
                return
            data = stream.read(length)
            if len(data) < length:
                if allow_truncated:
                    return
                raise ValueError("the last recording entry is cut short")
            entry = pb.RecordEntry()
            entry.ParseFromString(data)
            if first:
                if entry.WhichOneof("entry") != "header" or entry.header.magic != RECORDING_MAGIC:
                    raise ValueError("not an lcpsim recording (no RecordHeader first)")
                if entry.header.format_version != RECORDING_FORMAT_VERSION:
                    raise ValueError("recording format %d; this client reads format %d"
                                     % (entry.header.format_version, RECORDING_FORMAT_VERSION))
                first = False
            yield entry
    finally:
        if stream is not path:
            stream.close()
