/* SPDX-License-Identifier: Apache-2.0 */
/* GetScene: the geoms of the world as the engine holds them (the built-in
 * world's ground, arm, table and box with their sizes; meshes as convex
 * hulls with outward triangles), and the scene revision, which changes when
 * robots or bodies come and go and not when the world steps. */
#include "daemon_harness.h"

#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#define FAKE_PACKAGE_DIR LCP_TEST_DATA_DIR "/packages/fake_robot_description"
#define MESHBOT FAKE_PACKAGE_DIR "/urdf/meshbot.urdf"

static Lcpsim__V1__Reply *get_scene(void *c, uint64_t id) {
  Lcpsim__V1__GetSceneRequest body = LCPSIM__V1__GET_SCENE_REQUEST__INIT;
  Lcpsim__V1__Request r = request_of(id, LCPSIM__V1__REQUEST__CALL_GET_SCENE, &body);
  Lcpsim__V1__Reply *reply = rpc(c, &r);
  assert_ok(reply, id, LCPSIM__V1__REPLY__RESULT_GET_SCENE);
  assert_non_null(reply->get_scene->scene);
  assert_non_null(reply->get_scene->info);
  return reply;
}

static const Lcpsim__V1__BodyScene *body_scene(const Lcpsim__V1__Scene *s, const char *name) {
  for (size_t i = 0; i < s->n_bodies; ++i)
    if (strcmp(s->bodies[i]->name, name) == 0)
      return s->bodies[i];
  fail_msg("no body '%s' in the scene", name);
  return NULL;
}

static const Lcpsim__V1__RobotScene *robot_scene(const Lcpsim__V1__Scene *s, const char *name) {
  for (size_t i = 0; i < s->n_robots; ++i)
    if (strcmp(s->robots[i]->name, name) == 0)
      return s->robots[i];
  fail_msg("no robot '%s' in the scene", name);
  return NULL;
}

static void assert_box(const Lcpsim__V1__Geom *g, double hx, double hy, double hz) {
  assert_int_equal(g->type, LCPSIM__V1__GEOM__TYPE__BOX);
  assert_non_null(g->half_extents);
  assert_float_equal(g->half_extents->x, hx, 1e-12);
  assert_float_equal(g->half_extents->y, hy, 1e-12);
  assert_float_equal(g->half_extents->z, hz, 1e-12);
}

static void test_builtin_world(void **state) {
  (void)state;
  daemon_proc d;
  daemon_start(&d, (const char *[]){NULL});
  void *c = connect_req(d.rep);
  Lcpsim__V1__Reply *reply = get_scene(c, 1);
  const Lcpsim__V1__Scene *s = reply->get_scene->scene;
  /* The ground: one plane fixed to the world, its frame at the origin. */
  assert_int_equal(s->n_world_geoms, 1);
  assert_int_equal(s->world_geoms[0]->type, LCPSIM__V1__GEOM__TYPE__PLANE);
  assert_float_equal(s->world_geoms[0]->pose->position->z, 0.0, 0.0);
  /* The arm: its 8 links in RobotInfo.links order, each with a geom. */
  const Lcpsim__V1__RobotScene *arm = robot_scene(s, "arm7");
  const Lcpsim__V1__RobotInfo *info = reply->get_scene->info->robots[0];
  assert_string_equal(info->name, "arm7");
  assert_int_equal(arm->n_links, 8);
  assert_int_equal(info->n_links, 8);
  for (size_t k = 0; k < arm->n_links; ++k) {
    assert_string_equal(arm->links[k]->name, info->links[k]);
    if (arm->links[k]->n_geoms < 1)
      fail_msg("arm link %s has no geom", arm->links[k]->name);
    assert_int_not_equal(arm->links[k]->geoms[0]->type, LCPSIM__V1__GEOM__TYPE__GEOM_UNSPECIFIED);
  }
  /* The table (static, 0.6 x 0.8 x 0.4 m) and the 0.1 m box, in State.bodies order. */
  assert_int_equal(s->n_bodies, 2);
  const Lcpsim__V1__BodyScene *table = body_scene(s, "table"), *box = body_scene(s, "box");
  assert_true(table->is_static);
  assert_false(box->is_static);
  assert_int_equal(table->n_geoms, 1);
  assert_int_equal(box->n_geoms, 1);
  assert_box(table->geoms[0], 0.3, 0.4, 0.2);
  assert_box(box->geoms[0], 0.05, 0.05, 0.05);
  assert_string_equal(s->bodies[0]->name, reply->get_scene->info->bodies[0]->name);
  assert_string_equal(s->bodies[1]->name, reply->get_scene->info->bodies[1]->name);
  reply_free(&reply);
  close_socket(&c);
  daemon_stop(&d);
}

