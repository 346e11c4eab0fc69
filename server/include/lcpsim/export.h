/* SPDX-License-Identifier: Apache-2.0 */
/* Which of lcpsim's functions a shared library exports.
 *
 * The libraries are built with hidden visibility (-fvisibility=hidden): a
 * function is exported only when it is declared between LCP_API_BEGIN and
 * LCP_API_END, as the public headers' declarations are. The engine's internal
 * functions then stay out of the dynamic symbol table, where they could clash
 * with a program's own symbols and would become part of the ABI. A static
 * library keeps every symbol, as usual. */
#ifndef LCPSIM_EXPORT_H
#define LCPSIM_EXPORT_H

#if defined(__GNUC__) || defined(__clang__)
#define LCP_API_BEGIN _Pragma("GCC visibility push(default)")
#define LCP_API_END _Pragma("GCC visibility pop")
#else
#define LCP_API_BEGIN
#define LCP_API_END
#endif

#endif
