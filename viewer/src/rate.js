// SPDX-License-Identifier: Apache-2.0
// The real-time factor: simulated seconds per wall-clock second, over the last `spanSeconds`
// wall-clock seconds of received States, factor = (t_sim,last − t_sim,first) /
// (t_wall,last − t_wall,first).
export class RateMeter {
  constructor(spanSeconds) {
    this.spanSeconds = spanSeconds;
    this.samples = [];
  }

  reset() {
    this.samples = [];
  }

  add(simTime, wallTime) {
    const last = this.samples[this.samples.length - 1];
    if (last && simTime < last.sim) this.samples = []; // a seek or reset: start over
    this.samples.push({ sim: simTime, wall: wallTime });
    while (this.samples.length > 2 && wallTime - this.samples[1].wall > this.spanSeconds) this.samples.shift();
  }

  // null until two samples at least 0.1 s of wall clock apart.
  factor() {
    if (this.samples.length < 2) return null;
    const first = this.samples[0], last = this.samples[this.samples.length - 1];
    const wall = last.wall - first.wall;
    return wall >= 0.1 ? (last.sim - first.sim) / wall : null;
  }
}
