/* SPDX-License-Identifier: Apache-2.0 */
#include "metrics.h"

#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const double STEP_BOUNDS[LCPD_STEP_BUCKETS] = {1e-5, 2.5e-5, 5e-5, 1e-4, 2.5e-4, 5e-4,
                                                      1e-3, 2.5e-3, 5e-3, 1e-2, 2.5e-2, 5e-2,
                                                      0.1,  0.25,   0.5,  1.0};

void lcpd_metrics_init(lcpd_metrics_t *metrics, uint64_t now_ns) {
  *metrics = (lcpd_metrics_t){.sampled_wall_ns = now_ns};
}

void lcpd_metrics_step(void *user, uint64_t step_ns) {
  lcpd_metrics_t *metrics = user;
  double seconds = (double)step_ns * 1e-9;
  metrics->steps_total++;
  metrics->step_seconds_sum += seconds;
  int bucket = 0;
  while (bucket < LCPD_STEP_BUCKETS && seconds > STEP_BOUNDS[bucket])
    bucket++;
  metrics->step_buckets[bucket]++;
}

void lcpd_metrics_request(lcpd_metrics_t *metrics, const char *call, const char *status) {
  for (int i = 0; i < metrics->request_kinds; ++i) {
    lcpd_request_count_t *kind = &metrics->requests[i];
    /* The names are static strings: the same pointer for the same name. */
    if (kind->call == call && kind->status == status) {
      kind->count++;
      return;
    }
  }
  if (metrics->request_kinds == LCPD_MAX_REQUEST_KINDS - 1)
    call = "other";
  if (metrics->request_kinds == LCPD_MAX_REQUEST_KINDS) {
    metrics->requests[LCPD_MAX_REQUEST_KINDS - 1].count++;
    return;
  }
  metrics->requests[metrics->request_kinds++] =
      (lcpd_request_count_t){.call = call, .status = status, .count = 1};
}

void lcpd_metrics_sample(lcpd_metrics_t *metrics, double timestep, uint64_t now_ns) {
  uint64_t steps = metrics->steps_total - metrics->sampled_steps;
  metrics->simulated_seconds_total += (double)steps * timestep;
  double wall = (double)(now_ns - metrics->sampled_wall_ns) * 1e-9;
  if (wall > 0)
    metrics->realtime_factor =
        (metrics->simulated_seconds_total - metrics->sampled_simulated) / wall;
  metrics->sampled_steps = metrics->steps_total;
  metrics->sampled_wall_ns = now_ns;
  metrics->sampled_simulated = metrics->simulated_seconds_total;
}

/* ---- the text ---- */

typedef struct text {
  char *data;
  size_t length, capacity;
  int failed;
} text_t;

static void add(text_t *t, const char *format, ...) {
  if (t->failed)
    return;
  for (;;) {
    va_list args;
    va_start(args, format);
    int n = vsnprintf(t->data + t->length, t->capacity - t->length, format, args);
    va_end(args);
    if (n < 0) {
      t->failed = 1;
      return;
    }
    if ((size_t)n < t->capacity - t->length) {
      t->length += (size_t)n;
      return;
    }
    size_t capacity = 2 * t->capacity + (size_t)n;
    char *grown = realloc(t->data, capacity);
    if (!grown) {
      t->failed = 1;
      return;
    }
    t->data = grown;
    t->capacity = capacity;
  }
}

static void add_header(text_t *t, const char *name, const char *type, const char *help) {
  add(t, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, type);
}

