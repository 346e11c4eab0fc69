#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# Names and layers of the engine and model libraries, read off their object
# files with nm:
#
# 1. every function or variable they define for other files starts with
#    lcp_: public ones are lcp_ and a letter and are declared in one of the
#    headers given (the API), internal ones are lcp__ (lcp__arena_alloc);
# 2. no two object files call each other in a circle, directly or through
#    others: the files form layers (docs/architecture.md, "Source layout").
#
# usage: check_symbols.sh ARCHIVE... -- HEADER...   (nm: $NM, else nm)
# Prints what is wrong and exits 1, or prints a summary and exits 0.
set -eu


archives=''
while [ $# -gt 0 ] && [ "$1" != "--" ]; do
  archives="$archives $1"
  shift
done
[ $# -gt 0 ] && shift
headers="$*"
if [ -z "$archives" ] || [ -z "$headers" ]; then
  echo "usage: check_symbols.sh ARCHIVE... -- HEADER..." >&2
  exit 2
fi

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
export LC_ALL=C

# "symbol object" for what each object defines and what it needs; nm
# prints "archive:object:address type symbol" (no address when undefined)
# shellcheck disable=SC2086
"${NM:-nm}" -A -g --defined-only $archives | awk 'NF >= 2 && $(NF - 1) ~ /^[A-Za-z]$/ { split($1, where, ":"); print $NF, where[2] }' | sort >"$tmp/defined"
# shellcheck disable=SC2086
"${NM:-nm}" -A -u $archives | awk 'NF >= 2 && $(NF - 1) ~ /^[A-Za-z]$/ { split($1, where, ":"); print $NF, where[2] }' | sort >"$tmp/needed"

failed=0
awk '$1 !~ /^lcp_/ {print $1}' "$tmp/defined" | sort -u >"$tmp/bad"
if [ -s "$tmp/bad" ]; then
  echo "defined without the lcp_ prefix:"
  sed 's/^/  /' "$tmp/bad"
  failed=1
fi

# shellcheck disable=SC2086
cat $headers >"$tmp/api"
awk '$1 ~ /^lcp_[a-z0-9]/ {print $1}' "$tmp/defined" | sort -u >"$tmp/public"
while read -r name; do
  grep -qw "$name" "$tmp/api" || echo "  $name"
done <"$tmp/public" >"$tmp/undeclared"
if [ -s "$tmp/undeclared" ]; then
  echo "public names (lcp_, one underscore) in no header of the API (internal ones are lcp__):"
  cat "$tmp/undeclared"
  failed=1
fi

# caller -> callee edges between different objects; tsort finds circles
join "$tmp/needed" "$tmp/defined" | awk '$2 != $3 {print $2, $3}' | sort -u >"$tmp/edges"
if ! tsort "$tmp/edges" >/dev/null 2>"$tmp/loops"; then
  echo "object files calling each other in a circle:"
  sed 's/^tsort: //' "$tmp/loops" | grep -v 'input contains a loop' | sed 's/^/  /'
  failed=1
fi

if [ "$failed" -eq 0 ]; then
  echo "$(wc -l <"$tmp/public") public and $(grep -c '^lcp__' "$tmp/defined" || true) internal" \
    "symbols, $(wc -l <"$tmp/edges") calls between files, no circle"
fi
exit "$failed"
