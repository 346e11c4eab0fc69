# SPDX-License-Identifier: Apache-2.0
"""The shipped lcpsim/v1/lcpsim_pb2.py describes proto/lcpsim/v1/lcpsim.proto as it is: the file
descriptor it registers equals the one protoc makes from the .proto now (every message, field,
enum and option). Compared as descriptors, not as text, so that a protoc of another version,
whose Python output is laid out otherwise, agrees on an unchanged .proto. Environment: PROTOC,
LCPSIM_PROTO_ROOT (the folder holding lcpsim/v1/lcpsim.proto)."""

import os
import subprocess
import tempfile
import unittest

from google.protobuf import descriptor_pb2

from lcpsim.v1 import lcpsim_pb2

PROTO = "lcpsim/v1/lcpsim.proto"
REGENERATE = ("protoc --proto_path=proto --python_out=client-examples/python "
              "proto/lcpsim/v1/lcpsim.proto")


def default_json_name(name):
    """protoc's JSON name of a field that sets none: step_count -> stepCount."""
    out, upper = [], False
    for c in name:
        if c == "_":
            upper = True
        else:
            out.append(c.upper() if upper else c)
            upper = False
    return "".join(out)


def drop_default_json_names(messages):
    """protoc's descriptor set spells out every field's JSON name; the descriptor that protoc
    embeds in Python code keeps only those the .proto sets. Drops the derived ones."""
    for message in messages:
        for field in message.field:
            if field.json_name == default_json_name(field.name):
                field.ClearField("json_name")
        drop_default_json_names(message.nested_type)


class ProtocolUpToDateTest(unittest.TestCase):
    def test_shipped_module_matches_the_proto(self):
        with tempfile.TemporaryDirectory(prefix="lcpsim-proto-") as scratch:
            descriptor_set = os.path.join(scratch, "lcpsim.desc")
            subprocess.run([os.environ["PROTOC"], "--proto_path=" + os.environ["LCPSIM_PROTO_ROOT"],
                            "--descriptor_set_out=" + descriptor_set, PROTO], check=True)
            with open(descriptor_set, "rb") as f:
                files = descriptor_pb2.FileDescriptorSet.FromString(f.read()).file
        self.assertEqual([f.name for f in files], [PROTO])
        drop_default_json_names(files[0].message_type)
        shipped = descriptor_pb2.FileDescriptorProto.FromString(lcpsim_pb2.DESCRIPTOR.serialized_pb)
        self.assertEqual(shipped.name, PROTO)
        self.assertEqual(shipped, files[0],
                         "lcpsim_pb2.py is out of date with %s; from the repository's root run: %s"
                         % (PROTO, REGENERATE))


if __name__ == "__main__":
    unittest.main()