char *lcpd_metrics_render(const lcpd_metrics_t *m, const lcpd_metrics_gauges_t *g, size_t *length) {
  text_t t = {.data = malloc(4096), .capacity = 4096};
  if (!t.data)
    return NULL;
  add_header(&t, "lcpsim_steps_total", "counter", "Simulation steps taken.");
  add(&t, "lcpsim_steps_total %llu\n", (unsigned long long)m->steps_total);
  add_header(&t, "lcpsim_step_seconds", "histogram", "Wall time of one simulation step.");
  uint64_t cumulative = 0;
  for (int i = 0; i < LCPD_STEP_BUCKETS; ++i) {
    cumulative += m->step_buckets[i];
    add(&t, "lcpsim_step_seconds_bucket{le=\"%g\"} %llu\n", STEP_BOUNDS[i],
        (unsigned long long)cumulative);
  }
  cumulative += m->step_buckets[LCPD_STEP_BUCKETS];
  add(&t, "lcpsim_step_seconds_bucket{le=\"+Inf\"} %llu\n", (unsigned long long)cumulative);
  add(&t, "lcpsim_step_seconds_sum %.9g\n", m->step_seconds_sum);
  add(&t, "lcpsim_step_seconds_count %llu\n", (unsigned long long)cumulative);
  add_header(&t, "lcpsim_simulated_seconds_total", "counter",
             "Simulated time stepped (steps times the timestep), as of the last sample.");
  add(&t, "lcpsim_simulated_seconds_total %.9g\n", m->simulated_seconds_total);
  add_header(&t, "lcpsim_realtime_factor", "gauge",
             "Simulated seconds per wall-clock second over the last second.");
  add(&t, "lcpsim_realtime_factor %.6g\n", m->realtime_factor);
  add_header(&t, "lcpsim_requests_total", "counter", "Requests answered, by call and status.");
  for (int i = 0; i < m->request_kinds; ++i)
    add(&t, "lcpsim_requests_total{call=\"%s\",status=\"%s\"} %llu\n", m->requests[i].call,
        m->requests[i].status, (unsigned long long)m->requests[i].count);
  add_header(&t, "lcpsim_clients", "gauge", "Connected ZeroMQ peers of the request socket.");
  add(&t, "lcpsim_clients %lld\n", (long long)g->clients);
  add_header(&t, "lcpsim_stream_subscribers", "gauge",
             "Viewer WebSocket clients (the PUB socket's subscribers cannot be counted).");
  add(&t, "lcpsim_stream_subscribers %lld\n", (long long)g->stream_subscribers);
  add_header(&t, "lcpsim_viewer_frames_sent_total", "counter", "States sent to viewers.");
  add(&t, "lcpsim_viewer_frames_sent_total %llu\n", (unsigned long long)m->viewer_frames_sent);
  add_header(&t, "lcpsim_viewer_frames_dropped_total", "counter",
             "States not sent to a viewer because its previous one was still unsent.");
  add(&t, "lcpsim_viewer_frames_dropped_total %llu\n",
      (unsigned long long)m->viewer_frames_dropped);
  add_header(&t, "process_resident_memory_bytes", "gauge", "Resident memory size in bytes.");
  add(&t, "process_resident_memory_bytes %llu\n", (unsigned long long)g->resident_bytes);
  add_header(&t, "process_virtual_memory_bytes", "gauge", "Virtual memory size in bytes.");
  add(&t, "process_virtual_memory_bytes %llu\n", (unsigned long long)g->virtual_bytes);
  add_header(&t, "process_start_time_seconds", "gauge",
             "Start time of the process since the Unix epoch in seconds.");
  add(&t, "process_start_time_seconds %.3f\n", g->process_start_s);
  if (t.failed) {
    free(t.data);
    return NULL;
  }
  *length = t.length;
  return t.data;
}

int lcpd_metrics_process_memory(uint64_t *resident_bytes, uint64_t *virtual_bytes) {
  *resident_bytes = *virtual_bytes = 0;
  int fd = open("/proc/self/statm", O_RDONLY);
  if (fd < 0)
    return 0;
  char buffer[128];
  ssize_t n = read(fd, buffer, sizeof buffer - 1);
  close(fd);
  if (n <= 0)
    return 0;
  buffer[n] = '\0';
  unsigned long long pages_virtual = 0, pages_resident = 0;
  if (sscanf(buffer, "%llu %llu", &pages_virtual, &pages_resident) != 2)
    return 0;
  long page = sysconf(_SC_PAGESIZE);
  *resident_bytes = pages_resident * (uint64_t)page;
  *virtual_bytes = pages_virtual * (uint64_t)page;
  return 1;
}