/* Every triangle of a hull faces out: all vertices lie on or behind its
 * plane, n · (v − a) ≤ 1e-9 |n| with n = (b − a) × (c − a), and the
 * vertices' mean lies strictly behind it. */
static void assert_convex_hull(const Lcpsim__V1__Geom *g) {
  assert_int_equal(g->type, LCPSIM__V1__GEOM__TYPE__CONVEX);
  assert_true(g->n_vertices >= 12 && g->n_vertices % 3 == 0);
  assert_true(g->n_triangles >= 12 && g->n_triangles % 3 == 0);
  size_t nv = g->n_vertices / 3;
  const double *v = g->vertices;
  double mean[3] = {0, 0, 0};
  for (size_t i = 0; i < nv; ++i)
    for (int k = 0; k < 3; ++k)
      mean[k] += v[3 * i + k] / (double)nv;
  for (size_t t = 0; t < g->n_triangles; t += 3) {
    for (int k = 0; k < 3; ++k)
      assert_true(g->triangles[t + k] >= 0 && (size_t)g->triangles[t + k] < nv);
    const double *a = v + 3 * g->triangles[t], *b = v + 3 * g->triangles[t + 1],
                 *c = v + 3 * g->triangles[t + 2];
    double u[3] = {b[0] - a[0], b[1] - a[1], b[2] - a[2]};
    double w[3] = {c[0] - a[0], c[1] - a[1], c[2] - a[2]};
    double n[3] = {u[1] * w[2] - u[2] * w[1], u[2] * w[0] - u[0] * w[2], u[0] * w[1] - u[1] * w[0]};
    double length = sqrt(n[0] * n[0] + n[1] * n[1] + n[2] * n[2]);
    assert_true(length > 0.0);
    for (size_t i = 0; i < nv; ++i) {
      const double *p = v + 3 * i;
      double side = n[0] * (p[0] - a[0]) + n[1] * (p[1] - a[1]) + n[2] * (p[2] - a[2]);
      if (side > 1e-9 * length)
        fail_msg("vertex %zu is %g in front of triangle %zu", i, side / length, t / 3);
    }
    double centre = n[0] * (mean[0] - a[0]) + n[1] * (mean[1] - a[1]) + n[2] * (mean[2] - a[2]);
    assert_true(centre < 0.0);
  }
}

static void test_meshes_are_convex(void **state) {
  (void)state;
  daemon_proc d;
  daemon_start(&d, (const char *[]){"--package-path", "fake_robot=" FAKE_PACKAGE_DIR, "--urdf",
                                    MESHBOT, NULL});
  void *c = connect_req(d.rep);
  Lcpsim__V1__Reply *reply = get_scene(c, 1);
  const Lcpsim__V1__RobotScene *bot = robot_scene(reply->get_scene->scene, "meshbot");
  /* base: the OBJ box and the welded camera's COLLADA cube; arm: the dented
   * OBJ cube (its hull) and the welded tool's STL tetrahedron. */
  assert_int_equal(bot->n_links, 2);
  assert_string_equal(bot->links[0]->name, "base");
  assert_int_equal(bot->links[0]->n_geoms, 2);
  assert_int_equal(bot->links[1]->n_geoms, 2);
  for (size_t k = 0; k < 2; ++k)
    for (size_t g = 0; g < 2; ++g)
      if (!(k == 1 && g == 1))
        assert_convex_hull(bot->links[k]->geoms[g]);
  /* The tetrahedron: 4 vertices, 4 faces, outward too. */
  const Lcpsim__V1__Geom *tetra = bot->links[1]->geoms[1];
  assert_int_equal(tetra->type, LCPSIM__V1__GEOM__TYPE__CONVEX);
  assert_int_equal(tetra->n_vertices, 12);
  assert_int_equal(tetra->n_triangles, 12);
  /* The base's box is 0.2 x 0.1 x 0.1 m. */
  const Lcpsim__V1__Geom *box = bot->links[0]->geoms[0];
  double lo[3] = {INFINITY, INFINITY, INFINITY}, hi[3] = {-INFINITY, -INFINITY, -INFINITY};
  for (size_t i = 0; i < box->n_vertices; ++i) {
    lo[i % 3] = fmin(lo[i % 3], box->vertices[i]);
    hi[i % 3] = fmax(hi[i % 3], box->vertices[i]);
  }
  assert_float_equal(hi[0] - lo[0], 0.2, 1e-9);
  assert_float_equal(hi[1] - lo[1], 0.1, 1e-9);
  assert_float_equal(hi[2] - lo[2], 0.1, 1e-9);
  assert_int_equal(box->n_vertices, 24);
  assert_int_equal(box->n_triangles, 36);
  reply_free(&reply);
  close_socket(&c);
  daemon_stop(&d);
}

