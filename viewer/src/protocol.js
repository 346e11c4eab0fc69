// SPDX-License-Identifier: Apache-2.0
// Decoding the WebSocket's binary messages: each is one serialized lcpsim.v1.RecordEntry (a
// RecordHeader, a GetSceneReply or a State). The protocol's description is bundled (made from
// lcpsim.proto at build time), so the page needs nothing from the network but the messages.
import protobuf from "protobufjs/light.js";
import descriptor from "lcpsim-proto-descriptor";

const root = protobuf.Root.fromJSON(descriptor);
const RecordEntry = root.lookupType("lcpsim.v1.RecordEntry");

// Plain objects with the .proto's field names: 64-bit integers as numbers (step counts and
// revisions stay far below 2^53), enums by name, unset scalars at their defaults, unset
// messages null, and `entry` naming the oneof member that is set.
const objectOptions = { longs: Number, enums: String, defaults: true, arrays: true, oneofs: true };

export function decodeEntry(bytes) {
  return RecordEntry.toObject(RecordEntry.decode(bytes), objectOptions);
}

// For tests and tools that make entries in the page (encodeEntry(object) → Uint8Array).
export function encodeEntry(object) {
  return RecordEntry.encode(RecordEntry.fromObject(object)).finish();
}
