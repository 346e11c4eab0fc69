# SPDX-License-Identifier: Apache-2.0
"""lcpsim.v1: the protocol's messages. lcpsim_pb2.py is protoc's output for lcpsim/v1/lcpsim.proto,
kept in the package so that installing it needs no protoc; the test
test_python_protocol_up_to_date checks that it describes the .proto as it is."""