static uint64_t revision(void *c, uint64_t id) {
  Lcpsim__V1__Reply *reply = get_scene(c, id);
  uint64_t r = reply->get_scene->scene->revision;
  reply_free(&reply);
  /* Replies leave State.scene_revision 0, as their sequence (the stream
   * and recordings carry it: test_daemon_record). */
  Lcpsim__V1__Reply *s = call_get_state(c, id + 1000, false);
  assert_int_equal(s->get_state->state->scene_revision, 0);
  reply_free(&s);
  return r;
}

static void test_revision(void **state) {
  (void)state;
  daemon_proc d;
  daemon_start(&d, (const char *[]){NULL});
  void *c = connect_req(d.rep);
  uint64_t r0 = revision(c, 1);
  call_step(c, 2, 10);
  assert_int_equal(revision(c, 3), r0);
  Lcpsim__V1__LoadModelRequest load = LCPSIM__V1__LOAD_MODEL_REQUEST__INIT;
  load.source_case = LCPSIM__V1__LOAD_MODEL_REQUEST__SOURCE_URDF_TEXT;
  load.urdf_text = (char *)"<robot name='ball'><link name='b'><inertial><mass value='1'/>"
                           "<inertia ixx='0.01' iyy='0.01' izz='0.01' ixy='0' ixz='0' iyz='0'/>"
                           "</inertial><collision><geometry><sphere radius='0.1'/></geometry>"
                           "</collision></link></robot>";
  Lcpsim__V1__Request r = request_of(4, LCPSIM__V1__REQUEST__CALL_LOAD_MODEL, &load);
  Lcpsim__V1__Reply *reply = rpc(c, &r);
  assert_ok(reply, 4, LCPSIM__V1__REPLY__RESULT_LOAD_MODEL);
  reply_free(&reply);
  uint64_t r1 = revision(c, 5);
  assert_true(r1 != r0);
  reply = get_scene(c, 6);
  const Lcpsim__V1__RobotScene *ball = robot_scene(reply->get_scene->scene, "ball");
  assert_int_equal(ball->links[0]->geoms[0]->type, LCPSIM__V1__GEOM__TYPE__SPHERE);
  assert_float_equal(ball->links[0]->geoms[0]->radius, 0.1, 1e-15);
  reply_free(&reply);
  Lcpsim__V1__RemoveRequest remove = LCPSIM__V1__REMOVE_REQUEST__INIT;
  remove.name = (char *)"box";
  r = request_of(7, LCPSIM__V1__REQUEST__CALL_REMOVE, &remove);
  reply = rpc(c, &r);
  assert_ok(reply, 7, LCPSIM__V1__REPLY__RESULT_REMOVE);
  reply_free(&reply);
  uint64_t r2 = revision(c, 8);
  assert_true(r2 != r1 && r2 != r0);
  reply = get_scene(c, 9);
  assert_int_equal(reply->get_scene->scene->n_bodies, 1);
  reply_free(&reply);
  call_step(c, 10, 5);
  assert_int_equal(revision(c, 11), r2);
  Lcpsim__V1__ResetRequest reset = LCPSIM__V1__RESET_REQUEST__INIT;
  r = request_of(12, LCPSIM__V1__REQUEST__CALL_RESET, &reset);
  reply = rpc(c, &r);
  assert_ok(reply, 12, LCPSIM__V1__REPLY__RESULT_RESET);
  reply_free(&reply);
  uint64_t r3 = revision(c, 13);
  assert_true(r3 != r2 && r3 != r1 && r3 != r0);
  close_socket(&c);
  daemon_stop(&d);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_builtin_world),
      cmocka_unit_test(test_meshes_are_convex),
      cmocka_unit_test(test_revision),
  };
  int failed = cmocka_run_group_tests(tests, NULL, NULL);
  test_context_destroy();
  return failed;
}
