/* SPDX-License-Identifier: Apache-2.0 */
#include "stream.h"

#include "convert.h"
#include "log.h"

#include <stdio.h>
#include <string.h>

size_t lcpd_stream_topic(const lcpd_sim_t *sim, char *buffer, size_t size) {
  int length = sim->world_name ? snprintf(buffer, size, "w/%s/state", sim->world_name)
                               : snprintf(buffer, size, "state");
  return length < 0 ? 0 : (size_t)length < size ? (size_t)length : size - 1;
}

bool lcpd_stream_frame(lcpd_sim_t *sim, lcpd_arena_t *arena, const lcpd_error_t *arena_error,
                       zmq_msg_t *frame) {
  uint64_t sequence = ++sim->publish_sequence;
  Lcpsim__V1__Sensors sensors;
  Lcpsim__V1__State *state =
      lcpd_new_state_sensed(arena, sim, sim->publish_contacts,
                            lcpd_sensors_from_bits(sim->publish_sensors, &sensors), sequence);
  bool made = false;
  if (!state) {
    LCPD_ERROR("state stream: state %llu needs %s; not published", (unsigned long long)sequence,
               arena_error->message);
  } else {
    state->scene_revision = lcpd_sim_scene_revision(sim); /* set in the stream only */
    if (sim->world_name)
      state->world = (char *)sim->world_name;
    char topic[96];
    size_t topic_length = lcpd_stream_topic(sim, topic, sizeof topic);
    size_t size = lcpsim__v1__state__get_packed_size(state);
    if (zmq_msg_init_size(frame, topic_length + size) == 0) {
      unsigned char *data = zmq_msg_data(frame);
      memcpy(data, topic, topic_length);
      lcpsim__v1__state__pack(state, data + topic_length);
      made = true;
    } else {
      LCPD_ERROR("state stream: out of memory for a %zu-byte state", size);
    }
  }
  lcpd_arena_reset(arena);
  return made;
}
