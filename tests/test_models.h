/* SPDX-License-Identifier: Apache-2.0 */
/* Small robots written as URDF text, shared by the engine's unit tests and
 * the daemon's (one through lcp_urdf_load_string, the other as LoadModel's
 * urdf_text). */
#ifndef LCP_TEST_MODELS_H
#define LCP_TEST_MODELS_H

/* A floating pendulum: a 1 kg base and a 1 kg bob 0.5 m below it on a
 * continuous joint about y. */
#define TEST_FLOATING_PENDULUM_URDF                                                                \
  "<robot name=\"pendulum\">"                                                                      \
  "<link name=\"base\"><inertial><mass value=\"1\"/>"                                              \
  "<inertia ixx=\"0.01\" iyy=\"0.01\" izz=\"0.01\" ixy=\"0\" ixz=\"0\" iyz=\"0\"/></inertial>"     \
  "</link>"                                                                                        \
  "<link name=\"bob\"><inertial><origin xyz=\"0 0 -0.5\"/><mass value=\"1\"/>"                     \
  "<inertia ixx=\"0.01\" iyy=\"0.01\" izz=\"0.01\" ixy=\"0\" ixz=\"0\" iyz=\"0\"/></inertial>"     \
  "</link>"                                                                                        \
  "<joint name=\"swing\" type=\"continuous\"><parent link=\"base\"/><child link=\"bob\"/>"         \
  "<axis xyz=\"0 1 0\"/></joint>"                                                                  \
  "</robot>"

#endif
