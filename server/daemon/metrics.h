/* SPDX-License-Identifier: Apache-2.0 */
/* The daemon's counters for GET /metrics (Prometheus text format 0.0.4):
 * steps and their durations, the real-time factor, requests by call and
 * status, the viewers' frames. Kept only with --http; the request loop and
 * the stepping update them through hooks that are NULL otherwise. */
#ifndef LCPD_METRICS_H
#define LCPD_METRICS_H

#include <stddef.h>
#include <stdint.h>

/* Upper bounds of the step-duration histogram, in seconds: 10 us to 1 s in
 * 1-2.5-5 steps (a small scene steps in tens of microseconds, a large one
 * in milliseconds), then +Inf. */
#define LCPD_STEP_BUCKETS 16
/* Distinct (call, status) pairs counted; more pairs are counted under
 * call="other". The protocol has about 30 calls and 10 statuses, and a run
 * sees few of the pairs. */
#define LCPD_MAX_REQUEST_KINDS 128

typedef struct lcpd_request_count {
  const char *call;   /* a static string (lcpd_call_name) */
  const char *status; /* a static string (lcpd_code_name) */
  uint64_t count;
} lcpd_request_count_t;

typedef struct lcpd_metrics {
  uint64_t steps_total;
  uint64_t step_buckets[LCPD_STEP_BUCKETS + 1]; /* the last: above every bound */
  double step_seconds_sum;
  /* Simulated seconds per wall second over the last sampling period. */
  double realtime_factor;
  double simulated_seconds_total; /* steps x their timestep, summed at each sample */
  uint64_t sampled_steps;         /* steps_total at the last sample */
  uint64_t sampled_wall_ns;
  double sampled_simulated;
  lcpd_request_count_t requests[LCPD_MAX_REQUEST_KINDS];
  int request_kinds;
  uint64_t viewer_frames_sent;
  uint64_t viewer_frames_dropped;
} lcpd_metrics_t;

/* What /metrics reads from elsewhere at the time of the scrape. */
typedef struct lcpd_metrics_gauges {
  int64_t clients;            /* connected ZeroMQ peers */
  int64_t stream_subscribers; /* viewer WebSocket clients */
  uint64_t resident_bytes;    /* 0: unknown */
  uint64_t virtual_bytes;
  double process_start_s; /* since the epoch */
} lcpd_metrics_gauges_t;

void lcpd_metrics_init(lcpd_metrics_t *metrics, uint64_t now_ns);
/* A step of step_ns nanoseconds. */
void lcpd_metrics_step(void *metrics, uint64_t step_ns);
/* A request answered. */
void lcpd_metrics_request(lcpd_metrics_t *metrics, const char *call, const char *status);
/* Called about once a second: the real-time factor of the period since the
 * last call, counting the steps since then at timestep seconds each. */
void lcpd_metrics_sample(lcpd_metrics_t *metrics, double timestep, uint64_t now_ns);
/* The text of /metrics, malloc'ed (NULL when out of memory); *length gets
 * its length. */
char *lcpd_metrics_render(const lcpd_metrics_t *metrics, const lcpd_metrics_gauges_t *gauges,
                          size_t *length);
/* The process's resident and virtual memory from /proc/self/statm (false
 * when it cannot be read). */
int lcpd_metrics_process_memory(uint64_t *resident_bytes, uint64_t *virtual_bytes);

#endif
