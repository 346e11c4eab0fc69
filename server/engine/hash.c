/* SPDX-License-Identifier: Apache-2.0 */
/* FNV-1a: for each byte, h = (h xor byte) × 1099511628211 (mod 2^64), from
 * the offset basis LCP_HASH_SEED (Fowler, Noll and Vo's 64-bit constants). */
#include "lcpsim/lcpsim.h"

uint64_t lcp_hash_bytes(uint64_t hash, const void *data, size_t size) {
  const unsigned char *bytes = data;
  for (size_t i = 0; i < size; ++i) {
    hash ^= bytes[i];
    hash *= 1099511628211ull;
  }
  return hash;
}
