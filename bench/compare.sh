#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# compare.sh SCENE [RUNS] [BUILD_DIR] [-- ARGS...]: runs lcpsim-bench SCENE and
# the same scene in each peer engine that was built (bench/peers, cmake
# -DLCP_BENCH_PEERS=ON) and runs it, one run of each in turn, RUNS rounds
# (default 5), and prints the medians side by side.
#
# SCENE: pyramid, pile, chain, arm or quadruped. BUILD_DIR: the cmake build
# directory (default: build/ at the top of the repository). ARGS go to every
# program (e.g. -- -n 10 for a 10-level pyramid, -- -s 1000 for fewer steps).
# Alternating the programs puts them in the same minutes of a machine whose
# speed drifts; compare within one table, not across days.
set -euo pipefail

usage() {
  echo "usage: $0 pyramid|pile|chain|arm|quadruped [RUNS] [BUILD_DIR] [-- ARGS...]" >&2
  exit 2
}

[ $# -ge 1 ] || usage
scene=$1
shift
case $scene in pyramid | pile | chain | arm | quadruped) ;; *) usage ;; esac
runs=5
top=$(cd "$(dirname "$0")/.." && pwd)
build=$top/build
if [ $# -gt 0 ] && [ "$1" != "--" ]; then runs=$1; shift; fi
if [ $# -gt 0 ] && [ "$1" != "--" ]; then build=$1; shift; fi
if [ $# -gt 0 ]; then [ "$1" = "--" ] || usage; shift; fi
extra=("$@")
[[ $runs =~ ^[1-9][0-9]*$ ]] || usage

bench=$build/lcpsim-bench
peers=$build/bench/peers
[ -x "$bench" ] || { echo "compare.sh: no $bench (build first)" >&2; exit 1; }

# The programs: a name for the messages, then the command. MuJoCo runs its
# default Newton solver, except on the pyramid, whose 1260 free dofs, all
# coupled through the contacts, make Newton's Hessian factorisations far too
# slow for a run (they grow faster than the square of the dofs): CG runs
# there instead. On the chain also PGS with a pyramidal cone.
programs=("lcpsim" "$bench $scene")
add_peer() { # add_peer ENGINE [OPTIONS...]: when built and it runs the scene
  local exe=$peers/lcpsim-bench-$1
  [ -x "$exe" ] || return 0
  "$exe" --scenes | tr ' ' '\n' | grep -qx "$scene" || return 0
  programs+=("$*" "$exe $scene ${*:2}")
}
add_peer bullet
add_peer ode
case $scene in
  pyramid) add_peer mujoco --solver cg ;;
  chain) add_peer mujoco; add_peer mujoco --solver pgs --cone pyramidal ;;
  *) add_peer mujoco ;;
esac
[ ${#programs[@]} -gt 2 ] || echo "compare.sh: no peer runs $scene (cmake -DLCP_BENCH_PEERS=ON, then build)" >&2

lines=$(mktemp)
trap 'rm -f "$lines"' EXIT
echo "# $scene: ${runs} rounds, each program once a round; $(uptime | sed 's/.*load/load/')" >&2
for ((r = 1; r <= runs; ++r)); do
  for ((p = 0; p < ${#programs[@]}; p += 2)); do
    # shellcheck disable=SC2086 # the command is words
    if ! out=$(${programs[p + 1]} "${extra[@]}"); then
      echo "compare.sh: ${programs[p]} failed" >&2
      exit 1
    fi
    echo "$out" >>"$lines"
  done
  echo "# round $r done" >&2
done

# The scene's columns, then the table: one row per engine and solver, the
# median of each column over the runs, us_per_step's range, and each
# engine's time over lcpsim's.
case $scene in
  pyramid | pile) columns="contacts drift_m" ;;
  chain) columns="contacts rest_speed" ;;
  arm) columns="track_err_rad tip_z_m" ;;
  quadruped) columns="contacts height_err_m foot_slide_m" ;;
esac
awk -v columns="$columns" -v scene="$scene" '
function median(key, row,    n, i, j, v, t) {
  n = count[row, key]
  if (n == 0) return "-"
  for (i = 1; i <= n; ++i) v[i] = value[row, key, i]
  for (i = 2; i <= n; ++i) for (j = i; j > 1 && v[j - 1] > v[j]; --j) { t = v[j]; v[j] = v[j - 1]; v[j - 1] = t }
  return n % 2 ? v[(n + 1) / 2] : (v[n / 2] + v[n / 2 + 1]) / 2
}
{
  delete kv
  for (i = 1; i <= NF; ++i) { split($i, pair, "="); kv[pair[1]] = substr($i, length(pair[1]) + 2) }
  engine = ("engine" in kv) ? kv["engine"] : "lcpsim"
  row = engine " " kv["solver"]
  if (!(row in seen)) { seen[row] = 1; order[++rows] = row }
  for (key in kv) if (kv[key] ~ /^-?[0-9.]+(e[-+]?[0-9]+)?$/) value[row, key, ++count[row, key]] = kv[key] + 0
  if (!((row, "lo") in range) || kv["us_per_step"] + 0 < range[row, "lo"]) range[row, "lo"] = kv["us_per_step"] + 0
  if (!((row, "hi") in range) || kv["us_per_step"] + 0 > range[row, "hi"]) range[row, "hi"] = kv["us_per_step"] + 0
  friction[row] = kv["friction"]
}
END {
  ncol = split(columns, col, " ")
  base = median("us_per_step", order[1])
  printf "%-18s %-9s %10s %-19s %9s", "engine solver", "friction", "us/step", "(min-max)", "x lcpsim"
  for (c = 1; c <= ncol; ++c) printf " %13s", col[c]
  printf "\n"
  for (r = 1; r <= rows; ++r) {
    row = order[r]
    t = median("us_per_step", row)
    printf "%-18s %-9s %10.2f %-19s %9.2f", row, friction[row], t,
           sprintf("(%.2f-%.2f)", range[row, "lo"], range[row, "hi"]), t / base
    for (c = 1; c <= ncol; ++c) {
      m = median(col[c], row)
      if (m == "-") printf " %13s", m; else printf " %13.4g", m
    }
    printf "\n"
  }
  printf "medians of %d runs each; lcpsim first (x lcpsim = us/step over lcpsim'"'"'s)\n", count[order[1], "us_per_step"]
}' "$lines"
