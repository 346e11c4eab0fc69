/* Built-in scenes: the benchmark scenes of DESIGN.md §7, also used by the
 * physics tests. Each adds its bodies to an existing world (it does not change
 * the world's settings; lcp_scene_settings() gives the ones the table names). */
#ifndef LCPSIM_SCENES_H
#define LCPSIM_SCENES_H

#include "lcpsim/lcpsim.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct lcp_scene_info {
  int32_t bodies;         /* dynamic bodies added */
  int32_t dofs;           /* 6 per free body */
  lcp_body_id top_body;   /* the body whose drift the benchmark reports */
  double top_position[3]; /* its initial position */
  int32_t default_steps;  /* steps of the benchmark run */
} lcp_scene_info_t;

/* Settings of the benchmark table: h = 1/240 s, 20 iterations. */
lcp_world_settings_t lcp_scene_settings(void);

/* Ground plane z = 0 on the world body with friction mu. */
int lcp_scene_ground(lcp_world_t *world, double mu, lcp_geom_id *out_geom);

/* pyramid L: L levels of 0.5 m, 1 kg cubes; level k has L − k cubes centred
 * in x, spacing 0.5 m, y = 0, resting on the ground; μ = 0.6. */
int lcp_scene_pyramid(lcp_world_t *world, int32_t levels, lcp_scene_info_t *info);

/* stack N: N cubes of 0.5 m, 1 kg on top of each other on the ground; μ = 0.6. */
int lcp_scene_stack(lcp_world_t *world, int32_t count, lcp_scene_info_t *info);

/* pile N: N bodies alternating spheres (radius 0.05 m) and cubes (0.1 m), 0.1 kg,
 * in a grid above a 2 m × 2 m walled bin, dropped; μ = 0.5. */
int lcp_scene_pile(lcp_world_t *world, int32_t count, lcp_scene_info_t *info);

#ifdef __cplusplus
}
#endif
#endif
